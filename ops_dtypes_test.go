package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Dtype sweeps for the ops that are not plain elementwise: each op over every element
// type the device supports that hlo's type rules allow for it (movement and tuple ops:
// every type, pred included; arithmetic combiners and contractions: the numeric
// types, as op.Info().Types and hlo.InferShape decide), with a couple of small shapes
// each — a rank-0 or size-1 edge and an odd size. Integer inputs are full-width random
// bits (sums and products wrap); float inputs lie in [-1, 1] so accumulations in f16
// and bf16 stay meaningful. Tolerances come from vkxla.Tolerance.

// withCases runs the generators one after the other.
func withCases(gens ...caseGen) caseGen {
	return func(t testing.TB, g *gen) []opCase {
		var out []opCase
		for _, gen := range gens {
			out = append(out, gen(t, g)...)
		}
		return out
	}
}

// indexDTypes are the supported integer types, used as start and scatter index types.
func indexDTypes(g *gen) []hlo.DType {
	var out []hlo.DType
	for _, dt := range g.dtypes {
		if dt.IsInteger() {
			out = append(out, dt)
		}
	}
	return out
}

// indexTypeFor pairs the i-th data type with an index type, cycling through them all.
func indexTypeFor(g *gen, i int) hlo.DType {
	idx := indexDTypes(g)
	return idx[i%len(idx)]
}

// indexLiteral builds an integer literal of type dt; negative values in unsigned
// types are replaced by large ones (clamped like any out-of-range start).
func indexLiteral(dt hlo.DType, dims []int64, vals ...int64) *hlo.Literal {
	lit := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i, v := range vals {
		if v < 0 && dt.IsUnsigned() {
			v = int64(1)<<(dt.Bits()-1) - 1 - v // far beyond every test dimension
		}
		lit.SetInt64(i, v)
	}
	return lit
}

// highest is the identity of minimum: +inf for floats, the maximum for integers.
func highest(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dt.IsFloat():
		l.SetFloat64(0, inf())
	case dt.IsSigned():
		l.SetInt64(0, 1<<(dt.Bits()-1)-1)
	default:
		l.SetUint64(0, ^uint64(0))
	}
	return l
}

// identity returns the init value that makes op a plain fold: 0, lowest, highest.
func identity(cb *caseBuilder, op hlo.Opcode, dt hlo.DType) *hlo.Instruction {
	switch op {
	case hlo.OpMaximum:
		return cb.Constant(lowest(dt))
	case hlo.OpMinimum:
		return cb.Constant(highest(dt))
	case hlo.OpAnd:
		return cb.ScalarConstant(dt, 1)
	}
	return cb.ScalarConstant(dt, 0)
}

// combinersFor lists the reducers hlo allows over dt: add, maximum and minimum for
// numbers; and, or and xor for pred (arithmetic on pred is refused).
func combinersFor(dt hlo.DType) []hlo.Opcode {
	if dt == hlo.Pred {
		return []hlo.Opcode{hlo.OpAnd, hlo.OpOr, hlo.OpXor}
	}
	return []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum, hlo.OpMinimum}
}

// sumOp and maxOp are the pooling reducers: add and maximum, or for pred or and and.
func sumOp(dt hlo.DType) hlo.Opcode { return pick(dt, hlo.OpAdd, hlo.OpOr) }
func maxOp(dt hlo.DType) hlo.Opcode { return pick(dt, hlo.OpMaximum, hlo.OpAnd) }

func pick(dt hlo.DType, numeric, pred hlo.Opcode) hlo.Opcode {
	if dt == hlo.Pred {
		return pred
	}
	return numeric
}

// replacer is the scatter combiner that keeps the update.
func replacer(t testing.TB, dt hlo.DType) *hlo.Computation {
	return mustComputation(t, "replace_"+dt.String(), func(b *hlo.Builder) *hlo.Instruction {
		b.Parameter(hlo.Scalar(dt), "current")
		return b.Parameter(hlo.Scalar(dt), "update")
	})
}

func broadcastDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "broadcast")
		scalar := cb.Broadcast(cb.param(hlo.Scalar(dt), unitDomain), []int64{3, 1, 5}, nil)
		cb2 := newCase(g, "broadcast")
		inner := cb2.Broadcast(cb2.param(hlo.MakeShape(dt, 3, 1), unitDomain), []int64{2, 3, 5, 1}, []int64{1, 3})
		out = append(out, cb.done(t, "scalar-to-[3,1,5]/"+dt.String(), scalar, exact()),
			cb2.done(t, "[3,1]-to-[2,3,5,1]/"+dt.String(), inner, exact()))
	}
	return out
}

func sliceDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "slice")
		one := cb.Slice(cb.param(hlo.MakeShape(dt, 7), unitDomain), []int64{3}, []int64{4}, nil)
		cb2 := newCase(g, "slice")
		strided := cb2.Slice(cb2.param(hlo.MakeShape(dt, 2, 3, 7), unitDomain), []int64{1, 0, 1}, []int64{2, 3, 7}, []int64{1, 2, 3})
		out = append(out, cb.done(t, "size-1/"+dt.String(), one, exact()),
			cb2.done(t, "strided-3d/"+dt.String(), strided, exact()))
	}
	return out
}

func concatenateDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "concatenate")
		c := cb.Concatenate(0, cb.param(hlo.MakeShape(dt, 1), unitDomain), cb.param(hlo.MakeShape(dt, 6), unitDomain))
		cb2 := newCase(g, "concatenate")
		c2 := cb2.Concatenate(1, cb2.param(hlo.MakeShape(dt, 3, 2), unitDomain), cb2.param(hlo.MakeShape(dt, 3, 0), unitDomain),
			cb2.param(hlo.MakeShape(dt, 3, 5), unitDomain))
		out = append(out, cb.done(t, "1+6/"+dt.String(), c, exact()),
			cb2.done(t, "dim1-with-empty/"+dt.String(), c2, exact()))
	}
	return out
}

func padDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "pad")
		p := cb.Pad(cb.param(hlo.MakeShape(dt, 1), unitDomain), cb.param(hlo.Scalar(dt), unitDomain),
			[]hlo.PadDim{{Low: 2, High: 1}})
		cb2 := newCase(g, "pad")
		p2 := cb2.Pad(cb2.param(hlo.MakeShape(dt, 3, 5), unitDomain), cb2.param(hlo.Scalar(dt), unitDomain),
			[]hlo.PadDim{{Low: 1, High: -1, Interior: 1}, {Low: -2, High: 2, Interior: 2}})
		out = append(out, cb.done(t, "size-1/"+dt.String(), p, exact()),
			cb2.done(t, "interior-and-negative/"+dt.String(), p2, exact()))
	}
	return out
}

// copyCases: copy of every dtype, alone (the entry's output is the copy) and with
// its operand also returned, so the two outputs are distinct buffers.
func copyCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "copy")
		c := cb.Copy(cb.param(hlo.MakeShape(dt, 3, 5), unitDomain))
		cb2 := newCase(g, "copy")
		x := cb2.param(hlo.MakeShape(dt), unitDomain)
		c2 := cb2.Tuple(cb2.Copy(x), x)
		out = append(out, cb.done(t, "copy/"+dt.String(), c, exact()), cb2.done(t, "scalar-and-operand/"+dt.String(), c2, exact()))
	}
	return out
}

func reverseDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		cb := newCase(g, "reverse")
		r := cb.Reverse(cb.param(hlo.MakeShape(dt, 1), unitDomain), 0)
		cb2 := newCase(g, "reverse")
		r2 := cb2.Reverse(cb2.param(hlo.MakeShape(dt, 3, 4, 5), unitDomain), 0, 2)
		out = append(out, cb.done(t, "size-1/"+dt.String(), r, exact()),
			cb2.done(t, "dims-0-2/"+dt.String(), r2, exact()))
	}
	return out
}

// startParams adds one scalar start-index parameter of type idx per value.
func startParams(cb *caseBuilder, idx hlo.DType, vals ...int64) []*hlo.Instruction {
	var out []*hlo.Instruction
	for _, v := range vals {
		out = append(out, cb.paramValue(indexLiteral(idx, nil, v)))
	}
	return out
}

// dynamicSliceDTypeCases pair each data type with an index type (cycling through all
// integer types); starts in range, clamped low and clamped high.
func dynamicSliceDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		idx := indexTypeFor(g, i)
		cb := newCase(g, "dynamic_slice")
		d := cb.DynamicSlice(cb.param(hlo.MakeShape(dt, 7), unitDomain), startParams(cb, idx, 5), []int64{3})
		cb2 := newCase(g, "dynamic_slice")
		d2 := cb2.DynamicSlice(cb2.param(hlo.MakeShape(dt, 4, 5), unitDomain), startParams(cb2, idx, 1, -2), []int64{1, 3})
		name := fmt.Sprintf("%v/%v-starts", dt, idx)
		out = append(out, cb.done(t, "clamped-high/"+name, d, exact()),
			cb2.done(t, "clamped-low/"+name, d2, exact()))
	}
	return out
}

func dynamicUpdateSliceDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		idx := indexTypeFor(g, i+3)
		cb := newCase(g, "dynamic_update_slice")
		d := cb.DynamicUpdateSlice(cb.param(hlo.MakeShape(dt, 7), unitDomain), cb.param(hlo.MakeShape(dt, 3), unitDomain),
			startParams(cb, idx, 6))
		cb2 := newCase(g, "dynamic_update_slice")
		d2 := cb2.DynamicUpdateSlice(cb2.param(hlo.MakeShape(dt, 4, 5), unitDomain), cb2.param(hlo.MakeShape(dt, 1, 3), unitDomain),
			startParams(cb2, idx, 2, -1))
		cb3 := newCase(g, "dynamic_update_slice")
		d3 := cb3.DynamicUpdateSlice(cb3.param(hlo.Scalar(dt), unitDomain), cb3.param(hlo.Scalar(dt), unitDomain), nil)
		name := fmt.Sprintf("%v/%v-starts", dt, idx)
		out = append(out, cb.done(t, "clamped-high/"+name, d, exact()),
			cb2.done(t, "clamped-low/"+name, d2, exact()),
			cb3.done(t, "rank-0/"+dt.String(), d3, exact()))
	}
	return out
}

