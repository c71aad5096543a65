package vkxla_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Cases for every opcode that is not plain unary/binary elementwise. Each builds a
// small module with the builder; inputs are random within the op's domain.

func init() {
	for op, g := range map[hlo.Opcode]caseGen{
		hlo.OpParameter: parameterCases, hlo.OpConstant: constantCases, hlo.OpIota: iotaCases,
		hlo.OpCompare: compareCases, hlo.OpSelect: selectCases, hlo.OpClamp: clampCases,
		hlo.OpConvert: convertCases, hlo.OpBitcastConvert: bitcastCases,
		hlo.OpBroadcast:          withCases(broadcastCases, broadcastDTypeCases),
		hlo.OpReshape:            reshapeCases,
		hlo.OpTranspose:          transposeCases,
		hlo.OpSlice:              withCases(sliceCases, sliceDTypeCases),
		hlo.OpConcatenate:        withCases(concatenateCases, concatenateDTypeCases),
		hlo.OpPad:                withCases(padCases, padDTypeCases),
		hlo.OpReverse:            withCases(reverseCases, reverseDTypeCases),
		hlo.OpCopy:               copyCases,
		hlo.OpDynamicSlice:       withCases(dynamicSliceCases, dynamicSliceDTypeCases),
		hlo.OpDynamicUpdateSlice: withCases(dynamicUpdateSliceCases, dynamicUpdateSliceDTypeCases),
		hlo.OpGather:             withCases(gatherCases, gatherDTypeCases),
		hlo.OpScatter:            withCases(scatterCases, scatterDTypeCases, specialScatterCases, uniqueScatterCases),
		hlo.OpReduce:             withCases(reduceCases, reduceDTypeCases, specialReduceCases, treeReduceCases),
		hlo.OpReduceWindow:       withCases(reduceWindowCases, reduceWindowDTypeCases, specialReduceWindowCases),
		hlo.OpSelectAndScatter:   withCases(selectAndScatterCases, selectAndScatterDTypeCases, tieSelectAndScatterCases),
		hlo.OpDot:                withCases(dotCases, dotDTypeCases, accumulationDotCases, gemmDotCases),
		hlo.OpConvolution:        withCases(convolutionCases, convolutionDTypeCases, generalConvCases),
		hlo.OpSort:               withCases(sortCases, sortDTypeCases, longSortCases),
		hlo.OpTuple:              withCases(tupleCases, tupleDTypeCases),
		hlo.OpGetTupleElement:    withCases(tupleCases, tupleDTypeCases),
		hlo.OpWhile:              withCases(whileCases, whileDTypeCases),
		hlo.OpConditional:        withCases(conditionalCases, conditionalDTypeCases),
		hlo.OpCall:               withCases(callCases, callDTypeCases),
		hlo.OpFusion:             withCases(fusionCases, fusionDTypeCases),
	} {
		opCases[op] = g
	}
}

// caseBuilder collects parameters and their random inputs for one case.
type caseBuilder struct {
	*hlo.Builder
	g      *gen
	inputs []*hlo.Literal
}

func newCase(g *gen, name string) *caseBuilder {
	return &caseBuilder{Builder: hlo.NewBuilder(name), g: g}
}

// param adds a parameter with a random input drawn from d.
func (cb *caseBuilder) param(s hlo.Shape, d domain) *hlo.Instruction {
	cb.inputs = append(cb.inputs, randomLiteral(cb.g.rng, s, d))
	return cb.Parameter(s, fmt.Sprintf("p%d", len(cb.inputs)-1))
}

// paramValue adds a parameter with a given input.
func (cb *caseBuilder) paramValue(lit *hlo.Literal) *hlo.Instruction {
	cb.inputs = append(cb.inputs, lit)
	return cb.Parameter(lit.Shape(), fmt.Sprintf("p%d", len(cb.inputs)-1))
}

func (cb *caseBuilder) done(t testing.TB, name string, root *hlo.Instruction, spec vkxla.ErrorSpec) opCase {
	return opCase{name: name, module: mustBuild(t, cb.Builder, root), inputs: cb.inputs, spec: spec}
}

func f32(dims ...int64) hlo.Shape { return hlo.MakeShape(hlo.F32, dims...) }

func s32Scalar(v int32) *hlo.Literal { return hlo.ScalarLiteral(v) }

