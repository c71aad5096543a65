package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla/hlo"
)

// The data-movement ops: broadcast, reshape, transpose, slices, concatenate,
// pad, reverse, iota, dynamic slices, gather and scatter.

// BroadcastInDim broadcasts x to shape; x's axis i becomes axes[i].
func (b *Builder) BroadcastInDim(x backends.Op, shape shapes.Shape, axes []int) (backends.Op, error) {
	ns, err := b.nodes("BroadcastInDim", x)
	if err != nil {
		return nil, err
	}
	if len(axes) != ns[0].shape.Rank() {
		return nil, fmt.Errorf("vkxla backend: BroadcastInDim of %s to %s: %d axes %v", ns[0].shape, shape, len(axes), axes)
	}
	out := int64s(shape.Dimensions)
	for _, a := range axes {
		if a < 0 || a >= len(out) {
			return nil, fmt.Errorf("vkxla backend: BroadcastInDim of %s to %s: axis %d out of range", ns[0].shape, shape, a)
		}
	}
	return b.wrap("BroadcastInDim", b.broadcastInDim(ns[0].in, out, int64s(axes)))
}

func (b *Builder) Reshape(x backends.Op, dims ...int) (backends.Op, error) {
	ns, err := b.nodes("Reshape", x)
	if err != nil {
		return nil, err
	}
	return b.wrap("Reshape", b.hb.Reshape(ns[0].in, int64s(dims)...))
}

func (b *Builder) Transpose(x backends.Op, perm ...int) (backends.Op, error) {
	ns, err := b.nodes("Transpose", x)
	if err != nil {
		return nil, err
	}
	return b.wrap("Transpose", b.hb.Transpose(ns[0].in, int64s(perm)...))
}

// Slice takes [starts, limits) with strides (empty strides mean 1).
func (b *Builder) Slice(x backends.Op, starts, limits, strides []int) (backends.Op, error) {
	ns, err := b.nodes("Slice", x)
	if err != nil {
		return nil, err
	}
	var st []int64
	if len(strides) > 0 {
		st = int64s(strides)
	}
	return b.wrap("Slice", b.hb.Slice(ns[0].in, int64s(starts), int64s(limits), st))
}

func (b *Builder) Concatenate(axis int, operands ...backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Concatenate", operands...)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 {
		return ns[0], nil
	}
	return b.wrap("Concatenate", b.hb.Concatenate(int64(axis), instructions(ns)...))
}

func instructions(ns []*Node) []*hlo.Instruction {
	out := make([]*hlo.Instruction, len(ns))
	for i, n := range ns {
		out[i] = n.in
	}
	return out
}

// Pad pads x with fill; axes without a PadAxis are not padded.
func (b *Builder) Pad(x, fill backends.Op, axes ...backends.PadAxis) (backends.Op, error) {
	ns, err := b.nodes("Pad", x, fill)
	if err != nil {
		return nil, err
	}
	rank := ns[0].shape.Rank()
	if len(axes) > rank {
		return nil, fmt.Errorf("vkxla backend: Pad of %s: %d axes configured", ns[0].shape, len(axes))
	}
	pads := make([]hlo.PadDim, rank)
	for i, a := range axes {
		pads[i] = hlo.PadDim{Low: int64(a.Start), High: int64(a.End), Interior: int64(a.Interior)}
	}
	return b.wrap("Pad", b.hb.Pad(ns[0].in, ns[1].in, pads))
}

func (b *Builder) Reverse(x backends.Op, axes ...int) (backends.Op, error) {
	ns, err := b.nodes("Reverse", x)
	if err != nil {
		return nil, err
	}
	return b.wrap("Reverse", b.hb.Reverse(ns[0].in, int64s(axes)...))
}

func (b *Builder) Iota(shape shapes.Shape, axis int) (backends.Op, error) {
	if _, err := b.nodes("Iota"); err != nil {
		return nil, err
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, err
	}
	return b.wrap("Iota", b.hb.Iota(hs, int64(axis)))
}

