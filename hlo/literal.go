package hlo

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Literal is a host tensor: a shape and its elements, dense, row-major, little-endian,
// exactly as the device stores them (pred is one byte, 0 or 1). It is the value type
// of constants, of cpuref's inputs and outputs, and of the GPU path's inputs and
// outputs. A tuple literal holds element literals instead of bytes.
type Literal struct {
	shape Shape
	data  []byte
	elems []*Literal
}

// NewLiteral returns a zero-filled literal of an array or tuple shape.
func NewLiteral(s Shape) *Literal {
	if s.IsTuple() {
		l := &Literal{shape: s.Clone()}
		for _, e := range s.Elems {
			l.elems = append(l.elems, NewLiteral(e))
		}
		return l
	}
	return &Literal{shape: s.Clone(), data: make([]byte, s.ByteSize())}
}

// LiteralFromBytes wraps raw little-endian element bytes; the length must match.
func LiteralFromBytes(s Shape, data []byte) (*Literal, error) {
	if s.IsTuple() || !s.IsArray() {
		return nil, fmt.Errorf("literal from bytes: shape %v is not an array shape", s)
	}
	if int64(len(data)) != s.ByteSize() {
		return nil, fmt.Errorf("literal from bytes: shape %v needs %d bytes, got %d", s, s.ByteSize(), len(data))
	}
	return &Literal{shape: s.Clone(), data: data}, nil
}

// TupleLiteral builds a tuple of literals (not copied).
func TupleLiteral(elems ...*Literal) *Literal {
	shapes := make([]Shape, len(elems))
	for i, e := range elems {
		shapes[i] = e.shape
	}
	return &Literal{shape: MakeTuple(shapes...), elems: elems}
}

// Native is the set of Go element types a literal converts from and to.
type Native interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 |
		Float16 | BFloat16 | float32 | float64 | complex64 | complex128
}

// DTypeOf returns the element type for a Go type.
func DTypeOf[T Native]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Pred
	case int8:
		return S8
	case int16:
		return S16
	case int32:
		return S32
	case int64:
		return S64
	case uint8:
		return U8
	case uint16:
		return U16
	case uint32:
		return U32
	case uint64:
		return U64
	case Float16:
		return F16
	case BFloat16:
		return BF16
	case float32:
		return F32
	case complex64:
		return C64
	case complex128:
		return C128
	default:
		return F64
	}
}

// FromSlice builds an array literal of the given dims from Go values (copied).
func FromSlice[T Native](dims []int64, values []T) (*Literal, error) {
	s := MakeShape(DTypeOf[T](), dims...)
	if s.NumElements() != int64(len(values)) {
		return nil, fmt.Errorf("literal %v needs %d values, got %d", s, s.NumElements(), len(values))
	}
	l := NewLiteral(s)
	// The literal's layout is encoding/binary's little-endian one (pred is a 0/1 byte).
	if _, err := binary.Encode(l.data, binary.LittleEndian, values); err != nil {
		return nil, err
	}
	return l, nil
}

// MustFromSlice is FromSlice for literals written in code; it panics on a count
// mismatch, which is a programming error.
func MustFromSlice[T Native](dims []int64, values []T) *Literal {
	l, err := FromSlice(dims, values)
	if err != nil {
		panic(err)
	}
	return l
}

// FromFloat64s builds an array literal of a float dtype (any, the low-precision
// ones included) from float64 values, each rounded as SetFloat64 rounds.
func FromFloat64s(dt DType, dims []int64, values []float64) (*Literal, error) {
	l, err := newFilled(dt, dims, len(values))
	if err != nil {
		return nil, err
	}
	if !dt.IsFloat() {
		return nil, fmt.Errorf("literal from float64s: %v is not a float type", dt)
	}
	for i, v := range values {
		l.SetFloat64(i, v)
	}
	return l, nil
}

// FromInt64s builds an array literal of an integer or pred dtype (s4 and u2
// included) from int64 values, each wrapped to the width as SetInt64 wraps.
func FromInt64s(dt DType, dims []int64, values []int64) (*Literal, error) {
	l, err := newFilled(dt, dims, len(values))
	if err != nil {
		return nil, err
	}
	if !dt.IsInteger() && dt != Pred {
		return nil, fmt.Errorf("literal from int64s: %v is not an integer type", dt)
	}
	for i, v := range values {
		l.SetInt64(i, v)
	}
	return l, nil
}