func exact() vkxla.ErrorSpec { return vkxla.ErrorSpec{} }

// forDTypes runs mk for each supported dtype accepted by keep.
func forDTypes(g *gen, keep func(hlo.DType) bool, mk func(hlo.DType) opCase) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if keep == nil || keep(dt) {
			out = append(out, mk(dt))
		}
	}
	return out
}

func parameterCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "identity")
		return cb.done(t, "identity/"+dt.String(), cb.param(hlo.MakeShape(dt, 3, 4), unitDomain), exact())
	})
}

func constantCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
		cb := newCase(g, "constant")
		s := hlo.MakeShape(dt, 2, 3)
		c := cb.Constant(randomLiteral(g.rng, s, unitDomain))
		return cb.done(t, "add-constant/"+dt.String(), cb.Add(cb.param(s, unitDomain), c), vkxla.Tolerance(hlo.OpAdd, dt))
	})
}

func iotaCases(t testing.TB, g *gen) []opCase {
	out := forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
		cb := newCase(g, "iota")
		return cb.done(t, "iota/"+dt.String(), cb.Iota(hlo.MakeShape(dt, 4, 9), 1), exact())
	})
	cb := newCase(g, "iota")
	return append(out, cb.done(t, "iota/s32[3,70000]/dim0", cb.Iota(hlo.MakeShape(hlo.S32, 3, 70000), 0), exact()))
}

func compareCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dir := range []hlo.ComparisonDirection{hlo.CmpEQ, hlo.CmpNE, hlo.CmpLT, hlo.CmpLE, hlo.CmpGT, hlo.CmpGE} {
		out = append(out, forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
			cb := newCase(g, "compare")
			s := hlo.MakeShape(dt, 5, 7)
			x, y := cb.param(s, domain{-2, 2}), cb.param(s, domain{-2, 2})
			return cb.done(t, fmt.Sprintf("%v/%v", dir, dt), cb.Compare(x, y, dir), exact())
		})...)
	}
	return append(out, forDTypes(g, hlo.DType.IsFloat, func(dt hlo.DType) opCase {
		cb := newCase(g, "compare_total")
		nan := hlo.NewLiteral(hlo.MakeShape(dt, 6))
		for i, v := range []float64{0, negZero(), inf(), -inf(), nan64(), 1} {
			nan.SetFloat64(i, v)
		}
		x := cb.paramValue(nan)
		y := cb.param(hlo.MakeShape(dt, 6), unitDomain)
		return cb.done(t, "LT-TOTALORDER/"+dt.String(), cb.CompareTyped(x, y, hlo.CmpLT, hlo.CompareTotalOrder), exact())
	})...)
}

func selectCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "select")
		s := hlo.MakeShape(dt, 4, 33)
		p := cb.param(hlo.MakeShape(hlo.Pred, 4, 33), unitDomain)
		return cb.done(t, "select/"+dt.String(), cb.Select(p, cb.param(s, unitDomain), cb.param(s, unitDomain)), exact())
	})
}

func clampCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
		cb := newCase(g, "clamp")
		s := hlo.MakeShape(dt, 40)
		lo := cb.param(hlo.Scalar(dt), domain{-1, 0})
		hi := cb.param(hlo.Scalar(dt), domain{0, 1})
		return cb.done(t, "clamp/"+dt.String(), cb.Clamp(lo, cb.param(s, domain{-2, 2}), hi), exact())
	})
}

func convertCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, from := range g.dtypes {
		for _, to := range g.dtypes {
			cb := newCase(g, "convert")
			x := cb.param(hlo.MakeShape(from, 64), domain{-300, 300})
			out = append(out, cb.done(t, fmt.Sprintf("%v-to-%v", from, to), cb.Convert(x, to), exact()))
		}
	}
	return out
}

func bitcastCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, from := range g.dtypes {
		for _, to := range g.dtypes {
			if from.Size() != to.Size() || from == hlo.Pred || to == hlo.Pred {
				continue
			}
			cb := newCase(g, "bitcast")
			x := cb.param(hlo.MakeShape(from, 3, 5), unitDomain)
			out = append(out, cb.done(t, fmt.Sprintf("%v-as-%v", from, to), cb.BitcastConvert(x, to), exact()))
		}
	}
	return out
}