// gatherDTypeCases: one element at a scalar index (a rank-0 result), and clamped 2-D
// windows, for every data type paired with an index type.
func gatherDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		idx := indexTypeFor(g, i+5)
		cb := newCase(g, "gather_scalar")
		x := cb.param(hlo.MakeShape(dt, 7), unitDomain)
		elem := cb.Gather(x, cb.paramValue(indexLiteral(idx, nil, 4)), hlo.GatherDims{CollapsedSliceDims: []int64{0},
			StartIndexMap: []int64{0}, IndexVectorDim: 0}, []int64{1})
		cb2 := newCase(g, "gather_windows")
		y := cb2.param(hlo.MakeShape(dt, 6, 7), unitDomain)
		windows := cb2.Gather(y, cb2.paramValue(indexLiteral(idx, []int64{3, 2}, 0, 0, 4, 5, 9, -2)),
			hlo.GatherDims{OffsetDims: []int64{1, 2}, StartIndexMap: []int64{0, 1}, IndexVectorDim: 1}, []int64{2, 3})
		name := fmt.Sprintf("%v/%v-indices", dt, idx)
		out = append(out, cb.done(t, "scalar/"+name, elem, exact()),
			cb2.done(t, "windows-clamped/"+name, windows, exact()))
	}
	return out
}

// scatterDTypeCases: rows with a duplicate and an out-of-bounds index, combined by
// add, max and min (numeric types) or and, or and xor (pred), and by replace (every
// type: the last update wins).
func scatterDTypeCases(t testing.TB, g *gen) []opCase {
	rows := hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
	var out []opCase
	for i, dt := range g.dtypes {
		idx := indexTypeFor(g, i+1)
		for _, op := range append(combinersFor(dt), hlo.OpInvalid) {
			cb := newCase(g, "scatter")
			comp, name, spec := replacer(t, dt), "replace", exact()
			if op != hlo.OpInvalid {
				comp, name, spec = cb.Reducer(op, dt), op.String(), vkxla.Tolerance(hlo.OpScatter, dt)
			}
			x := cb.param(hlo.MakeShape(dt, 5, 3), unitDomain)
			ind := cb.paramValue(indexLiteral(idx, []int64{4, 1}, 1, 3, 1, 7))
			s := cb.Scatter([]*hlo.Instruction{x}, ind, []*hlo.Instruction{cb.param(hlo.MakeShape(dt, 4, 3), unitDomain)}, comp, rows)
			out = append(out, cb.done(t, fmt.Sprintf("rows-%s/%v/%v-indices", name, dt, idx), s, spec))
		}
		// A rank-0 index into a vector: one element, replaced.
		cb := newCase(g, "scatter_scalar")
		x := cb.param(hlo.MakeShape(dt, 5), unitDomain)
		s := cb.Scatter([]*hlo.Instruction{x}, cb.paramValue(indexLiteral(idx, nil, 2)),
			[]*hlo.Instruction{cb.param(hlo.Scalar(dt), unitDomain)}, replacer(t, dt),
			hlo.ScatterDims{InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 0})
		out = append(out, cb.done(t, fmt.Sprintf("scalar-replace/%v/%v-index", dt, idx), s, exact()))
	}
	return out
}

// reduceDTypeCases: sum, max and min over every numeric type (and, or, xor over pred),
// over one dimension, two non-adjacent ones, and a size-1 vector to a scalar.
func reduceDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		for _, op := range combinersFor(dt) {
			spec := exact()
			if op == hlo.OpAdd {
				spec = vkxla.Tolerance(hlo.OpReduce, dt)
			}
			for _, c := range []struct {
				dims    []int64
				reduced []int64
			}{{[]int64{5, 7, 3}, []int64{1}}, {[]int64{5, 7, 3}, []int64{0, 2}}, {[]int64{1}, []int64{0}}} {
				cb := newCase(g, "reduce")
				x := cb.param(hlo.MakeShape(dt, c.dims...), unitDomain)
				r := cb.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{identity(cb, op, dt)}, cb.Reducer(op, dt), c.reduced)
				out = append(out, cb.done(t, fmt.Sprintf("%v/%v/dims-%v", op, hlo.MakeShape(dt, c.dims...), c.reduced), r, spec))
			}
		}
	}
	return out
}

