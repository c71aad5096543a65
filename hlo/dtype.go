package hlo

import "fmt"

// DType is an element type, named as in XLA's HLO text (f32, s32, pred, …).
type DType uint8

// The element types vkxla supports. Tuple marks a tuple shape (it has no elements of
// its own); Invalid is the zero value so that an unset DType is caught.
const (
	Invalid DType = iota
	Pred
	S8
	S16
	S32
	S64
	U8
	U16
	U32
	U64
	F16
	BF16
	F32
	F64
	// C64 and C128 are complex numbers: a real and an imaginary part of f32 (c64)
	// or f64 (c128), stored real part first, as XLA stores them. IsFloat and
	// IsNumeric do not report them, so that code written for real numbers refuses
	// them rather than treating them as a wider float; IsComplex does.
	C64
	C128
	// Token is XLA's token[]: a value of no bytes that orders side effects.
	// Tokens pass through parameters, tuples, loops, calls, opt-barriers and
	// custom-calls, and after-all makes them; no other op takes one.
	Token
	Tuple
)

type dtypeInfo struct {
	name string
	size int // bytes per element; 0 for Tuple and Invalid
}

var dtypeInfos = [...]dtypeInfo{
	Invalid: {"invalid", 0},
	Pred:    {"pred", 1},
	S8:      {"s8", 1},
	S16:     {"s16", 2},
	S32:     {"s32", 4},
	S64:     {"s64", 8},
	U8:      {"u8", 1},
	U16:     {"u16", 2},
	U32:     {"u32", 4},
	U64:     {"u64", 8},
	F16:     {"f16", 2},
	BF16:    {"bf16", 2},
	F32:     {"f32", 4},
	F64:     {"f64", 8},
	C64:     {"c64", 8},
	C128:    {"c128", 16},
	Token:   {"token", 0},
	Tuple:   {"tuple", 0},
}

// AllDTypes lists every real array element type (not the complex ones, Token, Tuple
// or Invalid), in table order. Tests iterate it over every back end; the complex
// types are listed apart (ComplexDTypes) because GPU code generation does not
// handle them yet.
var AllDTypes = []DType{Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64}

// ComplexDTypes lists the complex element types.
var ComplexDTypes = []DType{C64, C128}

// String returns the XLA text name ("f32").
func (d DType) String() string {
	if int(d) < len(dtypeInfos) {
		return dtypeInfos[d].name
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the element size in bytes (pred is stored as one byte, as in XLA).
func (d DType) Size() int {
	if int(d) < len(dtypeInfos) {
		return dtypeInfos[d].size
	}
	return 0
}

// Bits is the element width in bits.
func (d DType) Bits() int { return 8 * d.Size() }

// IsValid reports whether d is an array element type (Token included: token[] is
// a scalar of no bytes).
func (d DType) IsValid() bool { return d > Invalid && d < Tuple }

// IsFloat reports f16, bf16, f32, f64.
func (d DType) IsFloat() bool { return d == F16 || d == BF16 || d == F32 || d == F64 }

// IsComplex reports c64 and c128.
func (d DType) IsComplex() bool { return d == C64 || d == C128 }

// ComplexPart is the type of a complex type's real and imaginary parts (c64: f32,
// c128: f64); of any other type it is the type itself (real of a real is itself).
func (d DType) ComplexPart() DType {
	switch d {
	case C64:
		return F32
	case C128:
		return F64
	}
	return d
}

// ComplexWith is the complex type whose parts are of type d (f32: c64, f64: c128),
// and false for any other type (XLA has no complex type of f16 or bf16 parts).
func ComplexWith(d DType) (DType, bool) {
	switch d {
	case F32:
		return C64, true
	case F64:
		return C128, true
	}
	return Invalid, false
}

// IsSigned reports the signed integer types.
func (d DType) IsSigned() bool { return d >= S8 && d <= S64 }

// IsUnsigned reports the unsigned integer types.
func (d DType) IsUnsigned() bool { return d >= U8 && d <= U64 }

// IsInteger reports signed or unsigned integers (not pred).
func (d DType) IsInteger() bool { return d.IsSigned() || d.IsUnsigned() }

// IsNumeric reports integers and floats (everything arithmetic applies to).
func (d DType) IsNumeric() bool { return d.IsInteger() || d.IsFloat() }

// ParseDType maps an XLA text name to a DType.
func ParseDType(name string) (DType, error) {
	for i, info := range dtypeInfos {
		if info.name == name && DType(i).IsValid() {
			return DType(i), nil
		}
	}
	return Invalid, fmt.Errorf("unknown element type %q", name)
}