func broadcastCases(t testing.TB, g *gen) []opCase {
	cb1 := newCase(g, "broadcast")
	scalar := cb1.Broadcast(cb1.param(f32(), unitDomain), []int64{3, 70000}, nil)
	cb2 := newCase(g, "broadcast")
	inner := cb2.Broadcast(cb2.param(f32(5), unitDomain), []int64{2, 5, 3}, []int64{1})
	cb3 := newCase(g, "broadcast")
	perm := cb3.Broadcast(cb3.param(hlo.MakeShape(hlo.S8, 3, 2), unitDomain), []int64{2, 4, 3}, []int64{2, 0})
	return []opCase{
		cb1.done(t, "scalar-to-f32[3,70000]", scalar, exact()),
		cb2.done(t, "f32[5]-to-f32[2,5,3]", inner, exact()),
		cb3.done(t, "s8[3,2]-to-s8[2,4,3]", perm, exact()),
	}
}

func reshapeCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "reshape")
		return cb.done(t, "reshape/"+dt.String(), cb.Reshape(cb.param(hlo.MakeShape(dt, 2, 3, 5), unitDomain), 5, 6), exact())
	})
}

func transposeCases(t testing.TB, g *gen) []opCase {
	out := forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "transpose")
		return cb.done(t, "transpose/"+dt.String(), cb.Transpose(cb.param(hlo.MakeShape(dt, 2, 3, 5, 7), unitDomain), 3, 0, 2, 1), exact())
	})
	cb := newCase(g, "transpose")
	// 8.4M elements: more than 65535 workgroups of 128 invocations.
	large := cb.Transpose(cb.param(f32(2049, 4097), unitDomain), 1, 0)
	return append(out, cb.done(t, "transpose/f32[2049,4097]", large, exact()))
}

func sliceCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "slice")
	strided := cb.Slice(cb.param(f32(10, 9), unitDomain), []int64{1, 0}, []int64{9, 9}, []int64{3, 2})
	cb2 := newCase(g, "slice")
	plain := cb2.Slice(cb2.param(hlo.MakeShape(hlo.U16, 4, 5, 6), unitDomain), []int64{1, 2, 0}, []int64{3, 5, 6}, nil)
	return []opCase{cb.done(t, "strided", strided, exact()), cb2.done(t, "u16-plain", plain, exact())}
}

func concatenateCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "concatenate")
	c := cb.Concatenate(1, cb.param(f32(3, 2), unitDomain), cb.param(f32(3, 0), unitDomain), cb.param(f32(3, 5), unitDomain))
	cb2 := newCase(g, "concatenate")
	c2 := cb2.Concatenate(0, cb2.param(hlo.MakeShape(hlo.S32, 1), unitDomain), cb2.param(hlo.MakeShape(hlo.S32, 200), unitDomain))
	return []opCase{cb.done(t, "dim1-with-empty", c, exact()), cb2.done(t, "dim0", c2, exact())}
}

func padCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "pad")
	p := cb.Pad(cb.param(f32(4, 5), unitDomain), cb.param(f32(), unitDomain),
		[]hlo.PadDim{{Low: 1, High: 2, Interior: 1}, {Low: -1, High: 3, Interior: 2}})
	cb2 := newCase(g, "pad")
	p2 := cb2.Pad(cb2.param(hlo.MakeShape(hlo.S16, 6), unitDomain), cb2.param(hlo.Scalar(hlo.S16), unitDomain),
		[]hlo.PadDim{{Low: -2, High: -1}})
	return []opCase{cb.done(t, "interior-and-negative", p, exact()), cb2.done(t, "crop", p2, exact())}
}

func reverseCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "reverse")
	return []opCase{cb.done(t, "dims-0-2", cb.Reverse(cb.param(f32(3, 4, 5), unitDomain), 0, 2), exact())}
}

func dynamicSliceCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, start := range [][2]int32{{1, 2}, {-3, 7}, {5, 100}} { // in range, clamped low, clamped high
		cb := newCase(g, "dynamic_slice")
		x := cb.param(f32(6, 8), unitDomain)
		starts := []*hlo.Instruction{cb.paramValue(s32Scalar(start[0])), cb.paramValue(s32Scalar(start[1]))}
		out = append(out, cb.done(t, fmt.Sprintf("start-%d-%d", start[0], start[1]), cb.DynamicSlice(x, starts, []int64{3, 4}), exact()))
	}
	return out
}

func dynamicUpdateSliceCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, start := range [][2]int32{{1, 2}, {4, -1}} {
		cb := newCase(g, "dynamic_update_slice")
		x := cb.param(f32(6, 8), unitDomain)
		u := cb.param(f32(3, 4), unitDomain)
		starts := []*hlo.Instruction{cb.paramValue(s32Scalar(start[0])), cb.paramValue(s32Scalar(start[1]))}
		out = append(out, cb.done(t, fmt.Sprintf("start-%d-%d", start[0], start[1]), cb.DynamicUpdateSlice(x, u, starts), exact()))
	}
	return out
}

// gatherCases follow XLA's operation-semantics examples: rows of a matrix, and
// 2-D windows at (row, col) starts, with an out-of-bounds start that is clamped.
func gatherCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "gather_rows")
	x := cb.param(f32(5, 3), unitDomain)
	idx := cb.paramValue(hlo.MustFromSlice([]int64{4}, []int32{2, 0, 4, 2}))
	rows := cb.Gather(x, idx, hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0},
		StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1, 3})
	cb2 := newCase(g, "gather_windows")
	y := cb2.param(f32(6, 7), unitDomain)
	idx2 := cb2.paramValue(hlo.MustFromSlice([]int64{3, 2}, []int32{0, 0, 4, 5, 9, -2}))
	windows := cb2.Gather(y, idx2, hlo.GatherDims{OffsetDims: []int64{1, 2}, StartIndexMap: []int64{0, 1},
		IndexVectorDim: 1}, []int64{2, 3})
	return []opCase{cb.done(t, "rows", rows, exact()), cb2.done(t, "windows-clamped", windows, exact())}
}

// scatterCases add rows with a duplicate index, and replace (to_apply returns the
// update) with an out-of-bounds index that XLA skips.
func scatterCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum} {
		cb := newCase(g, "scatter")
		x := cb.param(f32(5, 3), unitDomain)
		idx := cb.paramValue(hlo.MustFromSlice([]int64{4, 1}, []int32{1, 3, 1, 7}))
		upd := cb.param(f32(4, 3), unitDomain)
		s := cb.Scatter([]*hlo.Instruction{x}, idx, []*hlo.Instruction{upd}, cb.Reducer(op, hlo.F32),
			hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
				ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1})
		out = append(out, cb.done(t, "rows-"+op.String(), s, vkxla.Tolerance(hlo.OpScatter, hlo.F32)))
	}
	return out
}

func reduceCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dims := range [][]int64{{1}, {0, 2}, {0, 1, 2}} {
		cb := newCase(g, "reduce_sum")
		x := cb.param(f32(7, 300, 5), unitDomain)
		r := cb.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{cb.ScalarConstant(hlo.F32, 0)}, cb.Reducer(hlo.OpAdd, hlo.F32), dims)
		out = append(out, cb.done(t, fmt.Sprintf("sum-dims-%v", dims), r, vkxla.Tolerance(hlo.OpReduce, hlo.F32)))
	}
	out = append(out, forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
		cb := newCase(g, "reduce_max")
		x := cb.param(hlo.MakeShape(dt, 33, 65), domain{-100, 100})
		init := cb.Constant(lowest(dt))
		r := cb.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{init}, cb.Reducer(hlo.OpMaximum, dt), []int64{1})
		return cb.done(t, "max/"+dt.String(), r, exact())
	})...)
	cb := newCase(g, "reduce_big")
	big := cb.param(f32(1<<20), unitDomain)
	sum := cb.Reduce([]*hlo.Instruction{big}, []*hlo.Instruction{cb.ScalarConstant(hlo.F32, 0)}, cb.Reducer(hlo.OpAdd, hlo.F32), []int64{0})
	out = append(out, cb.done(t, "sum-f32[1048576]", sum, vkxla.ErrorSpec{Abs: 2e-3, Rel: 1e-4}))
	return append(out, argmaxCase(t, g))
}

// lowest is the identity of maximum: -inf for floats, the minimum for integers.
func lowest(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dt.IsFloat():
		l.SetFloat64(0, inf()*-1)
	case dt.IsSigned():
		l.SetInt64(0, -1<<(dt.Bits()-1))
	}
	return l
}

