package hlo

import "fmt"

// Helpers for the computations and attributes that builder users need often.

// ScalarReducer returns the computation (acc: dt[], x: dt[]) -> op(acc, x), for
// reduce, reduce-window and scatter; op is a binary elementwise op (OpAdd,
// OpMaximum, …). It is named like "add_f32".
func ScalarReducer(op Opcode, dt DType) (*Computation, error) {
	b := NewBuilder(fmt.Sprintf("%v_%v", op, dt))
	acc := b.Parameter(Scalar(dt), "acc")
	x := b.Parameter(Scalar(dt), "x")
	return b.BuildComputation(b.Binary(op, acc, x))
}

// ScalarComparator returns a sort comparator over operands of the given element
// types that orders by the first operand with dir (CmpLT ascending, CmpGT
// descending). Floats compare in TOTALORDER, so NaNs sort consistently (after +Inf
// ascending), as jax.lax.sort does.
func ScalarComparator(dir ComparisonDirection, types ...DType) (*Computation, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("comparator needs at least one element type")
	}
	b := NewBuilder(fmt.Sprintf("compare_%v_%v", dir, types[0]))
	var keys []*Instruction
	for i, t := range types {
		lhs := b.Parameter(Scalar(t), fmt.Sprintf("lhs.%d", i))
		rhs := b.Parameter(Scalar(t), fmt.Sprintf("rhs.%d", i))
		if i == 0 {
			keys = ins(lhs, rhs)
		}
	}
	ct := CompareDefault
	if types[0].IsFloat() {
		ct = CompareTotalOrder
	}
	return b.BuildComputation(b.CompareTyped(keys[0], keys[1], dir, ct))
}

// Reducer is ScalarReducer with the builder's sticky error handling: a failure is
// recorded in b and nil returned.
func (b *Builder) Reducer(op Opcode, dt DType) *Computation {
	return b.keep(ScalarReducer(op, dt))
}

// Comparator is ScalarComparator with the builder's sticky error handling.
func (b *Builder) Comparator(dir ComparisonDirection, types ...DType) *Computation {
	return b.keep(ScalarComparator(dir, types...))
}

func (b *Builder) keep(c *Computation, err error) *Computation {
	if err != nil && b.err == nil {
		b.err = fmt.Errorf("hlo builder %q: %w", b.name, err)
	}
	return c
}

// MakeWindow returns window dims of the given sizes and strides (nil strides mean
// 1), no padding and no dilation.
func MakeWindow(sizes, strides []int64) []WindowDim {
	w := make([]WindowDim, len(sizes))
	for i, s := range sizes {
		w[i] = NewWindowDim(s)
		if i < len(strides) {
			w[i].Stride = strides[i]
		}
	}
	return w
}

// DefaultConvDims are XLA's default convolution dimension numbers for n spatial
// dims, dim_labels bf01_oi01->bf01: batch and feature first, spatial dims after.
func DefaultConvDims(n int) ConvDims {
	spatial := make([]int64, n)
	for i := range spatial {
		spatial[i] = int64(i + 2)
	}
	return ConvDims{
		InputBatch: 0, InputFeature: 1, InputSpatial: spatial,
		KernelOutput: 0, KernelInput: 1, KernelSpatial: cloneInts(spatial),
		OutputBatch: 0, OutputFeature: 1, OutputSpatial: cloneInts(spatial),
	}
}
