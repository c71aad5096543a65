package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Element types live in two forms. In a storage buffer an element has its dtype's
// exact width (storeType): pred is a u8 holding 0 or 1, and f16 and bf16 are u16 bit
// patterns, so that neither needs a 16-bit float type (bf16 has none in SPIR-V) and
// every conversion rounds the way cpuref does, by integer code we control rather than
// by a driver's choice of rounding mode. In registers (regType) pred is a bool and
// f16/bf16 are f32 values that are exactly representable in the narrow type: every
// operation computes in f32 and rounds back (round), which is XLA's semantics for
// these types. The other dtypes are their own SPIR-V type in both forms.

// regType is the SPIR-V type a dtype's values have in registers.
func (k *kernel) regType(dt hlo.DType) spirv.ID {
	m := k.m
	switch dt {
	case hlo.Pred:
		return m.TypeBool()
	case hlo.F16, hlo.BF16, hlo.F32:
		return m.TypeF32()
	case hlo.F64:
		return m.TypeFloat(64)
	case hlo.C64, hlo.C128:
		return k.complexTypeOf(dt)
	case hlo.F8E4M3FN, hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ, hlo.F8E4M3B11FNUZ,
		hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN, hlo.F8E8M0FNU:
		return m.TypeF32() // f8.go
	case hlo.S4, hlo.U4, hlo.S2, hlo.U2: // sign- or zero-extended (nibble.go)
		return m.TypeInt(32, dt.IsSigned())
	}
	return m.TypeInt(dt.Bits(), dt.IsSigned())
}

// storeType is the SPIR-V element type of a dtype's storage buffer.
func (k *kernel) storeType(dt hlo.DType) spirv.ID {
	switch {
	case dt == hlo.Pred, isF8(dt), isPacked(dt): // packed: several per byte (nibble.go)
		return k.m.TypeInt(8, false)
	case dt == hlo.F16, dt == hlo.BF16:
		return k.m.TypeInt(16, false)
	}
	return k.regType(dt)
}

// isNarrowFloat reports the dtypes computed in f32 and rounded back.
func isNarrowFloat(dt hlo.DType) bool { return dt == hlo.F16 || dt == hlo.BF16 }

// load reads element i of buffer b (holding dt) as a register value.
func (k *kernel) load(b spirv.Buffer, i spirv.ID, dt hlo.DType) spirv.ID {
	if isPacked(dt) {
		return k.loadNibble(b, i, dt)
	}
	return k.fromStore(k.f.LoadElem(b, i), dt)
}

// store writes register value v (of dt) to element i of buffer b. Packed types are
// written a byte at a time by the kernels that produce them (storeNibbles).
func (k *kernel) store(b spirv.Buffer, i, v spirv.ID, dt hlo.DType) {
	if isPacked(dt) {
		k.failf("a store of one %v element, which shares its byte with another", dt)
		return
	}
	k.f.StoreElem(b, i, k.toStore(v, dt))
}

// fromStore converts a storage value to its register form.
func (k *kernel) fromStore(v spirv.ID, dt hlo.DType) spirv.ID {
	f, m := k.f, k.m
	switch dt {
	case hlo.Pred:
		return f.NotEqual(v, m.ConstOf(m.TypeOf(v), 0))
	case hlo.F16:
		return k.f16ToF32(f.Convert(m.TypeU32(), v))
	case hlo.BF16:
		return k.bf16ToF32(f.Convert(m.TypeU32(), v))
	}
	if ft, ok := f8Formats[dt]; ok {
		return k.f8ToF32(f.Convert(m.TypeU32(), v), ft)
	}
	return v
}

// toStore converts a register value to its storage form.
func (k *kernel) toStore(v spirv.ID, dt hlo.DType) spirv.ID {
	f, m := k.f, k.m
	st := k.storeType(dt)
	switch dt {
	case hlo.Pred:
		return f.Select(v, m.ConstOf(st, 1), m.ConstOf(st, 0))
	case hlo.F16:
		return f.Convert(st, k.f32ToF16(v))
	case hlo.BF16:
		return f.Convert(st, k.f32ToBF16(v))
	}
	if ft, ok := f8Formats[dt]; ok {
		return f.Convert(st, k.f32ToF8(v, ft))
	}
	return v
}

// round rounds an f32 register value to the nearest f16, bf16 or 8-bit float value (ties to
// even) for those dtypes, and returns other values unchanged.
func (k *kernel) round(v spirv.ID, dt hlo.DType) spirv.ID {
	switch dt {
	case hlo.F16:
		return k.f16ToF32(k.f32ToF16(v))
	case hlo.BF16:
		return k.bf16ToF32(k.f32ToBF16(v))
	}
	if ft, ok := f8Formats[dt]; ok {
		return k.f8ToF32(k.f32ToF8(v, ft), ft)
	}
	return v
}

// bitsOf returns a register value's bit pattern as an unsigned integer of the
// dtype's width (pred: 0 or 1 in a u8).
func (k *kernel) bitsOf(v spirv.ID, dt hlo.DType) spirv.ID {
	m := k.m
	ut := m.TypeInt(k.intWidth(dt), false)
	switch {
	case isNibble(dt): // the element's bits, in a u32
		return k.nibbleBits(v, dt)
	case dt == hlo.Pred:
		return k.toStore(v, dt)
	case dt == hlo.F16:
		return k.f.Convert(ut, k.f32ToF16(v))
	case dt == hlo.BF16:
		return k.f.Convert(ut, k.f32ToBF16(v))
	case isF8(dt):
		return k.f.Convert(ut, k.f32ToF8(v, f8Formats[dt]))
	case m.TypeOf(v) == ut:
		return v
	}
	return k.f.Bitcast(ut, v)
}

