package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The low-precision floats (all but the unsigned f8e8m0fnu) live as f16 and bf16
// do: a bit pattern in storage (a u8; f4e2m1fn packed two to a byte, nibble.go), an
// f32 in registers that is exactly a value of the type, every op computed in f32 and
// rounded back by integer code (hlo/minifloat.go defines the rounding, cpuref
// follows it). f8e8m0fnu, unsigned powers of two, has its own pair of functions.

// f8Format is what the integer code needs of one format.
type f8Format struct {
	width      int // total bits: 8, 6 or 4
	mant, bias int
	maxBits    uint32 // magnitude bits of the largest finite value
	overflow   uint32 // what a magnitude beyond it becomes: inf, NaN, or max (mx)
	nan        uint32 // the quiet NaN's bits (without the sign)
	ieee       bool   // exponent all ones is inf/NaN; else only NaN patterns are special
	fnuz       bool   // no -0, and 0x80 is the one NaN
	mx         bool   // no inf, no NaN (f6, f4): overflow saturates, NaN → ml_dtypes' zero
	e8m0       bool   // f8e8m0fnu: 2^(bits-127), 0xff NaN; no sign, zero or subnormals
}

var f8Formats = map[hlo.DType]f8Format{
	hlo.F8E4M3FN:      {width: 8, mant: 3, bias: 7, maxBits: 0x7e, overflow: 0x7f, nan: 0x7f},
	hlo.F8E5M2:        {width: 8, mant: 2, bias: 15, maxBits: 0x7b, overflow: 0x7c, nan: 0x7e, ieee: true},
	hlo.F8E4M3:        {width: 8, mant: 3, bias: 7, maxBits: 0x77, overflow: 0x78, nan: 0x7c, ieee: true},
	hlo.F8E3M4:        {width: 8, mant: 4, bias: 3, maxBits: 0x6f, overflow: 0x70, nan: 0x78, ieee: true},
	hlo.F8E4M3FNUZ:    {width: 8, mant: 3, bias: 8, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
	hlo.F8E5M2FNUZ:    {width: 8, mant: 2, bias: 16, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
	hlo.F8E4M3B11FNUZ: {width: 8, mant: 3, bias: 11, maxBits: 0x7f, overflow: 0x80, nan: 0x80, fnuz: true},
	hlo.F6E2M3FN:      {width: 6, mant: 3, bias: 1, maxBits: 0x1f, overflow: 0x1f, mx: true},
	hlo.F6E3M2FN:      {width: 6, mant: 2, bias: 3, maxBits: 0x1f, overflow: 0x1f, mx: true},
	hlo.F4E2M1FN:      {width: 4, mant: 1, bias: 1, maxBits: 0x7, overflow: 0x7, mx: true},
	hlo.F8E8M0FNU:     {width: 8, bias: 127, maxBits: 0xfe, overflow: 0xff, nan: 0xff, e8m0: true},
}

// isF8 reports the low-precision floats code generation handles (8, 6 and 4 bits).
func isF8(dt hlo.DType) bool { _, ok := f8Formats[dt]; return ok }

func (ft f8Format) signBit() uint32 { return 1 << (ft.width - 1) }

// f32ToF8 rounds an f32 to the format (ties to even, no saturation but in the mx
// types) and returns its bits in a u32, as hlo.MinifloatFromFloat64 on the f32 value.
func (k *kernel) f32ToF8(v spirv.ID, ft f8Format) spirv.ID {
	if ft.e8m0 {
		return k.f32ToE8M0(v)
	}
	f, u := k.f, k.u32
	x := f.Bitcast(k.m.TypeU32(), v)
	sign := f.And(f.ShrL(x, u(uint32(32-ft.width))), u(ft.signBit()))
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
	isNaN := f.Greater(a, u(0x7f800000))
	switch {
	case ft.mx: // ml_dtypes: +NaN becomes the -0 pattern, -NaN +0
		r = f.Select(isNaN, u(0), r)
		sign = f.Select(isNaN, f.Xor(sign, u(ft.signBit())), sign)
	case ft.fnuz: // no -0: a zero drops the sign (the NaN 0x80 already has it)
		r = f.Select(isNaN, u(ft.nan), r)
		sign = f.Select(f.Equal(r, u(0)), u(0), sign)
	default:
		r = f.Select(isNaN, u(ft.nan), r)
	}
	return f.Or(sign, r)
}

// f8ToF32 widens the format's bits (in a u32) to an f32 exactly; a NaN becomes the
// quiet f32 NaN of its sign.
func (k *kernel) f8ToF32(h spirv.ID, ft f8Format) spirv.ID {
	if ft.e8m0 {
		return k.e8m0ToF32(h)
	}
	f, u := k.f, k.u32
	f32 := k.m.TypeF32()
	expMask := (ft.signBit() - 1) >> ft.mant
	sign := f.Shl(f.And(h, u(ft.signBit())), u(uint32(32-ft.width)))
	exp := f.And(f.ShrL(h, u(uint32(ft.mant))), u(expMask))
	mant := f.And(h, u(1<<ft.mant-1))
	normal := f.Or(f.Shl(f.IAdd(exp, u(uint32(127-ft.bias))), u(23)), f.Shl(mant, u(uint32(23-ft.mant))))
	// Subnormal (and zero): mant × 2^(1-bias-mant), exact in f32.
	scale := k.m.F32(float32(1) / float32(uint32(1)<<(ft.bias+ft.mant-1)))
	sub := f.Bitcast(k.m.TypeU32(), f.FMul(f.Convert(f32, mant), scale))
	r := f.Select(f.Equal(exp, u(0)), sub, normal)
	switch {
	case ft.mx: // every pattern is a number
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

// f32ToE8M0 rounds a positive f32 to the nearest power of two, ties (1.5·2^e) up as
// ml_dtypes does; f8e8m0fnu shares f32's exponent bias, so a normal f32's result is
// its exponent field, plus one when the mantissa's top bit is set. An f32 subnormal
// is below 2^-126: 0x01 from 1.5·2^-127 up, else 0x00 (2^-127, the smallest: there
// is no zero). Zero, negative values, inf and NaN become NaN (0xff), as does a
// result beyond 2^127.
func (k *kernel) f32ToE8M0(v spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	x := f.Bitcast(k.m.TypeU32(), v)
	exp := f.ShrL(x, u(23)) // the sign bit makes a negative value's exp ≥ 256
	mant := f.And(x, u(0x7fffff))
	normal := f.IAdd(exp, f.Select(f.GreaterEqual(mant, u(0x400000)), u(1), u(0)))
	sub := f.Select(f.GreaterEqual(mant, u(0x600000)), u(1), u(0))
	r := f.Select(f.Equal(exp, u(0)), sub, normal)
	bad := f.LogicalOr(f.Greater(r, u(0xfe)), f.GreaterEqual(exp, u(0xff)))
	bad = f.LogicalOr(bad, f.Equal(f.And(x, u(0x7fffffff)), u(0)))
	return f.Select(bad, u(0xff), r)
}

// e8m0ToF32 widens f8e8m0fnu bits (in a u32) to 2^(bits-127) as an f32: the bits
// are the f32 exponent field, 0x00 is the f32 subnormal 2^-127, 0xff a quiet NaN.
func (k *kernel) e8m0ToF32(h spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	r := f.Select(f.Equal(h, u(0)), u(0x400000), f.Shl(h, u(23)))
	r = f.Select(f.Equal(h, u(0xff)), u(0x7fc00000), r)
	return f.Bitcast(k.m.TypeF32(), r)
}

// f64ToF32Odd narrows an f64 to f32 rounding to odd: an inexact result becomes the
// odd one of the two f32 values around it, whatever rounding the conversion did.
// Rounded again to a format of at most 22 significand bits (every low-precision
// float), that gives the single rounding of the f64 value, as cpuref converts
// (Boldo and Melquiond, "When double rounding is odd"; ml_dtypes narrows wide types
// so). NaN passes; ±inf stands for an overflow of f32, which every such format
// overflows too.
func (k *kernel) f64ToF32Odd(v spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	r := f.Convert(k.m.TypeF32(), v)
	back := f.Convert(k.m.TypeOf(v), r)
	bits := f.Bitcast(k.m.TypeU32(), r)
	inexact := f.LogicalAnd(f.NotEqual(back, v), f.LogicalNot(f.IsNan(v)))
	even := f.Equal(f.And(bits, u(1)), u(0))
	short := f.Less(f.GLSL(spirv.GLSLFAbs, back), f.GLSL(spirv.GLSLFAbs, v)) // |r| < |v|
	odd := f.Select(short, f.IAdd(bits, u(1)), f.ISub(bits, u(1)))
	bits = f.Select(f.LogicalAnd(inexact, even), odd, bits)
	return f.Bitcast(k.m.TypeF32(), bits)
}

// LowersLowPrecision reports the low-precision dtypes code generation handles (in
// the kernels f8Limit and nibbleLimit allow; all of them now): a front end refuses
// the others up front.
func LowersLowPrecision(dt hlo.DType) bool { return isF8(dt) || isNibble(dt) }