// reduceWindowDTypeCases: a padded 3×3 max pool with stride 2 and a dilated 1-D sum
// pool, over every numeric type (and and or pools over pred).
func reduceWindowDTypeCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "reduce_window")
		w := hlo.MakeWindow([]int64{3, 3}, []int64{2, 2})
		w[0].PadLow, w[0].PadHigh, w[1].PadLow, w[1].PadHigh = 1, 1, 1, 1
		x := cb.param(hlo.MakeShape(dt, 7, 6), unitDomain)
		mx := cb.ReduceWindow([]*hlo.Instruction{x}, []*hlo.Instruction{identity(cb, maxOp(dt), dt)}, cb.Reducer(maxOp(dt), dt), w)
		w2 := hlo.MakeWindow([]int64{3}, []int64{2})
		w2[0].BaseDilation, w2[0].WindowDilation = 2, 2
		sum := cb.ReduceWindow([]*hlo.Instruction{cb.param(hlo.MakeShape(dt, 9), unitDomain)},
			[]*hlo.Instruction{identity(cb, sumOp(dt), dt)}, cb.Reducer(sumOp(dt), dt), w2)
		w3 := hlo.MakeWindow([]int64{1}, nil)
		one := cb.ReduceWindow([]*hlo.Instruction{cb.param(hlo.MakeShape(dt, 1), unitDomain)},
			[]*hlo.Instruction{identity(cb, maxOp(dt), dt)}, cb.Reducer(maxOp(dt), dt), w3)
		return cb.done(t, "maxpool-sumpool-size1/"+dt.String(), cb.Tuple(mx, sum, one), vkxla.Tolerance(hlo.OpReduceWindow, dt))
	})
}

// selectAndScatterDTypeCases: the max-pool gradient with overlapping windows, and a
// 1-D pool whose last operand element is in no window, over every type (for pred
// the scatter combiner is or).
func selectAndScatterDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		sel, err := hlo.ScalarComparator(hlo.CmpGE, dt)
		if err != nil {
			t.Fatal(err)
		}
		spec := vkxla.Tolerance(hlo.OpSelectAndScatter, dt)
		cb := newCase(g, "select_and_scatter")
		s := cb.SelectAndScatter(cb.param(hlo.MakeShape(dt, 7, 5), unitDomain), cb.param(hlo.MakeShape(dt, 3, 2), unitDomain),
			cb.ScalarConstant(dt, 0), sel, cb.Reducer(sumOp(dt), dt), hlo.MakeWindow([]int64{3, 3}, []int64{2, 2}))
		cb2 := newCase(g, "select_and_scatter")
		s2 := cb2.SelectAndScatter(cb2.param(hlo.MakeShape(dt, 5), unitDomain), cb2.param(hlo.MakeShape(dt, 2), unitDomain),
			cb2.ScalarConstant(dt, 0), sel, cb2.Reducer(sumOp(dt), dt), hlo.MakeWindow([]int64{2}, []int64{2}))
		out = append(out, cb.done(t, "overlapping/"+dt.String(), s, spec), cb2.done(t, "1d-odd/"+dt.String(), s2, spec))
	}
	return out
}

// dotDTypeCases: matrix·matrix with odd sizes, vector·vector to a scalar and a batch
// dot, over every numeric type (integers wrap).
func dotDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if !dt.IsNumeric() {
			continue
		}
		spec := vkxla.Tolerance(hlo.OpDot, dt)
		cb := newCase(g, "dot")
		mm := cb.Dot(cb.param(hlo.MakeShape(dt, 7, 13), unitDomain), cb.param(hlo.MakeShape(dt, 13, 5), unitDomain))
		cb2 := newCase(g, "dot_vector")
		vv := cb2.Dot(cb2.param(hlo.MakeShape(dt, 9), unitDomain), cb2.param(hlo.MakeShape(dt, 9), unitDomain))
		cb3 := newCase(g, "dot_batch")
		bd := cb3.DotGeneral(cb3.param(hlo.MakeShape(dt, 3, 5, 8), unitDomain), cb3.param(hlo.MakeShape(dt, 3, 8, 1), unitDomain),
			hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}})
		out = append(out, cb.done(t, "matmul-7x13x5/"+dt.String(), mm, spec),
			cb2.done(t, "vector-9/"+dt.String(), vv, spec), cb3.done(t, "batch/"+dt.String(), bd, spec))
	}
	return out
}

// convolutionDTypeCases: a strided, padded 2-D convolution and a dilated depthwise
// one, over every numeric type.
func convolutionDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if !dt.IsNumeric() {
			continue
		}
		spec := vkxla.Tolerance(hlo.OpConvolution, dt)
		cb := newCase(g, "conv")
		w := hlo.MakeWindow([]int64{3, 3}, []int64{2, 1})
		w[0].PadLow, w[0].PadHigh, w[1].PadLow, w[1].PadHigh = 1, 1, 1, 1
		c := cb.Conv(cb.param(hlo.MakeShape(dt, 1, 3, 7, 5), unitDomain), cb.param(hlo.MakeShape(dt, 2, 3, 3, 3), unitDomain), w, hlo.DefaultConvDims(2), 1, 1)
		cb2 := newCase(g, "conv_depthwise")
		w2 := hlo.MakeWindow([]int64{3}, nil)
		w2[0].WindowDilation = 2
		dw := cb2.Conv(cb2.param(hlo.MakeShape(dt, 2, 3, 9), unitDomain), cb2.param(hlo.MakeShape(dt, 3, 1, 3), unitDomain), w2, hlo.DefaultConvDims(1), 3, 1)
		out = append(out, cb.done(t, "stride-pad/"+dt.String(), c, spec), cb2.done(t, "depthwise-dilated/"+dt.String(), dw, spec))
	}
	return out
}