// fromBits is bitsOf's inverse: an unsigned integer of the dtype's width to a
// register value.
func (k *kernel) fromBits(b spirv.ID, dt hlo.DType) spirv.ID {
	switch {
	case dt == hlo.Pred, dt == hlo.F16, dt == hlo.BF16, isF8(dt):
		return k.fromStore(b, dt)
	case isNibble(dt):
		return k.wrapNibble(k.f.Convert(k.m.TypeU32(), b), dt)
	}
	if t := k.regType(dt); t != k.m.TypeOf(b) {
		return k.f.Bitcast(t, b)
	}
	return b
}

// f32ToF16 rounds an f32 to binary16 with ties to even and returns the 16 bits in a
// u32; the same algorithm as hlo.F16FromFloat32 (NaN stays a quiet NaN with the top
// payload bits, overflow gives infinity, small values become subnormal or zero).
func (k *kernel) f32ToF16(v spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	x := f.Bitcast(k.m.TypeU32(), v)
	sign := f.And(f.ShrL(x, u(16)), u(0x8000))
	a := f.And(x, u(0x7fffffff))
	exp := f.ShrL(a, u(23))
	mant := f.And(a, u(0x7fffff))
	nan := f.Or(u(0x7e00), f.ShrL(mant, u(13)))
	// Normal half: rebias the exponent (127 → 15) and round off 13 mantissa bits; a
	// carry correctly bumps the exponent, up to infinity.
	normal := k.roundShift(f.ISub(a, u(0x38000000)), u(13))
	// Subnormal half: the significand in units of 2^-24; shifts past 24 give 0.
	shift := f.ISub(u(126), f.Select(f.Greater(exp, u(126)), u(126), exp))
	shift = f.Select(f.Greater(shift, u(31)), u(31), shift)
	sub := k.roundShift(f.Or(mant, u(0x800000)), shift)
	r := f.Select(f.GreaterEqual(exp, u(113)), normal, sub)
	r = f.Select(f.GreaterEqual(exp, u(143)), u(0x7c00), r)
	r = f.Select(f.Greater(a, u(0x7f800000)), nan, r)
	return f.Or(sign, r)
}

// roundShift is x >> s (u32, 1 <= s <= 31) rounded to nearest, ties to even.
func (k *kernel) roundShift(x, s spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	q := f.ShrL(x, s)
	one := u(1)
	rem := f.And(x, f.ISub(f.Shl(one, s), one))
	half := f.Shl(one, f.ISub(s, one))
	odd := f.Equal(f.And(q, one), one)
	up := f.LogicalOr(f.Greater(rem, half), f.LogicalAnd(f.Equal(rem, half), odd))
	return f.IAdd(q, f.Select(up, one, u(0)))
}

// f16ToF32 widens binary16 bits (in a u32) to an f32 exactly.
func (k *kernel) f16ToF32(h spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	f32 := k.m.TypeF32()
	sign := f.Shl(f.And(h, u(0x8000)), u(16))
	exp := f.And(f.ShrL(h, u(10)), u(0x1f))
	mant := f.And(h, u(0x3ff))
	special := f.Or(u(0x7f800000), f.Shl(mant, u(13)))
	normal := f.Or(f.Shl(f.IAdd(exp, u(112)), u(23)), f.Shl(mant, u(13)))
	// Subnormal (and zero): mant × 2^-24, exact in f32.
	subF := f.FMul(f.Convert(f32, mant), k.m.F32(1.0/(1<<24)))
	sub := f.Bitcast(k.m.TypeU32(), subF)
	r := f.Select(f.Equal(exp, u(0)), sub, normal)
	r = f.Select(f.Equal(exp, u(31)), special, r)
	return f.Bitcast(f32, f.Or(sign, r))
}

// f32ToBF16 rounds an f32 to bfloat16 (ties to even, NaN kept quiet) and returns the
// 16 bits in a u32, as hlo.BF16FromFloat32.
func (k *kernel) f32ToBF16(v spirv.ID) spirv.ID {
	f, u := k.f, k.u32
	x := f.Bitcast(k.m.TypeU32(), v)
	nan := f.Or(f.ShrL(x, u(16)), u(0x40))
	r := k.roundShift(x, u(16))
	isNaN := f.Greater(f.And(x, u(0x7fffffff)), u(0x7f800000))
	return f.Select(isNaN, nan, r)
}

// bf16ToF32 widens bfloat16 bits (in a u32) to an f32.
func (k *kernel) bf16ToF32(b spirv.ID) spirv.ID {
	return k.f.Bitcast(k.m.TypeF32(), k.f.Shl(b, k.u32(16)))
}

// zero and one of a dtype's register type.
func (k *kernel) zero(dt hlo.DType) spirv.ID { return k.m.ConstOf(k.regType(dt), 0) }
func (k *kernel) one(dt hlo.DType) spirv.ID  { return k.m.ConstOf(k.regType(dt), 1) }

// constant returns a register constant for element i of a literal.
func (k *kernel) constant(l *hlo.Literal, i int) spirv.ID {
	dt := l.DType()
	t := k.regType(dt)
	switch {
	case dt == hlo.Pred:
		return k.m.ConstBool(l.Bool(i))
	case dt.IsComplex():
		return k.complexConstant(l, i)
	case dt.IsFloat():
		return k.m.ConstFloat(t, l.Float64(i))
	case dt.IsSigned():
		return k.m.ConstInt(t, l.Int64(i))
	}
	return k.m.ConstUint(t, l.Uint64(i))
}