// argmaxCase is a two-operand reduce: (value, index) pairs keep the larger value,
// the smaller index on ties.
func argmaxCase(t testing.TB, g *gen) opCase {
	rb := hlo.NewBuilder("argmax")
	av, ai := rb.Parameter(f32(), "av"), rb.Parameter(hlo.Scalar(hlo.S32), "ai")
	bv, bi := rb.Parameter(f32(), "bv"), rb.Parameter(hlo.Scalar(hlo.S32), "bi")
	gt := rb.Compare(av, bv, hlo.CmpGT)
	eq := rb.Compare(av, bv, hlo.CmpEQ)
	takeA := rb.Or(gt, rb.And(eq, rb.Compare(ai, bi, hlo.CmpLT)))
	comp, err := rb.BuildComputation(rb.Tuple(rb.Select(takeA, av, bv), rb.Select(takeA, ai, bi)))
	if err != nil {
		t.Fatal(err)
	}
	cb := newCase(g, "reduce_argmax")
	x := cb.param(f32(9, 40), domain{-3, 3})
	idx := cb.Iota(hlo.MakeShape(hlo.S32, 9, 40), 1)
	r := cb.Reduce([]*hlo.Instruction{x, idx},
		[]*hlo.Instruction{cb.Constant(lowest(hlo.F32)), cb.ScalarConstant(hlo.S32, 0)}, comp, []int64{1})
	return cb.done(t, "argmax", r, exact())
}

func reduceWindowCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "reduce_window")
	w := hlo.MakeWindow([]int64{1, 3, 3, 1}, []int64{1, 2, 2, 1})
	w[1].PadLow, w[1].PadHigh, w[2].PadLow, w[2].PadHigh = 1, 1, 1, 1
	x := cb.param(f32(2, 9, 8, 3), unitDomain)
	r := cb.ReduceWindow([]*hlo.Instruction{x}, []*hlo.Instruction{cb.Constant(lowest(hlo.F32))}, cb.Reducer(hlo.OpMaximum, hlo.F32), w)
	cb2 := newCase(g, "reduce_window_sum")
	w2 := hlo.MakeWindow([]int64{4}, []int64{1})
	w2[0].BaseDilation, w2[0].WindowDilation = 2, 2
	y := cb2.param(f32(17), unitDomain)
	r2 := cb2.ReduceWindow([]*hlo.Instruction{y}, []*hlo.Instruction{cb2.ScalarConstant(hlo.F32, 0)}, cb2.Reducer(hlo.OpAdd, hlo.F32), w2)
	return []opCase{cb.done(t, "maxpool-3x3-s2-p1", r, exact()),
		cb2.done(t, "sum-dilated", r2, vkxla.Tolerance(hlo.OpReduceWindow, hlo.F32))}
}

func selectAndScatterCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "select_and_scatter")
	x := cb.param(f32(7, 9), unitDomain) // 3×4 windows of 3×3, stride 2: neighbours overlap
	src := cb.param(f32(3, 4), unitDomain)
	sel, err := hlo.ScalarComparator(hlo.CmpGE, hlo.F32)
	if err != nil {
		t.Fatal(err)
	}
	s := cb.SelectAndScatter(x, src, cb.ScalarConstant(hlo.F32, 0), sel, cb.Reducer(hlo.OpAdd, hlo.F32),
		hlo.MakeWindow([]int64{3, 3}, []int64{2, 2}))
	return []opCase{cb.done(t, "maxpool-grad-overlapping", s, vkxla.Tolerance(hlo.OpSelectAndScatter, hlo.F32))}
}

