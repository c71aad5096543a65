package hlo

import "fmt"

// The builder's data-movement, reduction, contraction, tuple and control-flow ops.

// Broadcast adds HLO's broadcast to an array of outDims: operand dimension i becomes
// output dimension dims[i] (of the same size); the other output dims are new.
func (b *Builder) Broadcast(x *Instruction, outDims, dims []int64) *Instruction {
	return b.emit(opSpec{op: OpBroadcast, operands: ins(x),
		attrs: Attributes{Dimensions: cloneInts(dims)}, result: declaredAs(cloneInts(outDims))})
}

// BroadcastScalar broadcasts a scalar to an array of outDims.
func (b *Builder) BroadcastScalar(x *Instruction, outDims ...int64) *Instruction {
	return b.Broadcast(x, outDims, []int64{})
}

// Reshape adds a row-major reshape to dims (same element count).
func (b *Builder) Reshape(x *Instruction, dims ...int64) *Instruction {
	return b.emit(opSpec{op: OpReshape, operands: ins(x), result: declaredAs(cloneInts(dims))})
}

// Transpose permutes dimensions: result dimension i is operand dimension perm[i].
func (b *Builder) Transpose(x *Instruction, perm ...int64) *Instruction {
	return b.emit(opSpec{op: OpTranspose, operands: ins(x), attrs: Attributes{Dimensions: cloneInts(perm)}})
}

// Slice takes [starts[i], limits[i]) with strides[i] in each dimension; nil strides
// mean 1.
func (b *Builder) Slice(x *Instruction, starts, limits, strides []int64) *Instruction {
	if len(starts) != len(limits) || (strides != nil && len(strides) != len(starts)) {
		return b.fail(OpSlice, ins(x), fmt.Errorf("starts %v, limits %v and strides %v differ in length",
			starts, limits, strides))
	}
	sl := make([]SliceDim, len(starts))
	for i := range starts {
		sl[i] = SliceDim{Start: starts[i], Limit: limits[i], Stride: 1}
		if strides != nil {
			sl[i].Stride = strides[i]
		}
	}
	return b.emit(opSpec{op: OpSlice, operands: ins(x), attrs: Attributes{Slice: sl}})
}

// Concatenate joins the operands along dimension dim.
func (b *Builder) Concatenate(dim int64, xs ...*Instruction) *Instruction {
	return b.emit(opSpec{op: OpConcatenate, operands: xs, attrs: Attributes{Dimensions: []int64{dim}}})
}

// Pad pads x with the scalar value: low/high (negative cuts) and interior padding
// per dimension.
func (b *Builder) Pad(x, value *Instruction, pads []PadDim) *Instruction {
	return b.emit(opSpec{op: OpPad, operands: ins(x, value),
		attrs: Attributes{Padding: append([]PadDim(nil), pads...)}})
}

// Copy adds XLA's copy: the operand's value in a buffer of its own.
func (b *Builder) Copy(x *Instruction) *Instruction {
	return b.emit(opSpec{op: OpCopy, operands: ins(x)})
}

// Reverse reverses the order of elements along dims.
func (b *Builder) Reverse(x *Instruction, dims ...int64) *Instruction {
	return b.emit(opSpec{op: OpReverse, operands: ins(x), attrs: Attributes{Dimensions: cloneInts(dims)}})
}

// DynamicSlice takes a sizes-shaped slice at run-time starts (one integer scalar per
// dimension, clamped so the slice stays in bounds).
func (b *Builder) DynamicSlice(x *Instruction, starts []*Instruction, sizes []int64) *Instruction {
	return b.emit(opSpec{op: OpDynamicSlice, operands: append(ins(x), starts...),
		attrs: Attributes{SliceSizes: cloneInts(sizes)}})
}

// DynamicUpdateSlice writes update into x at run-time starts (clamped).
func (b *Builder) DynamicUpdateSlice(x, update *Instruction, starts []*Instruction) *Instruction {
	return b.emit(opSpec{op: OpDynamicUpdateSlice, operands: append(ins(x, update), starts...)})
}

