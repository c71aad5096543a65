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
	// Low-precision types (XLA's xla_data.proto): sub-byte integers, stored packed
	// (two or four to a byte, the lowest-numbered element in the low bits), and the
	// 8-, 6- and 4-bit floats of ml_dtypes (see minifloat.go for their formats).
	S4
	U4
	S2
	U2
	F8E4M3FN
	F8E5M2
	F8E4M3FNUZ
	F8E5M2FNUZ
	F8E4M3B11FNUZ
	F8E3M4
	F8E4M3
	F8E8M0FNU
	F6E2M3FN
	F6E3M2FN
	F4E2M1FN
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

// dtypeKind classifies an element type for the Is… predicates.
type dtypeKind uint8

const (
	kindNone dtypeKind = iota
	kindPred
	kindSigned
	kindUnsigned
	kindFloat
	kindComplex
)

type dtypeInfo struct {
	name string
	bits int // value bits per element; 0 for Token, Tuple and Invalid
	// storage is the bits an element occupies in an array: bits rounded up to 8,
	// except that 4- and 2-bit types pack (XLA's packed sub-byte layout). f6 types
	// keep one byte per element, in its low six bits.
	storage int
	kind    dtypeKind
}

var dtypeInfos = [...]dtypeInfo{
	Invalid:       {"invalid", 0, 0, kindNone},
	Pred:          {"pred", 8, 8, kindPred}, // a 0/1 byte wherever bits are handled
	S8:            {"s8", 8, 8, kindSigned},
	S16:           {"s16", 16, 16, kindSigned},
	S32:           {"s32", 32, 32, kindSigned},
	S64:           {"s64", 64, 64, kindSigned},
	U8:            {"u8", 8, 8, kindUnsigned},
	U16:           {"u16", 16, 16, kindUnsigned},
	U32:           {"u32", 32, 32, kindUnsigned},
	U64:           {"u64", 64, 64, kindUnsigned},
	F16:           {"f16", 16, 16, kindFloat},
	BF16:          {"bf16", 16, 16, kindFloat},
	F32:           {"f32", 32, 32, kindFloat},
	F64:           {"f64", 64, 64, kindFloat},
	S4:            {"s4", 4, 4, kindSigned},
	U4:            {"u4", 4, 4, kindUnsigned},
	S2:            {"s2", 2, 2, kindSigned},
	U2:            {"u2", 2, 2, kindUnsigned},
	F8E4M3FN:      {"f8e4m3fn", 8, 8, kindFloat},
	F8E5M2:        {"f8e5m2", 8, 8, kindFloat},
	F8E4M3FNUZ:    {"f8e4m3fnuz", 8, 8, kindFloat},
	F8E5M2FNUZ:    {"f8e5m2fnuz", 8, 8, kindFloat},
	F8E4M3B11FNUZ: {"f8e4m3b11fnuz", 8, 8, kindFloat},
	F8E3M4:        {"f8e3m4", 8, 8, kindFloat},
	F8E4M3:        {"f8e4m3", 8, 8, kindFloat},
	F8E8M0FNU:     {"f8e8m0fnu", 8, 8, kindFloat},
	F6E2M3FN:      {"f6e2m3fn", 6, 8, kindFloat},
	F6E3M2FN:      {"f6e3m2fn", 6, 8, kindFloat},
	F4E2M1FN:      {"f4e2m1fn", 4, 4, kindFloat},
	C64:           {"c64", 64, 64, kindComplex},
	C128:          {"c128", 128, 128, kindComplex},
	Token:         {"token", 0, 0, kindNone},
	Tuple:         {"tuple", 0, 0, kindNone},
}

// AllDTypes lists the array element types that every part of vkxla handles, GPU
// code generation included, in table order. Tests that run each type on the device
// iterate it; LowPrecisionDTypes and ComplexDTypes are kept apart (codegen handles
// only some of their ops).
var AllDTypes = []DType{Pred, S8, S16, S32, S64, U8, U16, U32, U64, F16, BF16, F32, F64}

// LowPrecisionDTypes lists the sub-byte integers and the 8-, 6- and 4-bit floats.
// The IR, the text form, literals and cpuref handle them; GPU compilation of a
// module that uses one fails with an error wrapping ErrUnsupported.
var LowPrecisionDTypes = []DType{S4, U4, S2, U2, F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ,
	F8E4M3B11FNUZ, F8E3M4, F8E4M3, F8E8M0FNU, F6E2M3FN, F6E3M2FN, F4E2M1FN}

// ComplexDTypes lists the complex element types.
var ComplexDTypes = []DType{C64, C128}

// EveryArrayDType is AllDTypes followed by LowPrecisionDTypes (the real types).
func EveryArrayDType() []DType {
	return append(append([]DType(nil), AllDTypes...), LowPrecisionDTypes...)
}

func (d DType) info() dtypeInfo {
	if int(d) < len(dtypeInfos) {
		return dtypeInfos[d]
	}
	return dtypeInfo{}
}

// String returns the XLA text name ("f32").
func (d DType) String() string {
	if n := d.info().name; n != "" {
		return n
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the bytes one element occupies on its own (pred is one byte, as in XLA;
// a sub-byte element rounds up to one byte, as XLA's ByteSizeOfPrimitiveType).
// It is not the per-element share of an array of packed elements: use ArrayBytes
// or Shape.ByteSize for arrays.
func (d DType) Size() int { return (d.info().storage + 7) / 8 }

// Bits is the element's value width in bits (4 for s4, 6 for f6e2m3fn; 8 for
// pred, whose raw value is a 0/1 byte).
func (d DType) Bits() int { return d.info().bits }

// StorageBits is the bits an element occupies in an array: 4 for s4, u4 and
// f4e2m1fn, 2 for s2 and u2, else 8 × Size.
func (d DType) StorageBits() int { return d.info().storage }

// IsSubByte reports the packed types, whose array elements share bytes.
func (d DType) IsSubByte() bool { s := d.info().storage; return s > 0 && s < 8 }

// ArrayBytes is the bytes n elements occupy in an array (packed for sub-byte types:
// ceil(n·bits/8)).
func (d DType) ArrayBytes(n int64) int64 {
	s := int64(d.info().storage)
	if s%8 == 0 {
		return n * (s / 8)
	}
	return (n*s + 7) / 8
}

// IsValid reports whether d is an array element type (Token included: token[] is
// a scalar of no bytes).
func (d DType) IsValid() bool { return d > Invalid && d < Tuple }

// IsFloat reports the floating-point types: f16, bf16, f32, f64 and the
// low-precision floats.
func (d DType) IsFloat() bool { return d.info().kind == kindFloat }

// IsLowPrecisionFloat reports the 8-, 6- and 4-bit floats (see minifloat.go).
func (d DType) IsLowPrecisionFloat() bool { return d.IsFloat() && d.Bits() <= 8 }

// IsLowPrecision reports the types in LowPrecisionDTypes.
func (d DType) IsLowPrecision() bool {
	return d.IsLowPrecisionFloat() || (d.IsInteger() && d.Bits() < 8)
}

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
func (d DType) IsSigned() bool { return d.info().kind == kindSigned }

// IsUnsigned reports the unsigned integer types.
func (d DType) IsUnsigned() bool { return d.info().kind == kindUnsigned }

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