// startScalars returns one scalar start per axis: the starts as given, or the
// elements of a single rank-1 tensor of starts (GoMLX passes either).
func (b *Builder) startScalars(what string, starts []backends.Op) ([]*hlo.Instruction, error) {
	ns, err := b.nodes(what, starts...)
	if err != nil {
		return nil, err
	}
	if len(ns) == 1 && ns[0].shape.Rank() == 1 {
		v := ns[0].in
		out := make([]*hlo.Instruction, v.Shape.Dims[0])
		for i := range out {
			s := b.hb.Slice(v, []int64{int64(i)}, []int64{int64(i) + 1}, nil)
			out[i] = b.hb.Reshape(s)
		}
		return out, nil
	}
	return instructions(ns), nil
}

func (b *Builder) DynamicSlice(x backends.Op, starts []backends.Op, sizes []int) (backends.Op, error) {
	ns, err := b.nodes("DynamicSlice", x)
	if err != nil {
		return nil, err
	}
	st, err := b.startScalars("DynamicSlice", starts)
	if err != nil {
		return nil, err
	}
	return b.wrap("DynamicSlice", b.hb.DynamicSlice(ns[0].in, st, int64s(sizes)))
}

func (b *Builder) DynamicUpdateSlice(x, update backends.Op, starts []backends.Op) (backends.Op, error) {
	ns, err := b.nodes("DynamicUpdateSlice", x, update)
	if err != nil {
		return nil, err
	}
	st, err := b.startScalars("DynamicUpdateSlice", starts)
	if err != nil {
		return nil, err
	}
	return b.wrap("DynamicUpdateSlice", b.hb.DynamicUpdateSlice(ns[0].in, ns[1].in, st))
}

// Gather is XLA's gather, without batching axes (GoMLX has none).
func (b *Builder) Gather(operand, indices backends.Op, indexVectorAxis int,
	offsetOutputAxes, collapsedSliceAxes, startIndexMap, sliceSizes []int, _ bool) (backends.Op, error) {
	ns, err := b.nodes("Gather", operand, indices)
	if err != nil {
		return nil, err
	}
	dims := hlo.GatherDims{
		OffsetDims: int64s(offsetOutputAxes), CollapsedSliceDims: int64s(collapsedSliceAxes),
		StartIndexMap: int64s(startIndexMap), IndexVectorDim: int64(indexVectorAxis),
	}
	return b.wrap("Gather", b.hb.Gather(ns[0].in, ns[1].in, dims, int64s(sliceSizes)))
}

// scatter is XLA's scatter combining with op (add, maximum, minimum).
func (b *Builder) scatter(what string, op hlo.Opcode, operand, indices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, sorted, unique bool) (backends.Op, error) {
	ns, err := b.nodes(what, operand, indices, updates)
	if err != nil {
		return nil, err
	}
	dims := hlo.ScatterDims{
		UpdateWindowDims: int64s(updateWindowAxes), InsertedWindowDims: int64s(insertedWindowAxes),
		ScatterDimsToOperandDims: int64s(scatterAxesToOperandAxes), IndexVectorDim: int64(indexVectorAxis),
		IndicesAreSorted: sorted, UniqueIndices: unique,
	}
	comp := b.hb.Reducer(op, ns[0].in.Shape.DType)
	if comp == nil {
		return b.wrap(what, nil)
	}
	in := b.hb.Scatter([]*hlo.Instruction{ns[0].in}, ns[1].in, []*hlo.Instruction{ns[2].in}, comp, dims)
	return b.wrap(what, in)
}

func (b *Builder) ScatterSum(operand, indices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, sorted, unique bool) (backends.Op, error) {
	return b.scatter("ScatterSum", hlo.OpAdd, operand, indices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, sorted, unique)
}

func (b *Builder) ScatterMax(operand, indices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, sorted, unique bool) (backends.Op, error) {
	return b.scatter("ScatterMax", hlo.OpMaximum, operand, indices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, sorted, unique)
}

func (b *Builder) ScatterMin(operand, indices, updates backends.Op, indexVectorAxis int,
	updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes []int, sorted, unique bool) (backends.Op, error) {
	return b.scatter("ScatterMin", hlo.OpMinimum, operand, indices, updates, indexVectorAxis,
		updateWindowAxes, insertedWindowAxes, scatterAxesToOperandAxes, sorted, unique)
}