// Gather adds XLA's gather with the given dimension numbers and slice sizes.
func (b *Builder) Gather(x, indices *Instruction, dims GatherDims, sliceSizes []int64) *Instruction {
	return b.emit(opSpec{op: OpGather, operands: ins(x, indices),
		attrs: cloneAttributes(Attributes{Gather: &dims, SliceSizes: sliceSizes})})
}

// Scatter adds XLA's (variadic) scatter: operands, indices and one update per
// operand, combined by comp, which takes (current…, update…) scalars.
func (b *Builder) Scatter(operands []*Instruction, indices *Instruction, updates []*Instruction,
	comp *Computation, dims ScatterDims) *Instruction {
	all := append(append(append([]*Instruction{}, operands...), indices), updates...)
	return b.emit(opSpec{op: OpScatter, operands: all, called: []*Computation{comp},
		attrs: cloneAttributes(Attributes{Scatter: &dims})})
}

// Reduce reduces operands (of one dims) over dims with comp, starting from inits
// (one scalar per operand). With several operands the result is a tuple.
func (b *Builder) Reduce(operands, inits []*Instruction, comp *Computation, dims []int64) *Instruction {
	all := append(append([]*Instruction{}, operands...), inits...)
	return b.emit(opSpec{op: OpReduce, operands: all, called: []*Computation{comp},
		attrs: Attributes{Dimensions: cloneInts(dims)}})
}

// ReduceWindow reduces each window of the operands with comp, from inits.
func (b *Builder) ReduceWindow(operands, inits []*Instruction, comp *Computation, window []WindowDim) *Instruction {
	all := append(append([]*Instruction{}, operands...), inits...)
	return b.emit(opSpec{op: OpReduceWindow, operands: all, called: []*Computation{comp},
		attrs: Attributes{Window: append([]WindowDim(nil), window...)}})
}

// SelectAndScatter picks one element per window of x with sel ((T, T) -> pred[])
// and scatters the matching source element there, combining with scatter ((T, T) ->
// T) from init: the gradient of a max pool.
func (b *Builder) SelectAndScatter(x, source, init *Instruction, sel, scatter *Computation,
	window []WindowDim) *Instruction {
	return b.emit(opSpec{op: OpSelectAndScatter, operands: ins(x, source, init),
		called: []*Computation{sel, scatter}, attrs: Attributes{Window: append([]WindowDim(nil), window...)}})
}

// Dot is XLA's Dot: vector·vector, matrix·vector, vector·matrix or matrix·matrix,
// contracting lhs's last dimension with rhs's first.
func (b *Builder) Dot(lhs, rhs *Instruction) *Instruction {
	if lhs == nil || rhs == nil || lhs.Shape.Rank() < 1 || lhs.Shape.Rank() > 2 ||
		rhs.Shape.Rank() < 1 || rhs.Shape.Rank() > 2 {
		return b.fail(OpDot, ins(lhs, rhs), fmt.Errorf("Dot takes rank-1 or rank-2 operands; use DotGeneral"))
	}
	return b.DotGeneral(lhs, rhs, DotDims{
		LhsContracting: []int64{int64(lhs.Shape.Rank() - 1)},
		RhsContracting: []int64{0},
	})
}

// DotGeneral adds dot with batch and contracting dims; the result is batch dims,
// then lhs free dims, then rhs free dims.
func (b *Builder) DotGeneral(lhs, rhs *Instruction, dims DotDims) *Instruction {
	return b.emit(opSpec{op: OpDot, operands: ins(lhs, rhs), attrs: cloneAttributes(Attributes{Dot: &dims})})
}

