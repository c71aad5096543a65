package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The 8-bit floats (all but the unsigned f8e8m0fnu) live as f16 and bf16 do: a u8
// bit pattern in storage, an f32 in registers that is exactly an f8 value, every op
// computed in f32 and rounded back by integer code (hlo/minifloat.go defines the
// rounding, cpuref follows it). f8e8m0fnu and the 6- and 4-bit floats are not
// lowered (missingFeature).

// f8Format is what the integer code needs of one format.
type f8Format struct {
	mant, bias int
	maxBits    uint32 // magnitude bits of the largest finite value
	overflow   uint32 // what a magnitude beyond it becomes: inf (IEEE-like), NaN (fn, fnuz)
	nan        uint32 // the quiet NaN's bits (without the sign)
	ieee       bool   // exponent all ones is inf/NaN; else only NaN patterns are special
	fnuz       bool   // no -0, and 0x80 is the one NaN; else NaN is S.1…1 (fn)
}

var f8Formats = map[hlo.DType]f8Format{
	hlo.F8E4M3FN:      {mant: 3, bias: 7, maxBits: 0x7e, overflow: 0x7f, nan: 0x7f},
	hlo.F8E5M2:        {mant: 2, bias: 15, maxBits: 0x7b, overflow: 0x7c, nan: 0x7e, ieee: true},
	hlo.F8E4M3:        {mant: 3, bias: 7, maxBits: 0x77, overflow: 0x78, nan: 0x7c, ieee: true},
	hlo.F8E3M4:        {mant: 4, bias: 3, maxBits: 0x6f, overflow: 0x70, nan: 0x78, ieee: true},
	hlo.F8E4M3FNUZ:    {mant: 3, bias: 8, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
	hlo.F8E5M2FNUZ:    {mant: 2, bias: 16, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
	hlo.F8E4M3B11FNUZ: {mant: 3, bias: 11, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
}

// isF8 reports the 8-bit floats code generation handles.
func isF8(dt hlo.DType) bool { _, ok := f8Formats[dt]; return ok }

// f32ToF8 rounds an f32 to the format (ties to even, no saturation) and returns the
// 8 bits in a u32, as hlo.MinifloatFromFloat64 on the f32 value.
func (k *kernel) f32ToF8(v spirv.ID, ft f8Format) spirv.ID {
	f, u := k.f, k.u32
	x := f.Bitcast(k.m.TypeU32(), v)
	sign := f.And(f.ShrL(x, u(24)), u(0x80))
	a := f.And(x, u(0x7fffffff))
	exp := f.ShrL(a, u(23))
	cut := uint32(23 - ft.mant)
	minNormal := uint32(128 - ft.bias) // the f32 exponent of the format's 2^(1-bias)
	// Normal: rebias (127 → bias) and round off the extra mantissa bits; a carry
	// bumps the exponent, and anything past maxBits overflows below.
	normal := k.roundShift(f.ISub(a, u(uint32(127-ft.bias)<<23)), u(cut))
	// Subnormal: the significand in units of 2^(1-bias-mant); long shifts give 0.
	shift := f.ISub(u(uint32(151-ft.bias-ft.mant)), f.Select(f.Greater(exp, u(minNormal-1)), u(minNormal-1), exp))
	shift = f.Select(f.Greater(shift, u(31)), u(31), shift)
	sub := k.roundShift(f.Or(f.And(a, u(0x7fffff)), u(0x800000)), shift)
	r := f.Select(f.GreaterEqual(exp, u(minNormal)), normal, sub)
	r = f.Select(f.Greater(r, u(ft.maxBits)), u(ft.overflow), r)
	r = f.Select(f.Greater(a, u(0x7f800000)), u(ft.nan), r)
	if ft.fnuz { // no -0: a zero drops the sign (the NaN 0x80 already has it)
		sign = f.Select(f.Equal(r, u(0)), u(0), sign)
	}
	return f.Or(sign, r)
}

// f8ToF32 widens the format's bits (in a u32) to an f32 exactly; a NaN becomes the
// quiet f32 NaN of its sign.
func (k *kernel) f8ToF32(h spirv.ID, ft f8Format) spirv.ID {
	f, u := k.f, k.u32
	f32 := k.m.TypeF32()
	expMask := uint32(0x7f >> ft.mant)
	sign := f.Shl(f.And(h, u(0x80)), u(24))
	exp := f.And(f.ShrL(h, u(uint32(ft.mant))), u(expMask))
	mant := f.And(h, u(1<<ft.mant-1))
	normal := f.Or(f.Shl(f.IAdd(exp, u(uint32(127-ft.bias))), u(23)), f.Shl(mant, u(uint32(23-ft.mant))))
	// Subnormal (and zero): mant × 2^(1-bias-mant), exact in f32.
	scale := k.m.F32(float32(1) / float32(uint32(1)<<(ft.bias+ft.mant-1)))
	sub := f.Bitcast(k.m.TypeU32(), f.FMul(f.Convert(f32, mant), scale))
	r := f.Select(f.Equal(exp, u(0)), sub, normal)
	switch {
	case ft.ieee:
		special := f.Select(f.Equal(mant, u(0)), u(0x7f800000), u(0x7fc00000))
		r = f.Select(f.Equal(exp, u(expMask)), special, r)
	case ft.fnuz: // 0x80 widens to -NaN, as ml_dtypes converts it (the sign is set)
		r = f.Select(f.Equal(h, u(0x80)), u(0x7fc00000), r)
	default:
		r = f.Select(f.Equal(f.And(h, u(0x7f)), u(0x7f)), u(0x7fc00000), r)
	}
	return f.Bitcast(f32, f.Or(sign, r))
}

// LowersLowPrecision reports the low-precision dtypes code generation handles (in
// the kernels f8Limit and nibbleLimit allow): a front end refuses the others up
// front.
func LowersLowPrecision(dt hlo.DType) bool { return isF8(dt) || isNibble(dt) }