func dotCases(t testing.TB, g *gen) []opCase {
	spec := vkxla.Tolerance(hlo.OpDot, hlo.F32)
	var out []opCase
	for _, mkn := range [][3]int64{{1, 1, 1}, {7, 13, 5}, {64, 64, 64}, {130, 67, 33}} {
		cb := newCase(g, "dot")
		d := cb.Dot(cb.param(f32(mkn[0], mkn[1]), unitDomain), cb.param(f32(mkn[1], mkn[2]), unitDomain))
		out = append(out, cb.done(t, fmt.Sprintf("matmul-%dx%dx%d", mkn[0], mkn[1], mkn[2]), d, spec))
	}
	cb := newCase(g, "dot_batch")
	bd := cb.DotGeneral(cb.param(f32(3, 5, 8), unitDomain), cb.param(f32(3, 6, 8), unitDomain),
		hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{2}})
	cb2 := newCase(g, "dot_vector")
	vd := cb2.Dot(cb2.param(f32(17), unitDomain), cb2.param(f32(17), unitDomain))
	cb3 := newCase(g, "dot_s32")
	id := cb3.Dot(cb3.param(hlo.MakeShape(hlo.S32, 4, 6), domain{-50, 50}), cb3.param(hlo.MakeShape(hlo.S32, 6, 3), domain{-50, 50}))
	return append(out, cb.done(t, "batch", bd, spec), cb2.done(t, "vector", vd, spec), cb3.done(t, "s32", id, exact()))
}

func convolutionCases(t testing.TB, g *gen) []opCase {
	spec := vkxla.Tolerance(hlo.OpConvolution, hlo.F32)
	cb := newCase(g, "conv")
	w := hlo.MakeWindow([]int64{3, 3}, []int64{2, 1})
	w[0].PadLow, w[0].PadHigh, w[1].PadLow, w[1].PadHigh = 1, 1, 1, 1
	c := cb.Conv(cb.param(f32(2, 3, 9, 8), unitDomain), cb.param(f32(4, 3, 3, 3), unitDomain), w, hlo.DefaultConvDims(2), 1, 1)
	cb2 := newCase(g, "conv_depthwise")
	w2 := hlo.MakeWindow([]int64{3, 3}, nil)
	w2[0].WindowDilation = 2
	dw := cb2.Conv(cb2.param(f32(1, 4, 10, 7), unitDomain), cb2.param(f32(4, 1, 3, 3), unitDomain), w2, hlo.DefaultConvDims(2), 4, 1)
	return []opCase{cb.done(t, "stride-pad", c, spec), cb2.done(t, "depthwise-dilated", dw, spec)}
}

func sortCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "sort")
	s := cb.Sort([]*hlo.Instruction{cb.param(f32(5, 37), domain{-9, 9})}, cb.Comparator(hlo.CmpLT, hlo.F32), 1, false)
	cb2 := newCase(g, "sort_pairs")
	keys := cb2.param(hlo.MakeShape(hlo.S32, 300), domain{0, 20}) // many ties
	vals := cb2.Iota(hlo.MakeShape(hlo.S32, 300), 0)
	s2 := cb2.Sort([]*hlo.Instruction{keys, vals}, cb2.Comparator(hlo.CmpGT, hlo.S32, hlo.S32), 0, true)
	return []opCase{cb.done(t, "rows-ascending", s, exact()), cb2.done(t, "stable-pairs-descending", s2, exact())}
}

func tupleCases(t testing.TB, g *gen) []opCase {
	cb := newCase(g, "tuple")
	x, y := cb.param(f32(4), unitDomain), cb.param(hlo.MakeShape(hlo.S32, 2), unitDomain)
	tup := cb.Tuple(cb.Negate(x), y, x)
	swapped := cb.Tuple(cb.GetTupleElement(tup, 1), cb.GetTupleElement(tup, 0))
	return []opCase{cb.done(t, "tuple-gte", swapped, exact())}
}