// DotAs is DotGeneral whose result has the wider type dt (XLA's
// preferred_element_type: s8×s8→s32, bf16×bf16→f32, f32×f32→f64, …).
func (b *Builder) DotAs(lhs, rhs *Instruction, dims DotDims, dt DType) *Instruction {
	return b.emit(opSpec{op: OpDot, operands: ins(lhs, rhs), attrs: cloneAttributes(Attributes{Dot: &dims}),
		result: func([]Shape) Shape { return Shape{DType: dt} }})
}

// Conv adds a general convolution; group counts of 0 mean 1.
func (b *Builder) Conv(input, kernel *Instruction, window []WindowDim, dims ConvDims,
	featureGroupCount, batchGroupCount int64) *Instruction {
	attrs := Attributes{Window: window, Conv: &dims,
		FeatureGroupCount: max(featureGroupCount, 1), BatchGroupCount: max(batchGroupCount, 1)}
	return b.emit(opSpec{op: OpConvolution, operands: ins(input, kernel), attrs: cloneAttributes(attrs)})
}

// ConvAs is Conv whose result has the wider type dt (preferred_element_type).
func (b *Builder) ConvAs(input, kernel *Instruction, window []WindowDim, dims ConvDims,
	featureGroupCount, batchGroupCount int64, dt DType) *Instruction {
	attrs := Attributes{Window: window, Conv: &dims,
		FeatureGroupCount: max(featureGroupCount, 1), BatchGroupCount: max(batchGroupCount, 1)}
	return b.emit(opSpec{op: OpConvolution, operands: ins(input, kernel), attrs: cloneAttributes(attrs),
		result: func([]Shape) Shape { return Shape{DType: dt} }})
}

// Sort sorts the operands (of one dims) along dim, ordered by comp, which takes
// (lhs_0, rhs_0, lhs_1, rhs_1, …) scalars and says whether lhs comes first.
func (b *Builder) Sort(operands []*Instruction, comp *Computation, dim int64, stable bool) *Instruction {
	return b.emit(opSpec{op: OpSort, operands: append([]*Instruction{}, operands...),
		called: []*Computation{comp}, attrs: Attributes{Dimensions: []int64{dim}, IsStable: stable}})
}

// Tuple groups values into a tuple.
func (b *Builder) Tuple(xs ...*Instruction) *Instruction {
	return b.emit(opSpec{op: OpTuple, operands: append([]*Instruction{}, xs...)})
}

// GetTupleElement extracts element i of a tuple.
func (b *Builder) GetTupleElement(t *Instruction, i int64) *Instruction {
	return b.emit(opSpec{op: OpGetTupleElement, operands: ins(t), attrs: Attributes{TupleIndex: i}})
}

// While runs body on the state while cond holds, starting from init.
func (b *Builder) While(cond, body *Computation, init *Instruction) *Instruction {
	return b.emit(opSpec{op: OpWhile, operands: ins(init), called: []*Computation{cond, body}})
}

// Conditional runs one branch on its argument: selector is pred[] (branches: true,
// false) or s32[] (branch index; out of range runs the last).
func (b *Builder) Conditional(selector *Instruction, branches []*Computation, args []*Instruction) *Instruction {
	return b.emit(opSpec{op: OpConditional, operands: append(ins(selector), args...),
		called: append([]*Computation(nil), branches...)})
}

// Call calls comp with args.
func (b *Builder) Call(comp *Computation, args ...*Instruction) *Instruction {
	return b.emit(opSpec{op: OpCall, operands: append([]*Instruction{}, args...), called: []*Computation{comp}})
}

// Fusion calls the fused computation comp with args, as a fusion instruction of the
// given kind: the result is comp's root. Verify requires comp to be flat (no while,
// conditional, call or fusion inside, parameters numbered without gaps).
func (b *Builder) Fusion(kind FusionKind, comp *Computation, args ...*Instruction) *Instruction {
	return b.emit(opSpec{op: OpFusion, operands: append([]*Instruction{}, args...),
		called: []*Computation{comp}, attrs: Attributes{FusionKind: kind}})
}
