package hlo

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// MaxShapeElements bounds the element count of any array shape (2^50): sizes in bytes
// of every element type then fit in int64 with room to add them up. The bound applies
// to the product of the non-zero dimensions, so that no stride or partial product
// overflows either, even in a shape with a zero dimension. The parser, the builder
// and the verifier reject larger shapes (docs/limits.md).
const MaxShapeElements = int64(1) << 50

// ErrShapeTooLarge is wrapped by the errors of shapes over the size limits: an array
// with more than MaxShapeElements elements, or a tuple whose byte size overflows int64.
var ErrShapeTooLarge = errors.New("shape too large")

// Shape is a static array shape (element type and dimensions, row-major) or a tuple of
// shapes. All layouts are row-major; layouts in HLO text are accepted and ignored,
// but for a bitcast's (Attributes.Layouts).
type Shape struct {
	DType DType
	Dims  []int64
	// Elems holds the element shapes when DType is Tuple.
	Elems []Shape
}

// MakeShape builds an array shape.
func MakeShape(dt DType, dims ...int64) Shape {
	return Shape{DType: dt, Dims: append([]int64{}, dims...)}
}

// MakeTuple builds a tuple shape.
func MakeTuple(elems ...Shape) Shape {
	return Shape{DType: Tuple, Elems: append([]Shape{}, elems...)}
}

// Scalar is a rank-0 shape.
func Scalar(dt DType) Shape { return Shape{DType: dt} }

// IsTuple reports a tuple shape.
func (s Shape) IsTuple() bool { return s.DType == Tuple }

// IsArray reports a valid array shape.
func (s Shape) IsArray() bool { return s.DType.IsValid() }

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s.Dims) }

// IsScalar reports a rank-0 array.
func (s Shape) IsScalar() bool { return s.IsArray() && len(s.Dims) == 0 }

// NumElements is the product of the dimensions (1 for a scalar).
func (s Shape) NumElements() int64 {
	n := int64(1)
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// ByteSize is the dense row-major size of an array, or the sum over a tuple's elements.
func (s Shape) ByteSize() int64 {
	if s.IsTuple() {
		var total int64
		for _, e := range s.Elems {
			total += e.ByteSize()
		}
		return total
	}
	return s.DType.ArrayBytes(s.NumElements())
}

// NumElementsChecked is NumElements for an array shape, or an error: one wrapping
// ErrShapeTooLarge when the product of the non-zero dimensions exceeds
// MaxShapeElements, or one naming a negative dimension. It never overflows.
func (s Shape) NumElementsChecked() (int64, error) {
	n, nonZero := int64(1), int64(1)
	for _, d := range s.Dims {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", s)
		}
		if d == 0 {
			n = 0
			continue
		}
		if nonZero > MaxShapeElements/d {
			return 0, fmt.Errorf("%w: %v has more than 2^50 elements", ErrShapeTooLarge, s)
		}
		nonZero *= d
	}
	return n * nonZero, nil
}

// ByteSizeChecked is ByteSize, or an error wrapping ErrShapeTooLarge where an array
// has more than MaxShapeElements elements or a tuple's total overflows int64 (or the
// error of a negative dimension). Callers that allocate or plan memory for shapes
// from outside use it; ByteSize is for shapes already verified.
func (s Shape) ByteSizeChecked() (int64, error) {
	if !s.IsTuple() {
		n, err := s.NumElementsChecked()
		return s.DType.ArrayBytes(n), err
	}
	var total int64
	for _, e := range s.Elems {
		b, err := e.ByteSizeChecked()
		if err != nil {
			return 0, err
		}
		if total > math.MaxInt64-b {
			return 0, fmt.Errorf("%w: the byte size of tuple %v overflows int64", ErrShapeTooLarge, s)
		}
		total += b
	}
	return total, nil
}

// dimArith evaluates a dimension formula of a shape rule (pad, window) whose
// attributes are arbitrary int64s: an overflow is remembered rather than wrapped to a
// plausible size, and err reports it.
type dimArith struct{ overflow bool }

func (d *dimArith) add(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		d.overflow = true
	}
	return s
}

func (d *dimArith) mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		d.overflow = true
	}
	return p
}

// err wraps ErrShapeTooLarge when any step overflowed.
func (d *dimArith) err(what string) error {
	if d.overflow {
		return fmt.Errorf("%w: %s overflows int64", ErrShapeTooLarge, what)
	}
	return nil
}

// Strides returns row-major element strides.
func (s Shape) Strides() []int64 {
	strides := make([]int64, len(s.Dims))
	acc := int64(1)
	for i := len(s.Dims) - 1; i >= 0; i-- {
		strides[i] = acc
		acc *= s.Dims[i]
	}
	return strides
}

// Equal compares element types, dimensions and tuple structure.
func (s Shape) Equal(o Shape) bool {
	if s.DType != o.DType || len(s.Dims) != len(o.Dims) || len(s.Elems) != len(o.Elems) {
		return false
	}
	for i := range s.Dims {
		if s.Dims[i] != o.Dims[i] {
			return false
		}
	}
	for i := range s.Elems {
		if !s.Elems[i].Equal(o.Elems[i]) {
			return false
		}
	}
	return true
}

// SameDims compares dimensions only.
func (s Shape) SameDims(o Shape) bool {
	return s.Rank() == o.Rank() && s.WithDType(o.DType).Equal(o)
}

// WithDType returns the same dimensions with another element type.
func (s Shape) WithDType(dt DType) Shape {
	return Shape{DType: dt, Dims: append([]int64{}, s.Dims...)}
}

// Clone returns a deep copy.
func (s Shape) Clone() Shape {
	c := Shape{DType: s.DType, Dims: append([]int64(nil), s.Dims...)}
	for _, e := range s.Elems {
		c.Elems = append(c.Elems, e.Clone())
	}
	return c
}

// String prints the shape in XLA text form without a layout: f32[2,3], (f32[], s32[4]).
func (s Shape) String() string {
	if s.IsTuple() {
		parts := make([]string, len(s.Elems))
		for i, e := range s.Elems {
			parts[i] = e.String()
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	dims := make([]string, len(s.Dims))
	for i, d := range s.Dims {
		dims[i] = fmt.Sprint(d)
	}
	return s.DType.String() + "[" + strings.Join(dims, ",") + "]"
}