// specialFloats fills the first elements of a float literal with NaN, ±0 and ±inf so
// that TOTALORDER sorts have something to order.
func specialFloats(lit *hlo.Literal) *hlo.Literal {
	if !lit.DType().IsFloat() {
		return lit
	}
	for i, v := range []float64{nan64(), 0, negZero(), inf(), -inf(), -nan64(), negZero(), 0} {
		if i < lit.NumElements() {
			lit.SetFloat64(i, v)
		}
	}
	return lit
}

// sortDTypeCases: rows of keys (floats with NaN and ±0 under TOTALORDER), a size-1
// sort, and a stable three-operand sort by keys with many ties, over every type
// (compare orders pred false < true).
func sortDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		cb := newCase(g, "sort")
		keys := cb.paramValue(specialFloats(randomLiteral(g.rng, hlo.MakeShape(dt, 3, 17), unitDomain)))
		s := cb.Sort([]*hlo.Instruction{keys}, cb.Comparator(hlo.CmpLT, dt), 1, false)
		cb2 := newCase(g, "sort_one")
		s2 := cb2.Sort([]*hlo.Instruction{cb2.param(hlo.MakeShape(dt, 1), unitDomain)}, cb2.Comparator(hlo.CmpGT, dt), 0, false)
		other := g.dtypes[(i+4)%len(g.dtypes)]
		cb3 := newCase(g, "sort_triples")
		k := cb3.param(hlo.MakeShape(dt, 41), domain{0, 6}) // integer keys: many ties
		vals := cb3.Iota(hlo.MakeShape(hlo.S32, 41), 0)
		s3 := cb3.Sort([]*hlo.Instruction{k, vals, cb3.param(hlo.MakeShape(other, 41), unitDomain)},
			cb3.Comparator(hlo.CmpGT, dt, hlo.S32, other), 0, true)
		out = append(out, cb.done(t, "rows-ascending/"+dt.String(), s, exact()),
			cb2.done(t, "size-1/"+dt.String(), s2, exact()),
			cb3.done(t, fmt.Sprintf("stable-triples-descending/%v-s32-%v", dt, other), s3, exact()))
	}
	return out
}

func tupleDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		other := g.dtypes[(i+1)%len(g.dtypes)]
		cb := newCase(g, "tuple")
		x, y := cb.param(hlo.MakeShape(dt, 5), unitDomain), cb.param(hlo.Scalar(other), unitDomain)
		tup := cb.Tuple(x, y, cb.Tuple(y, x))
		inner := cb.GetTupleElement(tup, 2)
		swapped := cb.Tuple(cb.GetTupleElement(inner, 0), cb.GetTupleElement(tup, 0))
		out = append(out, cb.done(t, fmt.Sprintf("nested-gte/%v-%v", dt, other), swapped, exact()))
	}
	return out
}

// step is the loop and branch body's per-type work: add for numbers, xor for pred.
func step(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
	if x.Shape.DType == hlo.Pred {
		return b.Xor(x, y)
	}
	return b.Add(x, y)
}

// whileDTypeCases: a loop counted in each integer type (s32 for the others) carrying
// an accumulator of the type: acc += x, four times.
func whileDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		ctr := hlo.S32
		if dt.IsInteger() {
			ctr = dt
		}
		state := hlo.MakeTuple(hlo.Scalar(ctr), hlo.MakeShape(dt, 3), hlo.MakeShape(dt, 3))
		cond := mustComputation(t, "cond", func(b *hlo.Builder) *hlo.Instruction {
			return b.Compare(b.GetTupleElement(b.Parameter(state, "s"), 0), b.ScalarConstant(ctr, 4), hlo.CmpLT)
		})
		body := mustComputation(t, "body", func(b *hlo.Builder) *hlo.Instruction {
			s := b.Parameter(state, "s")
			x := b.GetTupleElement(s, 2)
			return b.Tuple(b.Add(b.GetTupleElement(s, 0), b.ScalarConstant(ctr, 1)), step(b, b.GetTupleElement(s, 1), x), x)
		})
		cb := newCase(g, "while")
		w := cb.While(cond, body, cb.Tuple(cb.ScalarConstant(ctr, 0), cb.param(hlo.MakeShape(dt, 3), unitDomain), cb.param(hlo.MakeShape(dt, 3), unitDomain)))
		m := mustBuild(t, cb.Builder, w)
		out = append(out, opCase{name: fmt.Sprintf("counted-4/%v-counter/%v", ctr, dt), module: m, inputs: cb.inputs,
			spec: vkxla.ProgramTolerance(m, dt)})
	}
	return out
}

