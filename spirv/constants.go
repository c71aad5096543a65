package spirv

import (
	"fmt"
	"math"
)

// Constants are de-duplicated by type and bit pattern: asking twice for the
// u32 constant 7 yields one id. Floats are keyed by their bits, so +0 and -0
// (and NaNs with different payloads) stay distinct.

// constDecl returns the id cached under key, or emits op with result type t
// and the given operands after the result id.
func (m *Module) constDecl(key string, op Op, t ID, operands ...uint32) ID {
	if id, ok := m.keys[key]; ok {
		return id
	}
	id := m.NewID()
	m.keys[key] = id
	m.valueTypes[id] = t
	m.globals.add(op, append([]uint32{uint32(t), uint32(id)}, operands...)...)
	return id
}

// ConstBool returns the constant true or false.
func (m *Module) ConstBool(v bool) ID {
	op := OpConstantFalse
	if v {
		op = OpConstantTrue
	}
	return m.constDecl(fmt.Sprint("bool", v), op, m.TypeBool())
}

// ConstInt returns a constant of integer type t. v must be representable in
// t's width as a signed or an unsigned number (so ConstInt(u8, -1) is 0xff).
func (m *Module) ConstInt(t ID, v int64) ID {
	w := m.intWidth(t)
	if w == 0 {
		return 0
	}
	if w < 64 && (v < -(1<<(w-1)) || v >= 1<<w) {
		m.failf("constant %d does not fit in %s", v, m.TypeName(t))
		return 0
	}
	return m.scalarConst(t, uint64(v))
}

// ConstUint returns a constant of integer type t from an unsigned value.
func (m *Module) ConstUint(t ID, v uint64) ID {
	w := m.intWidth(t)
	if w == 0 {
		return 0
	}
	if w < 64 && v >= 1<<w {
		m.failf("constant %d does not fit in %s", v, m.TypeName(t))
		return 0
	}
	return m.scalarConst(t, v)
}

// ConstFloat returns a constant of float type t, rounding v to t's width
// (to nearest, ties to even).
func (m *Module) ConstFloat(t ID, v float64) ID {
	w := m.floatWidth(t)
	if w == 0 {
		return 0
	}
	return m.scalarConst(t, floatBits(w, v))
}

// floatBits encodes v in a float format of width 16, 32 or 64.
func floatBits(width int, v float64) uint64 {
	switch width {
	case 16:
		return uint64(Float16Bits(v))
	case 32:
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}

// ConstFloatBits returns a float constant with an exact bit pattern, for NaN
// payloads or values computed elsewhere in the target format.
func (m *Module) ConstFloatBits(t ID, bits uint64) ID {
	if m.floatWidth(t) == 0 {
		return 0
	}
	return m.scalarConst(t, bits)
}

// Shorthands for 32-bit constants, the bread and butter of index arithmetic.
func (m *Module) U32(v uint32) ID  { return m.ConstUint(m.TypeU32(), uint64(v)) }
func (m *Module) I32(v int32) ID   { return m.ConstInt(m.TypeI32(), int64(v)) }
func (m *Module) F32(v float32) ID { return m.ConstFloat(m.TypeF32(), float64(v)) }

// ConstOf returns v as a constant of any numeric or bool type t; for a vector
// type every component is v. It lets emitters write "0 of the output type"
// or "1 of the accumulator type" without a switch on the type.
func (m *Module) ConstOf(t ID, v float64) ID {
	info := m.typeInfoOf(t)
	switch info.op {
	case OpTypeBool:
		return m.ConstBool(v != 0)
	case OpTypeFloat:
		return m.ConstFloat(t, v)
	case OpTypeInt:
		if v < 0 {
			return m.ConstInt(t, int64(v))
		}
		return m.ConstUint(t, uint64(v))
	case OpTypeVector:
		c := m.ConstOf(info.elem, v)
		parts := make([]ID, info.count)
		for i := range parts {
			parts[i] = c
		}
		return m.ConstComposite(t, parts...)
	}
	m.failf("ConstOf: %s is not a numeric, bool or vector type", m.TypeName(t))
	return 0
}

// ConstComposite returns a constant vector, array or struct of constants.
func (m *Module) ConstComposite(t ID, parts ...ID) ID {
	m.typeInfoOf(t)
	return m.constDecl(fmt.Sprint("composite", t, parts), OpConstantComposite, t, idWords(parts)...)
}

// ConstNull returns the all-zero constant of type t.
func (m *Module) ConstNull(t ID) ID {
	m.typeInfoOf(t)
	return m.constDecl(fmt.Sprint("null", t), OpConstantNull, t)
}

// scalarConst encodes an int or float constant of t from its low bits: one
// word up to 32 bits (narrow signed ints sign-extended, as the spec
// requires), two words, low first, for 64.
func (m *Module) scalarConst(t ID, bits uint64) ID {
	info := m.typeInfoOf(t)
	if info.width < 64 {
		bits &= 1<<info.width - 1
	}
	words := []uint32{uint32(bits)}
	switch {
	case info.width == 64:
		words = append(words, uint32(bits>>32))
	case info.op == OpTypeInt && info.signed && info.width < 32:
		words[0] = uint32(int32(bits<<(32-info.width)) >> (32 - info.width))
	}
	id := m.constDecl(fmt.Sprint("scalar", t, words), OpConstant, t, words...)
	m.constants[id] = bits
	return id
}

// intWidth and floatWidth return the width of a constant's type t, failing (and
// returning 0) when t is not of that kind.
func (m *Module) intWidth(t ID) int { return m.constWidth(t, OpTypeInt, "integer") }

func (m *Module) floatWidth(t ID) int { return m.constWidth(t, OpTypeFloat, "float") }

func (m *Module) constWidth(t ID, op Op, kind string) int {
	info := m.typeInfoOf(t)
	if info.op != op {
		m.failf("%s constant of non-%s type %s", kind, kind, m.TypeName(t))
		return 0
	}
	return info.width
}

// ConstValue returns the bits of a scalar OpConstant made by this module.
func (m *Module) ConstValue(c ID) (uint64, bool) {
	v, ok := m.constants[c]
	return v, ok
}

func idWords(ids []ID) []uint32 {
	w := make([]uint32, len(ids))
	for i, id := range ids {
		w[i] = uint32(id)
	}
	return w
}

// Float16Bits converts v to IEEE binary16, rounding to nearest with ties to
// even, directly from the float64 bits (going through float32 would round
// twice). Overflow gives infinity; NaN stays a quiet NaN.
func Float16Bits(v float64) uint16 {
	b := math.Float64bits(v)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	frac := b & (1<<52 - 1)
	switch {
	case exp == 0x7ff && frac != 0:
		return sign | 0x7e00 | uint16(frac>>42)
	case exp == 0x7ff:
		return sign | 0x7c00
	case exp == 0:
		return sign // float64 subnormals are far below the smallest half
	}
	e := exp - 1023
	if e > 15 {
		return sign | 0x7c00
	}
	if e >= -14 {
		// Normal half: keep 10 fraction bits; a carry out of the fraction
		// correctly bumps the exponent, up to infinity.
		return sign | roundShift(uint64(e+15)<<52|frac, 42)
	}
	// Subnormal half: the significand in units of 2^-24.
	shift := uint(28 - e)
	if shift > 63 {
		return sign
	}
	return sign | roundShift(1<<52|frac, shift)
}

// roundShift returns x >> s rounded to nearest, ties to even.
func roundShift(x uint64, s uint) uint16 {
	q := x >> s
	rem := x & (1<<s - 1)
	half := uint64(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return uint16(q)
}
