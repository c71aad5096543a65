package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func s32s(dims ...int64) hlo.Shape { return hlo.MakeShape(hlo.S32, dims...) }

// fixedInts returns a generator giving parameter i the integer values vals.
func fixedInts(i int, vals ...int32) func(*rand.Rand, int, hlo.Shape) *hlo.Literal {
	return func(_ *rand.Rand, j int, s hlo.Shape) *hlo.Literal {
		if j != i {
			return nil
		}
		lit := hlo.NewLiteral(s)
		for k, v := range vals {
			lit.SetInt64(k, int64(v))
		}
		return lit
	}
}

func movementCases(t *testing.T) []fdCase {
	return []fdCase{
		{name: "broadcast non-trailing dims", params: []hlo.Shape{f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Broadcast(ps[0], []int64{2, 3, 4}, []int64{1})
			}},
		{name: "broadcast permuted dims", params: []hlo.Shape{f64s(3, 2)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Broadcast(ps[0], []int64{2, 4, 3}, []int64{2, 0})
			}},
		{name: "broadcast scalar", params: []hlo.Shape{f64s()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.BroadcastScalar(ps[0], 2, 2) }},
		{name: "reshape", params: []hlo.Shape{f64s(2, 6)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Reshape(ps[0], 3, 2, 2) }},
		{name: "transpose", params: []hlo.Shape{f64s(2, 3, 4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Transpose(ps[0], 2, 0, 1) }},
		{name: "strided slice", params: []hlo.Shape{f64s(7, 5)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Slice(ps[0], []int64{1, 0}, []int64{7, 4}, []int64{3, 2})
			}},
		{name: "concatenate", params: []hlo.Shape{f64s(2, 1), f64s(2, 3), f64s(2, 2)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Concatenate(1, ps...) }},
		{name: "pad interior and negative", params: []hlo.Shape{f64s(4, 3), f64s()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Pad(ps[0], ps[1], []hlo.PadDim{{Low: 2, High: -1, Interior: 1}, {Low: -1, High: 3, Interior: 2}})
			}},
		{name: "reverse", params: []hlo.Shape{f64s(3, 4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Reverse(ps[0], 0, 1) }},
		{name: "copy", params: []hlo.Shape{f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Mul(b.Copy(ps[0]), ps[0]) }},
		// Start 5 is clamped to 2 (so the slice stays in bounds): both ops clamp alike.
		{name: "dynamic-slice clamped", params: []hlo.Shape{f64s(5, 4), s32s(), s32s()}, gen: fixedInts(1, 5),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.DynamicSlice(ps[0], ps[1:], []int64{3, 2})
			}},
		{name: "dynamic-update-slice", params: []hlo.Shape{f64s(5, 4), f64s(2, 3), s32s(), s32s()},
			gen: fixedInts(2, 1),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.DynamicUpdateSlice(ps[0], ps[1], ps[2:])
			}},
	}
}

func TestMovementVJP(t *testing.T) { runFD(t, movementCases(t)) }

func gatherScatterCases(t *testing.T) []fdCase {
	return []fdCase{
		// Rows 3, 0, 3 (a repeat accumulates) and an out-of-range 7, clamped to 4.
		{name: "gather rows", params: []hlo.Shape{f64s(5, 3), s32s(4, 1)}, gen: fixedInts(1, 3, 0, 3, 7),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Gather(ps[0], ps[1], hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0},
					StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1, 3})
			}},
		{name: "gather 2-d windows clamped", params: []hlo.Shape{f64s(4, 5), s32s(3, 2)},
			gen: fixedInts(1, 0, 1, 3, 4, 2, 0),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Gather(ps[0], ps[1], hlo.GatherDims{OffsetDims: []int64{1, 2},
					StartIndexMap: []int64{0, 1}, IndexVectorDim: 1}, []int64{2, 3})
			}},
		// Batch b of the operand is indexed by batch b of the indices.
		{name: "gather with batching dims", params: []hlo.Shape{f64s(3, 5, 2), s32s(3, 2)},
			gen: fixedInts(1, 4, 1, 0, 0, 2, 3),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Gather(ps[0], ps[1], hlo.GatherDims{OffsetDims: []int64{2}, CollapsedSliceDims: []int64{1},
					StartIndexMap: []int64{1}, IndexVectorDim: 2,
					OperandBatchingDims: []int64{0}, StartIndicesBatchingDims: []int64{0}}, []int64{1, 1, 2})
			}},
		// Updates at rows 1, 1 (accumulate), 3 and 9 (out of bounds: dropped).
		{name: "scatter-add", params: []hlo.Shape{f64s(5, 2), s32s(4), f64s(4, 2)}, gen: fixedInts(1, 1, 1, 3, 9),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Scatter(ps[:1], ps[1], ps[2:], b.Reducer(hlo.OpAdd, hlo.F64), hlo.ScatterDims{
					UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
					ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1})
			}},
		{name: "scatter-add with batching dims", params: []hlo.Shape{f64s(2, 4), s32s(2, 3), f64s(2, 3)},
			gen: fixedInts(1, 0, 3, 3, 1, 2, 5),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Scatter(ps[:1], ps[1], ps[2:], b.Reducer(hlo.OpAdd, hlo.F64), hlo.ScatterDims{
					InsertedWindowDims: []int64{1}, ScatterDimsToOperandDims: []int64{1}, IndexVectorDim: 2,
					InputBatchingDims: []int64{0}, ScatterIndicesBatchingDims: []int64{0}})
			}},
	}
}

func TestGatherScatterVJP(t *testing.T) { runFD(t, gatherScatterCases(t)) }

// replaceComb is scatter's (old, new) -> new combiner.
func replaceComb(t *testing.T) *hlo.Computation {
	rb := hlo.NewBuilder("replace")
	rb.Parameter(hlo.Scalar(hlo.F64), "old")
	c, err := rb.BuildComputation(rb.Parameter(hlo.Scalar(hlo.F64), "new"))
	require.NoError(t, err)
	return c
}

func scatterReplaceCases(t *testing.T) []fdCase {
	return []fdCase{
		// Rows 1, 4, 1 (a repeat: one update wins), 3, and 9 (dropped).
		{name: "scatter replace rows", params: []hlo.Shape{f64s(5, 2), s32s(5), f64s(5, 2)}, gen: fixedInts(1, 1, 4, 1, 3, 9),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Scatter(ps[:1], ps[1], ps[2:], replaceComb(t), hlo.ScatterDims{
					UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
					ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1})
			}},
		// Overlapping 2x2 windows at (0,0), (1,1), (2,0).
		{name: "scatter replace overlapping windows", params: []hlo.Shape{f64s(4, 3), s32s(3, 2), f64s(3, 2, 2)},
			gen: fixedInts(1, 0, 0, 1, 1, 2, 0),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Scatter(ps[:1], ps[1], ps[2:], replaceComb(t), hlo.ScatterDims{
					UpdateWindowDims: []int64{1, 2}, ScatterDimsToOperandDims: []int64{0, 1}, IndexVectorDim: 1})
			}},
	}
}

func TestScatterReplaceVJP(t *testing.T) { runFD(t, scatterReplaceCases(t)) }