// conditionalDTypeCases: three branches over dt[5] (negate or not, identity,
// doubling) selected by an s32 index, in range and out of range, and by a pred.
func conditionalDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		s := hlo.MakeShape(dt, 5)
		flip := mustComputation(t, "flip", func(b *hlo.Builder) *hlo.Instruction {
			if dt == hlo.Pred {
				return b.Not(b.Parameter(s, "x"))
			}
			return b.Negate(b.Parameter(s, "x"))
		})
		id := mustComputation(t, "id", func(b *hlo.Builder) *hlo.Instruction { return b.Parameter(s, "x") })
		twice := mustComputation(t, "twice", func(b *hlo.Builder) *hlo.Instruction {
			x := b.Parameter(s, "x")
			return step(b, x, x)
		})
		spec := vkxla.Tolerance(hlo.OpAdd, dt)
		for _, sel := range []int32{0, 2, 5} {
			cb := newCase(g, "conditional")
			x := cb.param(s, unitDomain)
			c := cb.Conditional(cb.paramValue(s32Scalar(sel)), []*hlo.Computation{flip, id, twice}, []*hlo.Instruction{x, x, x})
			out = append(out, cb.done(t, fmt.Sprintf("index-%d/%v", sel, dt), c, spec))
		}
		cb := newCase(g, "conditional_pred")
		x := cb.param(s, unitDomain)
		c := cb.Conditional(cb.paramValue(hlo.ScalarLiteral(false)), []*hlo.Computation{flip, twice}, []*hlo.Instruction{x, x})
		out = append(out, cb.done(t, "pred-false/"+dt.String(), c, spec))
	}
	return out
}

// callDTypeCases: a called computation a*x + y (and(a, x) xor y for pred), called
// twice, once on the first call's result.
func callDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		f := mustComputation(t, "axpy", func(b *hlo.Builder) *hlo.Instruction {
			a, x, y := b.Parameter(hlo.Scalar(dt), "a"), b.Parameter(hlo.MakeShape(dt, 3), "x"), b.Parameter(hlo.MakeShape(dt, 3), "y")
			if dt == hlo.Pred {
				return step(b, b.And(b.BroadcastScalar(a, 3), x), y)
			}
			return step(b, b.Mul(b.BroadcastScalar(a, 3), x), y)
		})
		cb := newCase(g, "call")
		c := cb.Call(f, cb.param(hlo.Scalar(dt), unitDomain), cb.param(hlo.MakeShape(dt, 3), unitDomain), cb.param(hlo.MakeShape(dt, 3), unitDomain))
		m := mustBuild(t, cb.Builder, cb.Call(f, cb.param(hlo.Scalar(dt), unitDomain), c, c))
		out = append(out, opCase{name: "axpy-twice/" + dt.String(), module: m, inputs: cb.inputs, spec: vkxla.ProgramTolerance(m, dt)})
	}
	return out
}

// fusionDTypeCases: per type, a multi-output loop fusion (a*x + y, x + x), with and
// and xor for pred, and an input fusion reducing (x + y) over its rows with each
// combiner the type allows.
func fusionDTypeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		s := hlo.MakeShape(dt, 3, 5)
		loop := mustComputation(t, "fused_axpy", func(b *hlo.Builder) *hlo.Instruction {
			a, x, y := b.Parameter(hlo.Scalar(dt), "a"), b.Parameter(s, "x"), b.Parameter(s, "y")
			ax := b.Mul
			if dt == hlo.Pred {
				ax = b.And
			}
			return b.Tuple(step(b, ax(b.BroadcastScalar(a, 3, 5), x), y), step(b, x, x))
		})
		cb := newCase(g, "fusion_loop")
		m := mustBuild(t, cb.Builder, cb.Fusion(hlo.FusionLoop, loop,
			cb.param(hlo.Scalar(dt), unitDomain), cb.param(s, unitDomain), cb.param(s, unitDomain)))
		out = append(out, opCase{name: "loop-axpy/" + dt.String(), module: m, inputs: cb.inputs, spec: vkxla.ProgramTolerance(m, dt)})

		for _, op := range combinersFor(dt) {
			reduce := mustComputation(t, "fused_reduce", func(b *hlo.Builder) *hlo.Instruction {
				x, y, init := b.Parameter(s, "x"), b.Parameter(s, "y"), b.Parameter(hlo.Scalar(dt), "init")
				return b.Reduce([]*hlo.Instruction{step(b, x, y)}, []*hlo.Instruction{init}, b.Reducer(op, dt), []int64{1})
			})
			cb := newCase(g, "fusion_input")
			m := mustBuild(t, cb.Builder, cb.Fusion(hlo.FusionInput, reduce,
				cb.param(s, unitDomain), cb.param(s, unitDomain), identity(cb, op, dt)))
			out = append(out, opCase{name: fmt.Sprintf("input-%v/%v", op, dt), module: m, inputs: cb.inputs, spec: vkxla.ProgramTolerance(m, dt)})
		}
	}
	return out
}

// specialRows is a float literal whose rows hold NaN, ±0 against each other, ±inf
// and all -inf, amid ordinary values: maximum and minimum must propagate NaN and
// order −0 < +0 (docs/cpuref.md).
func specialRows(dt hlo.DType) *hlo.Literal {
	n, z, i := nan64(), negZero(), inf()
	rows := [][]float64{
		{0.5, -0.25, n, 1, -1, 0.75},
		{z, 0, z, -0.5, -1, z},
		{0, z, 0.5, 1, 0, 0.25},
		{-0.5, i, -i, 0.5, 0, 1},
		{-i, -i, -i, -i, -i, -i},
	}
	lit := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(rows)), int64(len(rows[0]))))
	for r, row := range rows {
		for c, v := range row {
			lit.SetFloat64(r*len(row)+c, v)
		}
	}
	return lit
}

