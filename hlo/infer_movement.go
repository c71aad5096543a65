package hlo

import (
	"errors"
	"fmt"
)

// Shape rules of the data-movement ops.

// inferBroadcast follows HLO's broadcast (XLA's BroadcastInDim after the builder has
// removed degenerate dims): dimensions[i] is the output dimension that operand
// dimension i maps to, the mapped sizes are equal, and the other output dims are
// new. The dimensions need not be sorted (HLO allows it; it transposes).
func inferBroadcast(a *shapeArgs) (Shape, error) {
	x, out, err := needArrayToDeclared(a)
	if err != nil {
		return Shape{}, err
	}
	if out.DType != x.DType {
		return Shape{}, fmt.Errorf("operand %v and result %v have different element types", x, out)
	}
	dims := a.attrs.Dimensions
	if len(dims) != x.Rank() {
		return Shape{}, fmt.Errorf("dimensions %v have %d entries for operand %v", dims, len(dims), x)
	}
	if err := checkDimSet("dimensions", dims, out.Rank()); err != nil {
		return Shape{}, err
	}
	for i, d := range dims {
		if x.Dims[i] != out.Dims[d] {
			return Shape{}, fmt.Errorf("operand %v dimension %d (size %d) maps to result %v dimension %d (size %d)",
				x, i, x.Dims[i], out, d, out.Dims[d])
		}
	}
	return out, nil
}

func inferReshape(a *shapeArgs) (Shape, error) {
	x, out, err := needArrayToDeclared(a)
	if err != nil {
		return Shape{}, err
	}
	if out.DType != x.DType || out.NumElements() != x.NumElements() {
		return Shape{}, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)",
			x, x.NumElements(), out, out.NumElements())
	}
	return out, nil
}

func inferTranspose(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, perm := a.operands[0], a.attrs.Dimensions
	if len(perm) != x.Rank() {
		return Shape{}, fmt.Errorf("permutation %v has %d entries for operand %v", perm, len(perm), x)
	}
	if err := checkDimSet("permutation", perm, x.Rank()); err != nil {
		return Shape{}, err
	}
	out := x.WithDType(x.DType)
	for i, p := range perm {
		out.Dims[i] = x.Dims[p]
	}
	return out, nil
}

// inferSlice: each dimension keeps ceil((limit-start)/stride) elements.
func inferSlice(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, sl := a.operands[0], a.attrs.Slice
	if len(sl) != x.Rank() {
		return Shape{}, fmt.Errorf("slice has %d dimensions for operand %v", len(sl), x)
	}
	out := x.WithDType(x.DType)
	for i, s := range sl {
		if s.Start < 0 || s.Start > s.Limit || s.Limit > x.Dims[i] || s.Stride < 1 {
			return Shape{}, fmt.Errorf("slice [%d:%d:%d] of dimension %d of %v is out of bounds or has stride < 1",
				s.Start, s.Limit, s.Stride, i, x)
		}
		out.Dims[i] = s.Count()
	}
	return out, nil
}

func inferConcatenate(a *shapeArgs) (Shape, error) {
	if len(a.operands) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	first := a.operands[0]
	if len(a.attrs.Dimensions) != 1 {
		return Shape{}, fmt.Errorf("needs exactly one dimension, got %v", a.attrs.Dimensions)
	}
	dim := a.attrs.Dimensions[0]
	if err := checkDim("dimension", dim, first.Rank()); err != nil {
		return Shape{}, fmt.Errorf("operand %v: %w", first, err)
	}
	out := first.Clone()
	var d dimArith
	for _, s := range a.operands[1:] {
		if err := concatCompatible(first, s, dim); err != nil {
			return Shape{}, err
		}
		out.Dims[dim] = d.add(out.Dims[dim], s.Dims[dim])
	}
	return out, d.err(fmt.Sprintf("the concatenated dimension %d", dim))
}

func concatCompatible(first, s Shape, dim int64) error {
	same := s.DType == first.DType && s.Rank() == first.Rank()
	for i := 0; same && i < s.Rank(); i++ {
		same = int64(i) == dim || s.Dims[i] == first.Dims[i]
	}
	if !same {
		return fmt.Errorf("operands %v and %v differ outside dimension %d", first, s, dim)
	}
	return nil
}