// newFilled checks that n values fill an array of dt and dims, and allocates it.
func newFilled(dt DType, dims []int64, n int) (*Literal, error) {
	s := MakeShape(dt, dims...)
	if !s.IsArray() || dt == Token {
		return nil, fmt.Errorf("literal of %v: not an array element type", dt)
	}
	want, err := s.NumElementsChecked()
	if err != nil {
		return nil, fmt.Errorf("literal of %v: %w", s, err)
	}
	if want != int64(n) {
		return nil, fmt.Errorf("literal %v needs %d values, got %d", s, want, n)
	}
	return NewLiteral(s), nil
}

// ScalarLiteral builds a rank-0 literal.
func ScalarLiteral[T Native](v T) *Literal { return MustFromSlice(nil, []T{v}) }

// Values returns the elements as Go values; T must match the dtype.
func Values[T Native](l *Literal) ([]T, error) {
	if want := DTypeOf[T](); l.shape.DType != want {
		return nil, fmt.Errorf("literal is %v, not %v", l.shape.DType, want)
	}
	out := make([]T, l.NumElements())
	if _, err := binary.Decode(l.data, binary.LittleEndian, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Shape returns the literal's shape (do not modify it).
func (l *Literal) Shape() Shape { return l.shape }

// DType returns the element type.
func (l *Literal) DType() DType { return l.shape.DType }

// NumElements is the element count of an array literal.
func (l *Literal) NumElements() int { return int(l.shape.NumElements()) }

// Bytes returns the raw element bytes (shared, not copied).
func (l *Literal) Bytes() []byte { return l.data }

// Elems returns a tuple literal's elements.
func (l *Literal) Elems() []*Literal { return l.elems }

// Clone returns a deep copy.
func (l *Literal) Clone() *Literal {
	c := &Literal{shape: l.shape.Clone(), data: append([]byte(nil), l.data...)}
	for _, e := range l.elems {
		c.elems = append(c.elems, e.Clone())
	}
	return c
}

// bits reads element i's raw bits, zero-extended.
func (l *Literal) bits(i int) uint64 {
	if l.shape.DType.IsSubByte() {
		return l.packedBits(i)
	}
	size := l.shape.DType.Size()
	b := l.data[i*size : (i+1)*size]
	switch size {
	case 0: // a token
		return 0
	case 1:
		return uint64(b[0]) & (1<<l.shape.DType.Bits() - 1) // f6 uses 6 of its 8 bits
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// putBits writes the low bits of v as element i.
func (l *Literal) putBits(i int, v uint64) {
	if l.shape.DType.IsSubByte() {
		l.putPackedBits(i, v)
		return
	}
	size := l.shape.DType.Size()
	b := l.data[i*size : (i+1)*size]
	switch size {
	case 0: // a token holds nothing
	case 1:
		b[0] = byte(v) & byte(1<<l.shape.DType.Bits()-1)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// packedBits reads element i of a packed sub-byte array: element i sits at bit
// i·w of the byte stream, so with w dividing 8 it never straddles a byte, and the
// lowest-numbered element of a byte is in its low bits (XLA's packing).
func (l *Literal) packedBits(i int) uint64 {
	w := l.shape.DType.StorageBits()
	bit := i * w
	return uint64(l.data[bit/8]>>(bit%8)) & (1<<w - 1)
}

func (l *Literal) putPackedBits(i int, v uint64) {
	w := l.shape.DType.StorageBits()
	bit := i * w
	mask := byte(1<<w-1) << (bit % 8)
	b := &l.data[bit/8]
	*b = *b&^mask | byte(v<<(bit%8))&mask
}

// Bits returns element i's raw bit pattern, zero-extended to 64 bits. A c128
// element is 128 bits: Bits is its real part's; read it with Complex128.
func (l *Literal) Bits(i int) uint64 { return l.bits(i) }

// SetBits stores the low bits of v as element i.
func (l *Literal) SetBits(i int, v uint64) { l.putBits(i, v) }

// Bool reads element i as a truth value (non-zero is true).
func (l *Literal) Bool(i int) bool { return l.bits(i) != 0 }

// SetBool stores a pred element as 0 or 1.
func (l *Literal) SetBool(i int, v bool) {
	var b uint64
	if v {
		b = 1
	}
	l.putBits(i, b)
}

// Int64 reads element i as a signed integer: sign-extended for signed types,
// zero-extended for unsigned and pred, truncated toward zero for floats.
func (l *Literal) Int64(i int) int64 {
	dt := l.shape.DType
	switch {
	case dt.IsFloat() || dt.IsComplex():
		return int64(l.Float64(i))
	case dt.IsSigned():
		shift := 64 - dt.Bits()
		return int64(l.bits(i)<<shift) >> shift
	}
	return int64(l.bits(i))
}

// SetInt64 stores v in element i, wrapping to the element width (two's complement).
func (l *Literal) SetInt64(i int, v int64) {
	if dt := l.shape.DType; dt.IsFloat() || dt.IsComplex() {
		l.SetFloat64(i, float64(v)) // from the signed value: -1 is -1.0, not 2^64
		return
	}
	// Integers and pred store the same bits (and test v != 0) whatever v's signedness.
	l.SetUint64(i, uint64(v))
}

// Uint64 reads element i as an unsigned integer (the raw bits for integer types).
func (l *Literal) Uint64(i int) uint64 {
	dt := l.shape.DType
	if dt.IsFloat() || dt.IsComplex() {
		return uint64(l.Float64(i))
	}
	if dt.IsSigned() {
		return uint64(l.Int64(i))
	}
	return l.bits(i)
}

// SetUint64 stores v in element i, wrapping to the element width.
func (l *Literal) SetUint64(i int, v uint64) {
	if dt := l.shape.DType; dt.IsFloat() || dt.IsComplex() {
		l.SetFloat64(i, float64(v))
		return
	}
	if l.shape.DType == Pred {
		l.SetBool(i, v != 0)
		return
	}
	l.putBits(i, v)
}

// Float64 reads element i as a float64 (exact for every dtype except 64-bit integers
// beyond 2^53; the real part of a complex element).
func (l *Literal) Float64(i int) float64 {
	switch dt := l.shape.DType; dt {
	case C64, C128:
		return real(l.Complex128(i))
	case F16:
		return float64(Float16(l.bits(i)).Float32())
	case BF16:
		return float64(BFloat16(l.bits(i)).Float32())
	case F32:
		return float64(math.Float32frombits(uint32(l.bits(i))))
	case F64:
		return math.Float64frombits(l.bits(i))
	case Pred:
		return float64(l.bits(i))
	default:
		if dt.IsLowPrecisionFloat() {
			return MinifloatToFloat64(dt, l.bits(i))
		}
		if dt.IsSigned() {
			return float64(l.Int64(i))
		}
		return float64(l.bits(i))
	}
}

// SetFloat64 stores v in a float element (a complex one gets imaginary part 0), rounding to nearest even for narrower
// types (f64 → f32 rounds once; f16/bf16 round from float32, so a value exactly
// between two f16 values after the f32 rounding may round differently from a
// single rounding, as in XLA; the 8-, 6- and 4-bit floats round once from v, by
// minifloat.go's rules).
func (l *Literal) SetFloat64(i int, v float64) {
	switch dt := l.shape.DType; dt {
	case F16:
		l.putBits(i, uint64(F16FromFloat32(float32(v))))
	case BF16:
		l.putBits(i, uint64(BF16FromFloat32(float32(v))))
	case F32:
		l.putBits(i, uint64(math.Float32bits(float32(v))))
	case F64:
		l.putBits(i, math.Float64bits(v))
	case C64, C128:
		l.SetComplex128(i, complex(v, 0))
	default:
		if dt.IsLowPrecisionFloat() {
			l.putBits(i, MinifloatFromFloat64(dt, v))
			return
		}
		panic(fmt.Sprintf("SetFloat64 on %v literal", dt))
	}
}

// String prints the literal in HLO constant syntax, e.g. f32[2]{1, 2}.
func (l *Literal) String() string { return l.shape.String() + " " + FormatLiteralValues(l) }