// tieLiteral draws floats or integers from {0, 1, 2}: many equal elements.
func tieLiteral(g *gen, s hlo.Shape) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		lit.SetInt64(i, int64(g.rng.IntN(3)))
	}
	return lit
}

// specialReduceCases: max and min reductions (both dims) and a max pool over NaN,
// ±0 and ±inf, for every float type.
func specialReduceCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if !dt.IsFloat() {
			continue
		}
		for _, op := range []hlo.Opcode{hlo.OpMaximum, hlo.OpMinimum} {
			for _, dim := range []int64{0, 1} {
				cb := newCase(g, "reduce_special")
				r := cb.Reduce([]*hlo.Instruction{cb.paramValue(specialRows(dt))}, []*hlo.Instruction{identity(cb, op, dt)},
					cb.Reducer(op, dt), []int64{dim})
				out = append(out, cb.done(t, fmt.Sprintf("%v-nan-zeros-inf/%v/dim-%d", op, dt, dim), r, exact()))
			}
		}
	}
	return out
}

func specialReduceWindowCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, hlo.DType.IsFloat, func(dt hlo.DType) opCase {
		var out []*hlo.Instruction
		cb := newCase(g, "reduce_window_special")
		x := cb.paramValue(specialRows(dt))
		for _, op := range []hlo.Opcode{hlo.OpMaximum, hlo.OpMinimum} {
			out = append(out, cb.ReduceWindow([]*hlo.Instruction{x}, []*hlo.Instruction{identity(cb, op, dt)},
				cb.Reducer(op, dt), hlo.MakeWindow([]int64{2, 3}, []int64{1, 2})))
		}
		return cb.done(t, "max-min-nan-zeros-inf/"+dt.String(), cb.Tuple(out...), exact())
	})
}

// specialScatterCases: max and min scatters of NaN, ±0 and ±inf rows, duplicates
// included, for every float type.
func specialScatterCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if !dt.IsFloat() {
			continue
		}
		for _, op := range []hlo.Opcode{hlo.OpMaximum, hlo.OpMinimum} {
			cb := newCase(g, "scatter_special")
			x := cb.param(hlo.MakeShape(dt, 3, 6), unitDomain)
			ind := cb.paramValue(indexLiteral(hlo.S32, []int64{5}, 0, 1, 2, 1, 0))
			s := cb.Scatter([]*hlo.Instruction{x}, ind, []*hlo.Instruction{cb.paramValue(specialRows(dt))}, cb.Reducer(op, dt),
				hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
					ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1})
			out = append(out, cb.done(t, fmt.Sprintf("rows-%v-nan-zeros-inf/%v", op, dt), s, exact()))
		}
	}
	return out
}

// tieSelectAndScatterCases: windows full of equal maxima (GE keeps the first) and,
// for floats, NaN and ±0, for every type.
func tieSelectAndScatterCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		sel, err := hlo.ScalarComparator(hlo.CmpGE, dt)
		if err != nil {
			t.Fatal(err)
		}
		cb := newCase(g, "select_and_scatter_ties")
		x := cb.paramValue(tieLiteral(g, hlo.MakeShape(dt, 5, 6)))
		if dt.IsFloat() {
			x = cb.paramValue(specialRows(dt))
		}
		w := hlo.MakeWindow([]int64{2, 3}, []int64{1, 1})
		w[1].PadLow, w[1].PadHigh = 1, 0
		s := cb.SelectAndScatter(x, cb.paramValue(tieLiteral(g, hlo.MakeShape(dt, 4, 5))), cb.ScalarConstant(dt, 0), sel,
			cb.Reducer(sumOp(dt), dt), w)
		out = append(out, cb.done(t, "ties-padded/"+dt.String(), s, vkxla.Tolerance(hlo.OpSelectAndScatter, dt)))
	}
	return out
}

// accumulationDotCases: a dot of 4096 ones in f16 and bf16 accumulates in f32 and
// rounds once (docs/cpuref.md): 4096, not the 2048 (f16) or 256 (bf16) that
// rounding each partial sum to the type would give.
func accumulationDotCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, func(dt hlo.DType) bool { return dt == hlo.F16 || dt == hlo.BF16 }, func(dt hlo.DType) opCase {
		ones := func(dims ...int64) *hlo.Literal {
			l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
			for i := range l.NumElements() {
				l.SetFloat64(i, 1)
			}
			return l
		}
		cb := newCase(g, "dot_ones")
		d := cb.Dot(cb.paramValue(ones(2, 4096)), cb.paramValue(ones(4096, 3)))
		return cb.done(t, "ones-2x4096x3/"+dt.String(), d, exact())
	})
}