// whileCases: a counted loop accumulating x, and a loop whose body swaps its state.
func whileCases(t testing.TB, g *gen) []opCase {
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), f32(8))
	cond := mustComputation(t, "cond", func(b *hlo.Builder) *hlo.Instruction {
		s := b.Parameter(state, "s")
		return b.Compare(b.GetTupleElement(s, 0), b.ScalarConstant(hlo.S32, 10), hlo.CmpLT)
	})
	body := mustComputation(t, "body", func(b *hlo.Builder) *hlo.Instruction {
		s := b.Parameter(state, "s")
		i, acc := b.GetTupleElement(s, 0), b.GetTupleElement(s, 1)
		return b.Tuple(b.Add(i, b.ScalarConstant(hlo.S32, 1)), b.Add(b.Mul(acc, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), 8)), acc))
	})
	cb := newCase(g, "while")
	w := cb.While(cond, body, cb.Tuple(cb.ScalarConstant(hlo.S32, 0), cb.param(f32(8), unitDomain)))

	pair := hlo.MakeTuple(hlo.Scalar(hlo.S32), f32(3), f32(3))
	cond2 := mustComputation(t, "cond2", func(b *hlo.Builder) *hlo.Instruction {
		return b.Compare(b.GetTupleElement(b.Parameter(pair, "s"), 0), b.ScalarConstant(hlo.S32, 3), hlo.CmpLT)
	})
	swap := mustComputation(t, "swap", func(b *hlo.Builder) *hlo.Instruction {
		s := b.Parameter(pair, "s")
		return b.Tuple(b.Add(b.GetTupleElement(s, 0), b.ScalarConstant(hlo.S32, 1)), b.GetTupleElement(s, 2), b.GetTupleElement(s, 1))
	})
	cb2 := newCase(g, "while_swap")
	w2 := cb2.While(cond2, swap, cb2.Tuple(cb2.ScalarConstant(hlo.S32, 0), cb2.param(f32(3), unitDomain), cb2.param(f32(3), unitDomain)))
	return []opCase{cb.done(t, "counted-10", w, vkxla.ErrorSpec{Abs: 1e-5, Rel: 1e-5}), cb2.done(t, "swap-3", w2, exact())}
}

func conditionalCases(t testing.TB, g *gen) []opCase {
	neg := mustComputation(t, "neg", func(b *hlo.Builder) *hlo.Instruction { return b.Negate(b.Parameter(f32(5), "x")) })
	exp := mustComputation(t, "exp", func(b *hlo.Builder) *hlo.Instruction { return b.Exp(b.Parameter(f32(5), "x")) })
	id := mustComputation(t, "id", func(b *hlo.Builder) *hlo.Instruction { return b.Parameter(f32(5), "x") })
	var out []opCase
	for _, sel := range []int32{0, 1, 2, 7, -1} {
		cb := newCase(g, "conditional")
		x := cb.param(f32(5), unitDomain)
		c := cb.Conditional(cb.paramValue(s32Scalar(sel)), []*hlo.Computation{neg, exp, id}, []*hlo.Instruction{x, x, x})
		out = append(out, cb.done(t, fmt.Sprintf("index-%d", sel), c, vkxla.Tolerance(hlo.OpExp, hlo.F32)))
	}
	for _, p := range []bool{true, false} {
		cb := newCase(g, "conditional_pred")
		x := cb.param(f32(5), unitDomain)
		c := cb.Conditional(cb.paramValue(hlo.ScalarLiteral(p)), []*hlo.Computation{neg, exp}, []*hlo.Instruction{x, x})
		out = append(out, cb.done(t, fmt.Sprintf("pred-%v", p), c, vkxla.Tolerance(hlo.OpExp, hlo.F32)))
	}
	return out
}

func callCases(t testing.TB, g *gen) []opCase {
	f := mustComputation(t, "axpy", func(b *hlo.Builder) *hlo.Instruction {
		a, x, y := b.Parameter(f32(), "a"), b.Parameter(f32(6), "x"), b.Parameter(f32(6), "y")
		return b.Add(b.Mul(b.BroadcastScalar(a, 6), x), y)
	})
	cb := newCase(g, "call")
	c := cb.Call(f, cb.param(f32(), unitDomain), cb.param(f32(6), unitDomain), cb.param(f32(6), unitDomain))
	return []opCase{cb.done(t, "axpy", cb.Call(f, cb.ScalarConstant(hlo.F32, 2), c, c), vkxla.ErrorSpec{Abs: 1e-6, Rel: 1e-6})}
}