// inferPad: each dimension becomes low + high + size + (size-1)*interior; low and
// high may be negative (they cut), interior may not, and no dimension may become
// negative.
func inferPad(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, v, pad := a.operands[0], a.operands[1], a.attrs.Padding
	if !v.IsScalar() || v.DType != x.DType {
		return Shape{}, fmt.Errorf("padding value %v must be a %v scalar", v, x.DType)
	}
	if len(pad) != x.Rank() {
		return Shape{}, fmt.Errorf("padding has %d dimensions for operand %v", len(pad), x)
	}
	out := x.WithDType(x.DType)
	for i, p := range pad {
		if p.Interior < 0 {
			return Shape{}, fmt.Errorf("negative interior padding %d in dimension %d", p.Interior, i)
		}
		size := x.Dims[i]
		var d dimArith
		out.Dims[i] = d.add(d.add(p.Low, p.High), d.add(size, d.mul(max(size-1, 0), p.Interior)))
		if err := d.err(fmt.Sprintf("padding %d_%d_%d of dimension %d of %v", p.Low, p.High, p.Interior, i, x)); err != nil {
			return Shape{}, err
		}
		if out.Dims[i] < 0 {
			return Shape{}, fmt.Errorf("padding %d_%d_%d makes dimension %d of %v negative",
				p.Low, p.High, p.Interior, i, x)
		}
	}
	return out, nil
}

func inferReverse(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	if err := checkDimSet("dimensions", a.attrs.Dimensions, x.Rank()); err != nil {
		return Shape{}, fmt.Errorf("operand %v: %w", x, err)
	}
	return x.Clone(), nil
}

// inferCopy: XLA's copy (which XLA dumps use to change layouts; every layout here
// is row-major) is the identity on an array.
func inferCopy(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	return a.operands[0].Clone(), nil
}

// checkStartIndices checks dynamic-slice style start indices: one integer scalar per
// operand dimension, all of one type.
func checkStartIndices(x Shape, starts []Shape) error {
	if len(starts) != x.Rank() {
		return fmt.Errorf("operand %v needs %d start indices, got %d", x, x.Rank(), len(starts))
	}
	for i, s := range starts {
		if !s.IsScalar() || !s.DType.IsInteger() || s.DType != starts[0].DType {
			return fmt.Errorf("start index %d is %v; want integer scalars of one type", i, s)
		}
	}
	return nil
}

// inferDynamicSlice: operand, then one start index per dimension; the result has
// dynamic_slice_sizes dims (start indices are clamped at run time to stay in bounds).
func inferDynamicSlice(a *shapeArgs) (Shape, error) {
	if len(a.operands) == 0 {
		return Shape{}, errors.New("needs an operand")
	}
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, sizes := a.operands[0], a.attrs.SliceSizes
	if err := checkStartIndices(x, a.operands[1:]); err != nil {
		return Shape{}, err
	}
	if len(sizes) != x.Rank() {
		return Shape{}, fmt.Errorf("dynamic_slice_sizes %v have %d entries for operand %v", sizes, len(sizes), x)
	}
	for i, s := range sizes {
		if s < 0 || s > x.Dims[i] {
			return Shape{}, fmt.Errorf("slice size %d out of range for dimension %d of %v", s, i, x)
		}
	}
	return MakeShape(x.DType, sizes...), nil
}

// inferDynamicUpdateSlice: operand, update, then one start index per dimension.
func inferDynamicUpdateSlice(a *shapeArgs) (Shape, error) {
	if len(a.operands) < 2 {
		return Shape{}, fmt.Errorf("needs an operand and an update, got %d operands", len(a.operands))
	}
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, u := a.operands[0], a.operands[1]
	if u.DType != x.DType || u.Rank() != x.Rank() {
		return Shape{}, fmt.Errorf("update %v does not match operand %v in type and rank", u, x)
	}
	for i := range u.Dims {
		if u.Dims[i] > x.Dims[i] {
			return Shape{}, fmt.Errorf("update %v is larger than operand %v in dimension %d", u, x, i)
		}
	}
	if err := checkStartIndices(x, a.operands[2:]); err != nil {
		return Shape{}, err
	}
	return x.Clone(), nil
}