// smallIntLiteral draws floats or integers from [-k, k]: float sums of them are
// exact in any order while partial sums stay below 2^(mantissa bits), so a tree
// reduction of f16 or bf16 must match cpuref's sequential fold.
func smallIntLiteral(g *gen, s hlo.Shape, k int) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		lit.SetInt64(i, int64(g.rng.IntN(2*k+1)-k))
	}
	return lit
}

// treeReduceCases: reductions of an odd extent past the workgroup-tree threshold,
// with a non-identity init for the sum, over every type (integer sums wrap; pred
// folds with and, or and xor).
func treeReduceCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		for _, op := range combinersFor(dt) {
			cb := newCase(g, "reduce_tree")
			s := hlo.MakeShape(dt, 2, 1537)
			x := cb.param(s, unitDomain)
			if dt.IsFloat() && op == hlo.OpAdd {
				x = cb.paramValue(smallIntLiteral(g, s, 1))
			}
			init := identity(cb, op, dt)
			if op == hlo.OpAdd {
				init = cb.ScalarConstant(dt, 3)
			}
			r := cb.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{init}, cb.Reducer(op, dt), []int64{1})
			out = append(out, cb.done(t, fmt.Sprintf("tree-%v/%v", op, s), r, vkxla.Tolerance(hlo.OpReduce, dt)))
		}
	}
	return out
}

// gemmDotCases: a dot large enough for the tiled GEMM kernel, with edges in both
// dims, for the types it serves besides f32 (inputs in [-1, 1]).
func gemmDotCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, func(dt hlo.DType) bool { return dt == hlo.F16 || dt == hlo.BF16 }, func(dt hlo.DType) opCase {
		cb := newCase(g, "dot_gemm")
		d := cb.Dot(cb.param(hlo.MakeShape(dt, 33, 65), unitDomain), cb.param(hlo.MakeShape(dt, 65, 19), unitDomain))
		return cb.done(t, "gemm-33x65x19/"+dt.String(), d, vkxla.Tolerance(hlo.OpDot, dt))
	})
}

// uniqueScatterCases: unique_indices scatters (applied in parallel, no atomics) of
// single elements into neighbouring positions, over every type.
func uniqueScatterCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for i, dt := range g.dtypes {
		idx := indexTypeFor(g, i+2)
		cb := newCase(g, "scatter_unique")
		x := cb.param(hlo.MakeShape(dt, 4, 9), unitDomain)
		ind := cb.paramValue(indexLiteral(idx, []int64{7, 2}, 0, 0, 0, 1, 0, 2, 1, 3, 3, 8, 2, 7, 3, 7))
		s := cb.Scatter([]*hlo.Instruction{x}, ind, []*hlo.Instruction{cb.param(hlo.MakeShape(dt, 7), unitDomain)}, replacer(t, dt),
			hlo.ScatterDims{InsertedWindowDims: []int64{0, 1}, ScatterDimsToOperandDims: []int64{0, 1}, IndexVectorDim: 1,
				UniqueIndices: true})
		out = append(out, cb.done(t, fmt.Sprintf("unique-elements/%v/%v-indices", dt, idx), s, exact()))
	}
	return out
}

// longSortCases: rows longer than a workgroup's share and not a power of two.
func longSortCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, nil, func(dt hlo.DType) opCase {
		cb := newCase(g, "sort_long")
		keys := cb.paramValue(specialFloats(randomLiteral(g.rng, hlo.MakeShape(dt, 2, 301), unitDomain)))
		s := cb.Sort([]*hlo.Instruction{keys, cb.Iota(hlo.MakeShape(hlo.S32, 2, 301), 1)}, cb.Comparator(hlo.CmpLT, dt, hlo.S32), 1, true)
		return cb.done(t, "rows-301-with-index/"+dt.String(), s, exact())
	})
}

// generalConvCases: a convolution in b01f/01io layout with base dilation, window
// reversal, negative padding and batch_group_count 2, over every numeric type.
func generalConvCases(t testing.TB, g *gen) []opCase {
	return forDTypes(g, hlo.DType.IsNumeric, func(dt hlo.DType) opCase {
		w := hlo.MakeWindow([]int64{2, 3}, nil)
		w[0].BaseDilation = 2
		w[1].WindowReversal, w[1].PadLow, w[1].PadHigh = true, 1, -1
		dims := hlo.ConvDims{InputBatch: 0, InputSpatial: []int64{1, 2}, InputFeature: 3,
			KernelSpatial: []int64{0, 1}, KernelInput: 2, KernelOutput: 3,
			OutputBatch: 0, OutputSpatial: []int64{1, 2}, OutputFeature: 3}
		cb := newCase(g, "conv_general")
		c := cb.Conv(cb.param(hlo.MakeShape(dt, 4, 3, 5, 2), unitDomain), cb.param(hlo.MakeShape(dt, 2, 3, 2, 2), unitDomain), w, dims, 1, 2)
		return cb.done(t, "b01f-dilated-reversed-batch-groups/"+dt.String(), c, vkxla.Tolerance(hlo.OpConvolution, dt))
	})
}