// fusionCases are what a fusion pass produces: a loop fusion of elementwise ops around
// broadcasts (of an operand and of a fused constant); input fusions whose reduce root
// is fed by elementwise producers; a multi-output loop fusion (a tuple root of two
// same-shape elementwise results), returned whole and taken apart; and a chain in
// which one fusion's output feeds the next and one operand is passed twice.
func fusionCases(t testing.TB, g *gen) []opCase {
	loop := mustComputation(t, "fused_loop", func(b *hlo.Builder) *hlo.Instruction {
		x, bias, a := b.Parameter(f32(5, 7), "x"), b.Parameter(f32(7), "bias"), b.Parameter(f32(), "a")
		y := b.Add(b.Mul(x, b.BroadcastScalar(a, 5, 7)), b.Broadcast(bias, []int64{5, 7}, []int64{1}))
		half := b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), 5, 7)
		return b.Max(b.Tanh(y), b.Mul(b.Negate(x), half))
	})
	rowSum := mustComputation(t, "fused_row_sum", func(b *hlo.Builder) *hlo.Instruction {
		x, y, zero := b.Parameter(f32(6, 9), "x"), b.Parameter(f32(6, 9), "y"), b.Parameter(f32(), "zero")
		return b.Reduce([]*hlo.Instruction{b.Mul(b.Exp(x), y)}, []*hlo.Instruction{zero}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
	})
	colMax := mustComputation(t, "fused_col_max", func(b *hlo.Builder) *hlo.Instruction {
		x := b.Parameter(f32(6, 9), "x")
		lowest := b.ScalarConstant(hlo.F32, math.Inf(-1))
		return b.Reduce([]*hlo.Instruction{b.Abs(b.Sub(x, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.25), 6, 9)))},
			[]*hlo.Instruction{lowest}, b.Reducer(hlo.OpMaximum, hlo.F32), []int64{0})
	})
	pair := mustComputation(t, "fused_pair", func(b *hlo.Builder) *hlo.Instruction {
		x, y := b.Parameter(f32(4, 5), "x"), b.Parameter(f32(4, 5), "y")
		return b.Tuple(b.Add(x, y), b.Mul(x, y))
	})
	var out []opCase
	add := func(cb *caseBuilder, name string, root *hlo.Instruction) {
		m := mustBuild(t, cb.Builder, root)
		out = append(out, opCase{name: name, module: m, inputs: cb.inputs, spec: vkxla.ProgramTolerance(m, hlo.F32)})
	}

	cb := newCase(g, "fusion_loop")
	add(cb, "loop/broadcast-mul-add-tanh-max", cb.Fusion(hlo.FusionLoop, loop,
		cb.param(f32(5, 7), unitDomain), cb.param(f32(7), unitDomain), cb.param(f32(), unitDomain)))

	cb = newCase(g, "fusion_input")
	add(cb, "input/reduce-rows-of-exp-mul", cb.Fusion(hlo.FusionInput, rowSum,
		cb.param(f32(6, 9), unitDomain), cb.param(f32(6, 9), unitDomain), cb.ScalarConstant(hlo.F32, 0)))

	cb = newCase(g, "fusion_input_max")
	add(cb, "input/reduce-cols-of-abs-sub", cb.Fusion(hlo.FusionInput, colMax, cb.param(f32(6, 9), unitDomain)))

	cb = newCase(g, "fusion_multi_output")
	add(cb, "multi-output/tuple", cb.Fusion(hlo.FusionLoop, pair, cb.param(f32(4, 5), unitDomain), cb.param(f32(4, 5), unitDomain)))

	cb = newCase(g, "fusion_multi_output_parts")
	p := cb.Fusion(hlo.FusionLoop, pair, cb.param(f32(4, 5), unitDomain), cb.param(f32(4, 5), unitDomain))
	add(cb, "multi-output/elements-subtracted", cb.Sub(cb.GetTupleElement(p, 0), cb.GetTupleElement(p, 1)))

	cb = newCase(g, "fusion_chain")
	x := cb.param(f32(6, 9), unitDomain)
	both := cb.Fusion(hlo.FusionLoop, pair, cb.param(f32(4, 5), unitDomain), cb.param(f32(4, 5), unitDomain))
	again := cb.Fusion(hlo.FusionLoop, pair, cb.GetTupleElement(both, 1), cb.GetTupleElement(both, 1))
	rows := cb.Fusion(hlo.FusionInput, rowSum, x, x, cb.ScalarConstant(hlo.F32, 0))
	cols := cb.Fusion(hlo.FusionInput, colMax, x)
	add(cb, "chain/fusion-feeds-fusion", cb.Tuple(again, rows, cols))
	return out
}

// mustComputation builds a sub-computation with its own builder.
func mustComputation(t testing.TB, name string, body func(*hlo.Builder) *hlo.Instruction) *hlo.Computation {
	t.Helper()
	b := hlo.NewBuilder(name)
	c, err := b.BuildComputation(body(b))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
