package hlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func f32(dims ...int64) Shape  { return MakeShape(F32, dims...) }
func s32(dims ...int64) Shape  { return MakeShape(S32, dims...) }
func pred(dims ...int64) Shape { return MakeShape(Pred, dims...) }
func shp(s ...Shape) []Shape   { return s }
func dims(d ...int64) []int64  { return d }
func ptr(s Shape) *Shape       { return &s }

func mustComp(c *Computation, err error) *Computation {
	if err != nil {
		panic(err)
	}
	return c
}

// pairReducer reduces (f32, s32) pairs: (a0, a1, x0, x1) -> (a0+x0, max(a1, x1)).
func pairReducer() *Computation {
	b := NewBuilder("pair")
	a0, a1 := b.Parameter(Scalar(F32), "a0"), b.Parameter(Scalar(S32), "a1")
	x0, x1 := b.Parameter(Scalar(F32), "x0"), b.Parameter(Scalar(S32), "x1")
	return mustComp(b.BuildComputation(b.Tuple(b.Add(a0, x0), b.Max(a1, x1))))
}

// compOf builds a computation with the given parameter shapes and root function.
func compOf(name string, params []Shape, root func(b *Builder, ps []*Instruction) *Instruction) *Computation {
	b := NewBuilder(name)
	ps := make([]*Instruction, len(params))
	for i, p := range params {
		ps[i] = b.Parameter(p, "")
	}
	return mustComp(b.BuildComputation(root(b, ps)))
}

func identity(b *Builder, ps []*Instruction) *Instruction { return ps[0] }

// inferCase is one shape-inference case: the inferred (or, with declared, checked)
// result, or an error containing err.
type inferCase struct {
	name     string
	op       Opcode
	operands []Shape
	attrs    Attributes
	called   []*Computation
	declared *Shape
	want     Shape
	err      string
}

func runInferCases(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.declared != nil {
				err := CheckShape(c.op, c.operands, &c.attrs, c.called, *c.declared)
				checkInferError(t, err, c.err)
				return
			}
			got, err := InferShape(c.op, c.operands, &c.attrs, c.called)
			if checkInferError(t, err, c.err) {
				assert.True(t, c.want.Equal(got), "got %v, want %v", got, c.want)
			}
		})
	}
}

// checkInferError checks err against the expected substring (none: no error) and
// reports whether the result should be checked.
func checkInferError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want != "" {
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), want)
		}
		return false
	}
	return assert.NoError(t, err)
}

func TestInferElementwise(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "add", op: OpAdd, operands: shp(f32(2, 3), f32(2, 3)), want: f32(2, 3)},
		{name: "add no broadcasting", op: OpAdd, operands: shp(f32(2, 3), f32(3)),
			err: "add: operand shapes f32[2,3] and f32[3] differ"},
		{name: "add types differ", op: OpAdd, operands: shp(f32(2), s32(2)), err: "differ"},
		{name: "add pred (or)", op: OpAdd, operands: shp(pred(2), pred(2)), want: pred(2)},
		{name: "subtract pred", op: OpSubtract, operands: shp(pred(2), pred(2)), err: "not a numeric or complex type"},
		{name: "add arity", op: OpAdd, operands: shp(f32(2)), err: "takes 2 operands, got 1"},
		{name: "add tuple", op: OpAdd, operands: shp(MakeTuple(f32()), MakeTuple(f32())), err: "tuple"},
		{name: "and pred", op: OpAnd, operands: shp(pred(4), pred(4)), want: pred(4)},
		{name: "and float", op: OpAnd, operands: shp(f32(4), f32(4)), err: "not an integer or pred type"},
		{name: "shift float", op: OpShiftLeft, operands: shp(f32(), f32()), err: "not an integer type"},
		{name: "atan2 int", op: OpAtan2, operands: shp(s32(), s32()), err: "floating-point"},
		{name: "exp", op: OpExp, operands: shp(MakeShape(BF16, 5)), want: MakeShape(BF16, 5)},
		{name: "exp int", op: OpExp, operands: shp(s32(2)), err: "exponential: operand s32[2] is not a floating-point or complex type"},
		{name: "abs signed", op: OpAbs, operands: shp(s32(2)), want: s32(2)},
		{name: "abs unsigned", op: OpAbs, operands: shp(MakeShape(U32, 2)), err: "signed integer, floating-point or complex"},
		{name: "negate unsigned", op: OpNegate, operands: shp(MakeShape(U8, 2)), want: MakeShape(U8, 2)},
		{name: "is-finite", op: OpIsFinite, operands: shp(f32(4)), want: pred(4)},
		{name: "not pred", op: OpNot, operands: shp(pred()), want: pred()},
		{name: "popcnt", op: OpPopcnt, operands: shp(MakeShape(U8, 3)), want: MakeShape(U8, 3)},
		{name: "clz pred", op: OpClz, operands: shp(pred(3)), err: "integer"},
		{name: "bad dims", op: OpNegate, operands: shp(f32(-1)), err: "negative dimension"},
		{name: "invalid opcode", op: Opcode(250), operands: shp(f32()), err: "unknown opcode"},

		{name: "compare", op: OpCompare, operands: shp(f32(2, 3), f32(2, 3)),
			attrs: Attributes{Direction: CmpLT}, want: pred(2, 3)},
		{name: "compare pred", op: OpCompare, operands: shp(pred(), pred()), want: pred()},
		{name: "compare shapes", op: OpCompare, operands: shp(f32(2), f32(3)), err: "differ"},
		{name: "compare totalorder float", op: OpCompare, operands: shp(f32(2), f32(2)),
			attrs: Attributes{Direction: CmpLT, CompareType: CompareTotalOrder}, want: pred(2)},
		{name: "compare totalorder int", op: OpCompare, operands: shp(s32(2), s32(2)),
			attrs: Attributes{CompareType: CompareTotalOrder}, err: "TOTALORDER does not apply to s32"},
		{name: "compare unsigned pred", op: OpCompare, operands: shp(pred(), pred()),
			attrs: Attributes{CompareType: CompareUnsigned}, want: pred()},
		{name: "compare signed unsigned", op: OpCompare, operands: shp(MakeShape(U32), MakeShape(U32)),
			attrs: Attributes{CompareType: CompareSigned}, err: "SIGNED"},
		{name: "compare direction", op: OpCompare, operands: shp(f32(), f32()),
			attrs: Attributes{Direction: 9}, err: "invalid direction"},

		{name: "select", op: OpSelect, operands: shp(pred(2, 3), f32(2, 3), f32(2, 3)), want: f32(2, 3)},
		{name: "select scalar pred", op: OpSelect, operands: shp(pred(), f32(2, 3), f32(2, 3)), want: f32(2, 3)},
		{name: "select pred dims", op: OpSelect, operands: shp(pred(3), f32(2, 3), f32(2, 3)), err: "scalar or match"},
		{name: "select pred type", op: OpSelect, operands: shp(s32(2), f32(2), f32(2)), err: "is not pred"},
		{name: "select branches", op: OpSelect, operands: shp(pred(2), f32(2), s32(2)), err: "differ"},

		{name: "clamp scalars", op: OpClamp, operands: shp(f32(), f32(2, 3), f32()), want: f32(2, 3)},
		{name: "clamp arrays", op: OpClamp, operands: shp(s32(4), s32(4), s32(4)), want: s32(4)},
		{name: "clamp bound dims", op: OpClamp, operands: shp(f32(3), f32(2, 3), f32()), err: "bound f32[3]"},
		{name: "clamp bound type", op: OpClamp, operands: shp(s32(), f32(2), f32()), err: "bound s32[]"},
	})
}

func TestInferConversions(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "convert", op: OpConvert, operands: shp(f32(2, 3)), declared: ptr(MakeShape(S8, 2, 3))},
		{name: "convert to pred", op: OpConvert, operands: shp(f32(2)), declared: ptr(pred(2))},
		{name: "convert dims", op: OpConvert, operands: shp(f32(2, 3)), declared: ptr(MakeShape(S8, 3, 2)),
			err: "different dimensions"},
		{name: "convert not inferable", op: OpConvert, operands: shp(f32(2)), err: "declared"},
		{name: "bitcast same width", op: OpBitcastConvert, operands: shp(f32(2)), declared: ptr(s32(2))},
		{name: "bitcast narrower", op: OpBitcastConvert, operands: shp(f32(2)), declared: ptr(MakeShape(U8, 2, 4))},
		{name: "bitcast wider", op: OpBitcastConvert, operands: shp(MakeShape(U8, 3, 4)), declared: ptr(f32(3))},
		{name: "bitcast f64 to f16", op: OpBitcastConvert, operands: shp(MakeShape(F64)),
			declared: ptr(MakeShape(F16, 4))},
		{name: "bitcast wrong minor", op: OpBitcastConvert, operands: shp(MakeShape(U8, 3, 2)), declared: ptr(f32(3)),
			err: "needs a minor dimension of 4"},
		{name: "bitcast narrower missing dim", op: OpBitcastConvert, operands: shp(f32(2)),
			declared: ptr(MakeShape(F16, 2)), err: "bitcasts to f16[2,2]"},
		{name: "bitcast pred", op: OpBitcastConvert, operands: shp(MakeShape(U8, 2)), declared: ptr(pred(2)),
			err: "pred has no bit layout"},
	})
}

func TestInferLeaves(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "parameter tuple", op: OpParameter, declared: ptr(MakeTuple(f32(2), s32()))},
		{name: "parameter number", op: OpParameter, declared: ptr(f32()),
			attrs: Attributes{ParameterNumber: -1}, err: "negative parameter number"},
		{name: "parameter operands", op: OpParameter, operands: shp(f32()), declared: ptr(f32()),
			err: "takes 0 operands, got 1"},
		{name: "constant", op: OpConstant, attrs: Attributes{Literal: MustFromSlice(dims(2), []int32{1, 2})},
			want: s32(2)},
		{name: "constant declared differs", op: OpConstant,
			attrs: Attributes{Literal: MustFromSlice(dims(2), []int32{1, 2})}, declared: ptr(s32(3)),
			err: "declared shape s32[3] differs from inferred shape s32[2]"},
		{name: "constant no literal", op: OpConstant, err: "has no literal"},
		{name: "iota", op: OpIota, attrs: Attributes{IotaDimension: 1}, declared: ptr(s32(2, 3))},
		{name: "iota dimension", op: OpIota, attrs: Attributes{IotaDimension: 2}, declared: ptr(s32(2, 3)),
			err: "iota_dimension 2 out of range for rank 2"},
		{name: "iota scalar", op: OpIota, declared: ptr(f32()), err: "out of range for rank 0"},
		{name: "iota pred", op: OpIota, declared: ptr(pred(3)), err: "not numeric"},
		{name: "iota negative dim", op: OpIota, declared: ptr(f32(-2)), err: "negative dimension"},
	})
}

func TestInferMovement(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "broadcast", op: OpBroadcast, operands: shp(f32(3)), attrs: Attributes{Dimensions: dims(1)},
			declared: ptr(f32(2, 3))},
		{name: "broadcast scalar", op: OpBroadcast, operands: shp(f32()), declared: ptr(f32(2, 3))},
		{name: "broadcast transposing", op: OpBroadcast, operands: shp(f32(3, 2)),
			attrs: Attributes{Dimensions: dims(1, 0)}, declared: ptr(f32(2, 3))},
		{name: "broadcast size", op: OpBroadcast, operands: shp(f32(3)), attrs: Attributes{Dimensions: dims(0)},
			declared: ptr(f32(2, 3)), err: "dimension 0 (size 3) maps to result f32[2,3] dimension 0 (size 2)"},
		{name: "broadcast degenerate", op: OpBroadcast, operands: shp(f32(1)), attrs: Attributes{Dimensions: dims(0)},
			declared: ptr(f32(4)), err: "size 1"},
		{name: "broadcast count", op: OpBroadcast, operands: shp(f32(3)), declared: ptr(f32(2, 3)),
			err: "have 0 entries"},
		{name: "broadcast type", op: OpBroadcast, operands: shp(s32()), declared: ptr(f32(2)),
			err: "different element types"},
		{name: "broadcast range", op: OpBroadcast, operands: shp(f32(3)), attrs: Attributes{Dimensions: dims(2)},
			declared: ptr(f32(2, 3)), err: "out of range"},

		{name: "reshape", op: OpReshape, operands: shp(f32(2, 3)), declared: ptr(f32(6))},
		{name: "reshape to scalar", op: OpReshape, operands: shp(f32(1, 1)), declared: ptr(f32())},
		{name: "reshape count", op: OpReshape, operands: shp(f32(2, 3)), declared: ptr(f32(4)),
			err: "cannot reshape f32[2,3] (6 elements) to f32[4] (4 elements)"},

		{name: "transpose", op: OpTranspose, operands: shp(f32(2, 3, 4)),
			attrs: Attributes{Dimensions: dims(2, 0, 1)}, want: f32(4, 2, 3)},
		{name: "transpose repeat", op: OpTranspose, operands: shp(f32(2, 3, 4)),
			attrs: Attributes{Dimensions: dims(0, 0, 1)}, err: "repeat dimension 0"},
		{name: "transpose length", op: OpTranspose, operands: shp(f32(2, 3)),
			attrs: Attributes{Dimensions: dims(0)}, err: "has 1 entries"},

		{name: "slice strided", op: OpSlice, operands: shp(f32(10)),
			attrs: Attributes{Slice: []SliceDim{{1, 8, 3}}}, want: f32(3)},
		{name: "slice 2d", op: OpSlice, operands: shp(f32(4, 6)),
			attrs: Attributes{Slice: []SliceDim{{1, 4, 2}, {0, 6, 3}}}, want: f32(2, 2)},
		{name: "slice stride past the end", op: OpSlice, operands: shp(f32(10)), // (9+MaxInt64-1) wrapped negative
			attrs: Attributes{Slice: []SliceDim{{1, 10, math.MaxInt64}}}, want: f32(1)},
		{name: "slice empty", op: OpSlice, operands: shp(f32(4)),
			attrs: Attributes{Slice: []SliceDim{{2, 2, 1}}}, want: f32(0)},
		{name: "slice stride 0", op: OpSlice, operands: shp(f32(4)),
			attrs: Attributes{Slice: []SliceDim{{0, 4, 0}}}, err: "stride < 1"},
		{name: "slice limit", op: OpSlice, operands: shp(f32(4)),
			attrs: Attributes{Slice: []SliceDim{{0, 5, 1}}}, err: "slice [0:5:1] of dimension 0 of f32[4]"},
		{name: "slice start after limit", op: OpSlice, operands: shp(f32(4)),
			attrs: Attributes{Slice: []SliceDim{{3, 2, 1}}}, err: "out of bounds"},
		{name: "slice rank", op: OpSlice, operands: shp(f32(4, 4)),
			attrs: Attributes{Slice: []SliceDim{{0, 2, 1}}}, err: "slice has 1 dimensions"},

		{name: "concatenate", op: OpConcatenate, operands: shp(f32(2, 3), f32(4, 3), f32(1, 3)),
			attrs: Attributes{Dimensions: dims(0)}, want: f32(7, 3)},
		{name: "concatenate one", op: OpConcatenate, operands: shp(f32(2)),
			attrs: Attributes{Dimensions: dims(0)}, want: f32(2)},
		{name: "concatenate other dim", op: OpConcatenate, operands: shp(f32(2, 3), f32(2, 4)),
			attrs: Attributes{Dimensions: dims(0)}, err: "differ outside dimension 0"},
		{name: "concatenate types", op: OpConcatenate, operands: shp(f32(2), s32(2)),
			attrs: Attributes{Dimensions: dims(0)}, err: "differ"},
		{name: "concatenate no dim", op: OpConcatenate, operands: shp(f32(2)), err: "exactly one dimension"},
		{name: "concatenate none", op: OpConcatenate, attrs: Attributes{Dimensions: dims(0)}, err: "at least one"},
		{name: "concatenate scalar", op: OpConcatenate, operands: shp(f32()),
			attrs: Attributes{Dimensions: dims(0)}, err: "out of range"},

		// 1 + 2 + 3 + (3-1)*1 = 8.
		{name: "pad interior", op: OpPad, operands: shp(f32(3), f32()),
			attrs: Attributes{Padding: []PadDim{{1, 2, 1}}}, want: f32(8)},
		{name: "pad negative", op: OpPad, operands: shp(f32(3, 4), f32()),
			attrs: Attributes{Padding: []PadDim{{-1, 0, 0}, {0, -2, 0}}}, want: f32(2, 2)},
		{name: "pad empty interior", op: OpPad, operands: shp(f32(0), f32()),
			attrs: Attributes{Padding: []PadDim{{1, 0, 2}}}, want: f32(1)},
		{name: "pad negative interior", op: OpPad, operands: shp(f32(3), f32()),
			attrs: Attributes{Padding: []PadDim{{0, 0, -1}}}, err: "negative interior"},
		{name: "pad to negative", op: OpPad, operands: shp(f32(1), f32()),
			attrs: Attributes{Padding: []PadDim{{-2, 0, 0}}}, err: "negative"},
		{name: "pad value", op: OpPad, operands: shp(f32(3), f32(1)),
			attrs: Attributes{Padding: []PadDim{{0, 0, 0}}}, err: "padding value f32[1] must be a f32 scalar"},

		{name: "copy", op: OpCopy, operands: shp(f32(2, 3)), want: f32(2, 3)},
		{name: "copy of a tuple", op: OpCopy, operands: shp(MakeTuple(f32(2))), err: "array"},
		{name: "reverse", op: OpReverse, operands: shp(f32(2, 3)), attrs: Attributes{Dimensions: dims(1, 0)},
			want: f32(2, 3)},
		{name: "reverse repeat", op: OpReverse, operands: shp(f32(2, 3)), attrs: Attributes{Dimensions: dims(1, 1)},
			err: "repeat"},
	})
}

func TestInferDynamicSlices(t *testing.T) {
	runInferCases(t, []inferCase{
		{name: "dynamic-slice", op: OpDynamicSlice, operands: shp(f32(4, 5), s32(), s32()),
			attrs: Attributes{SliceSizes: dims(2, 2)}, want: f32(2, 2)},
		{name: "dynamic-slice size", op: OpDynamicSlice, operands: shp(f32(4, 5), s32(), s32()),
			attrs: Attributes{SliceSizes: dims(5, 2)}, err: "slice size 5 out of range for dimension 0"},
		{name: "dynamic-slice index type", op: OpDynamicSlice, operands: shp(f32(4), f32()),
			attrs: Attributes{SliceSizes: dims(2)}, err: "start index 0 is f32[]"},
		{name: "dynamic-slice mixed index types", op: OpDynamicSlice,
			operands: shp(f32(4, 4), s32(), MakeShape(S64)), attrs: Attributes{SliceSizes: dims(2, 2)},
			err: "one type"},
		{name: "dynamic-slice index count", op: OpDynamicSlice, operands: shp(f32(4, 4), s32()),
			attrs: Attributes{SliceSizes: dims(2, 2)}, err: "needs 2 start indices, got 1"},
		{name: "dynamic-update-slice", op: OpDynamicUpdateSlice, operands: shp(f32(4, 5), f32(2, 5), s32(), s32()),
			want: f32(4, 5)},
		{name: "dynamic-update-slice larger", op: OpDynamicUpdateSlice,
			operands: shp(f32(4, 5), f32(2, 6), s32(), s32()), err: "larger than operand"},
		{name: "dynamic-update-slice type", op: OpDynamicUpdateSlice,
			operands: shp(f32(4), s32(2), s32()), err: "type and rank"},
	})
}

func TestInferGatherScatter(t *testing.T) {
	addF32 := mustComp(ScalarReducer(OpAdd, F32))
	simple := GatherDims{OffsetDims: dims(1), CollapsedSliceDims: dims(0), StartIndexMap: dims(0), IndexVectorDim: 1}
	// Slices of [8,6] at 5 two-dimensional start indices.
	windows := GatherDims{OffsetDims: dims(1, 2), StartIndexMap: dims(0, 1), IndexVectorDim: 1}
	leading := windows
	leading.OffsetDims = dims(0, 1)
	// Operand dim 0 pairs with indices dim 0; indices [2,3,1] pick rows of dim 1.
	batched := GatherDims{OffsetDims: dims(2), CollapsedSliceDims: dims(1), StartIndexMap: dims(1),
		IndexVectorDim: 2, OperandBatchingDims: dims(0), StartIndicesBatchingDims: dims(0)}
	scatter := ScatterDims{UpdateWindowDims: dims(1), InsertedWindowDims: dims(0),
		ScatterDimsToOperandDims: dims(0), IndexVectorDim: 1}
	runInferCases(t, []inferCase{
		{name: "gather rows", op: OpGather, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Gather: &simple, SliceSizes: dims(1, 4)}, want: f32(3, 4)},
		{name: "gather windows", op: OpGather, operands: shp(f32(16, 11), s32(5, 2)),
			attrs: Attributes{Gather: &windows, SliceSizes: dims(8, 6)}, want: f32(5, 8, 6)},
		{name: "gather leading offsets", op: OpGather, operands: shp(f32(16, 11), s32(5, 2)),
			attrs: Attributes{Gather: &leading, SliceSizes: dims(8, 6)}, want: f32(8, 6, 5)},
		{name: "gather batching", op: OpGather, operands: shp(f32(2, 5, 4), s32(2, 3, 1)),
			attrs: Attributes{Gather: &batched, SliceSizes: dims(1, 1, 4)}, want: f32(2, 3, 4)},
		{name: "gather batching sizes", op: OpGather, operands: shp(f32(3, 5, 4), s32(2, 3, 1)),
			attrs: Attributes{Gather: &batched, SliceSizes: dims(1, 1, 4)}, err: "batching dimension 0 (size 2)"},
		{name: "gather collapsed size", op: OpGather, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Gather: &simple, SliceSizes: dims(2, 4)}, err: "collapsed or batching dimension 0 has slice size 2"},
		{name: "gather slice bound", op: OpGather, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Gather: &simple, SliceSizes: dims(1, 5)}, err: "out of range"},
		{name: "gather index map", op: OpGather, operands: shp(f32(16, 11), s32(5, 3)),
			attrs: Attributes{Gather: &windows, SliceSizes: dims(8, 6)}, err: "start_index_map [0 1] has 2 entries"},
		{name: "gather offset count", op: OpGather, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Gather: &GatherDims{StartIndexMap: dims(0), CollapsedSliceDims: dims(0), IndexVectorDim: 1},
				SliceSizes: dims(1, 4)}, err: "offset_dims"},
		{name: "gather index_vector_dim", op: OpGather, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Gather: &GatherDims{IndexVectorDim: 3}, SliceSizes: dims(1, 4)}, err: "index_vector_dim 3"},
		{name: "gather float indices", op: OpGather, operands: shp(f32(5, 4), f32(3)),
			attrs: Attributes{Gather: &simple, SliceSizes: dims(1, 4)}, err: "not integers"},
		{name: "gather no dims", op: OpGather, operands: shp(f32(5, 4), s32(3)), err: "no gather dimension numbers"},

		{name: "scatter", op: OpScatter, operands: shp(f32(5, 4), s32(3), f32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, want: f32(5, 4)},
		{name: "scatter narrower window", op: OpScatter, operands: shp(f32(5, 4), s32(3), f32(3, 2)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, want: f32(5, 4)},
		{name: "scatter variadic", op: OpScatter, operands: shp(f32(5, 4), s32(5, 4), s32(3), f32(3, 4), s32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{pairReducer()},
			want: MakeTuple(f32(5, 4), s32(5, 4))},
		{name: "scatter window too big", op: OpScatter, operands: shp(f32(5, 4), s32(3), f32(3, 5)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, err: "exceeds operand"},
		{name: "scatter count", op: OpScatter, operands: shp(f32(5, 4), s32(4), f32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, err: "indices give 4"},
		{name: "scatter reducer", op: OpScatter, operands: shp(s32(5, 4), s32(3), s32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32},
			err: "to_apply computation \"add_f32\" has signature (f32[], f32[]) -> f32[], want (s32[], s32[]) -> s32[]"},
		{name: "scatter update type", op: OpScatter, operands: shp(f32(5, 4), s32(3), s32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, err: "differ in element type"},
		{name: "scatter even operands", op: OpScatter, operands: shp(f32(5, 4), s32(3)),
			attrs: Attributes{Scatter: &scatter}, called: []*Computation{addF32}, err: "N operands, indices and N updates"},
		{name: "scatter no computation", op: OpScatter, operands: shp(f32(5, 4), s32(3), f32(3, 4)),
			attrs: Attributes{Scatter: &scatter}, err: "calls 1 computations [to_apply], got 0"},
	})
}

func TestInferReductions(t *testing.T) {
	addF32 := mustComp(ScalarReducer(OpAdd, F32))
	geF32 := mustComp(ScalarComparator(CmpGE, F32))
	window := MakeWindow(dims(2, 2), dims(2, 2))
	padded := []WindowDim{{Size: 3, Stride: 1, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
	baseDilated := []WindowDim{{Size: 3, Stride: 2, WindowDilation: 1, BaseDilation: 2}}
	windowDilated := []WindowDim{{Size: 2, Stride: 1, WindowDilation: 2, BaseDilation: 1}}
	runInferCases(t, []inferCase{
		{name: "reduce", op: OpReduce, operands: shp(f32(2, 3, 4), f32()), attrs: Attributes{Dimensions: dims(0, 2)},
			called: []*Computation{addF32}, want: f32(3)},
		{name: "reduce all", op: OpReduce, operands: shp(f32(2, 3), f32()), attrs: Attributes{Dimensions: dims(1, 0)},
			called: []*Computation{addF32}, want: f32()},
		{name: "reduce none", op: OpReduce, operands: shp(f32(2, 3), f32()),
			called: []*Computation{addF32}, want: f32(2, 3)},
		{name: "reduce variadic", op: OpReduce, operands: shp(f32(2, 3), s32(2, 3), f32(), s32()),
			attrs: Attributes{Dimensions: dims(1)}, called: []*Computation{pairReducer()},
			want: MakeTuple(f32(2), s32(2))},
		{name: "reduce init type", op: OpReduce, operands: shp(f32(2, 3), s32()),
			called: []*Computation{addF32}, err: "init value 0 is s32[], want a f32 scalar"},
		{name: "reduce dims repeat", op: OpReduce, operands: shp(f32(2, 3), f32()),
			attrs: Attributes{Dimensions: dims(1, 1)}, called: []*Computation{addF32}, err: "repeat"},
		{name: "reduce reducer", op: OpReduce, operands: shp(f32(2), f32()), called: []*Computation{geF32},
			err: "want (f32[], f32[]) -> f32[]"},
		{name: "reduce input dims", op: OpReduce, operands: shp(f32(2), s32(3), f32(), s32()),
			called: []*Computation{pairReducer()}, err: "different dimensions"},
		{name: "reduce odd", op: OpReduce, operands: shp(f32(2)), called: []*Computation{addF32},
			err: "N inputs and N init values"},

		{name: "reduce-window pool", op: OpReduceWindow, operands: shp(f32(4, 6), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{addF32}, want: f32(2, 3)},
		// (5 + 1 + 1 - 3)/1 + 1 = 5.
		{name: "reduce-window padded", op: OpReduceWindow, operands: shp(f32(5), f32()),
			attrs: Attributes{Window: padded}, called: []*Computation{addF32}, want: f32(5)},
		// dilated base (4-1)*2+1 = 7; (7-3)/2 + 1 = 3.
		{name: "reduce-window base dilation", op: OpReduceWindow, operands: shp(f32(4), f32()),
			attrs: Attributes{Window: baseDilated}, called: []*Computation{addF32}, want: f32(3)},
		// window span (2-1)*2+1 = 3; 5 - 3 + 1 = 3.
		{name: "reduce-window window dilation", op: OpReduceWindow, operands: shp(f32(5), f32()),
			attrs: Attributes{Window: windowDilated}, called: []*Computation{addF32}, want: f32(3)},
		{name: "reduce-window larger than input", op: OpReduceWindow, operands: shp(f32(1, 1), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{addF32}, want: f32(0, 0)},
		{name: "reduce-window stride 0", op: OpReduceWindow, operands: shp(f32(4), f32()),
			attrs:  Attributes{Window: []WindowDim{{Size: 2, WindowDilation: 1, BaseDilation: 1}}},
			called: []*Computation{addF32}, err: "each must be at least 1"},
		{name: "reduce-window reversal", op: OpReduceWindow, operands: shp(f32(4), f32()),
			attrs:  Attributes{Window: []WindowDim{{Size: 2, Stride: 1, WindowDilation: 1, BaseDilation: 1, WindowReversal: true}}},
			called: []*Computation{addF32}, err: "reversed"},
		{name: "reduce-window rank", op: OpReduceWindow, operands: shp(f32(4), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{addF32}, err: "window has 2 dimensions for f32[4]"},

		{name: "select-and-scatter", op: OpSelectAndScatter, operands: shp(f32(4, 6), f32(2, 3), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{geF32, addF32}, want: f32(4, 6)},
		{name: "select-and-scatter source", op: OpSelectAndScatter, operands: shp(f32(4, 6), f32(2, 2), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{geF32, addF32},
			err: "source f32[2,2] must have the windowed operand shape f32[2,3]"},
		{name: "select-and-scatter roles", op: OpSelectAndScatter, operands: shp(f32(4, 6), f32(2, 3), f32()),
			attrs: Attributes{Window: window}, called: []*Computation{addF32, geF32}, err: "select computation"},

		{name: "sort", op: OpSort, operands: shp(f32(2, 5)), attrs: Attributes{Dimensions: dims(1)},
			called: []*Computation{mustComp(ScalarComparator(CmpLT, F32))}, want: f32(2, 5)},
		{name: "sort key value", op: OpSort, operands: shp(f32(5), s32(5)), attrs: Attributes{Dimensions: dims(0)},
			called: []*Computation{mustComp(ScalarComparator(CmpLT, F32, S32))}, want: MakeTuple(f32(5), s32(5))},
		{name: "sort comparator", op: OpSort, operands: shp(f32(5), s32(5)), attrs: Attributes{Dimensions: dims(0)},
			called: []*Computation{mustComp(ScalarComparator(CmpLT, F32))},
			err:    "want (f32[], f32[], s32[], s32[]) -> pred[]"},
		{name: "sort dimension", op: OpSort, operands: shp(f32(5)), attrs: Attributes{Dimensions: dims(1)},
			called: []*Computation{mustComp(ScalarComparator(CmpLT, F32))}, err: "dimension 1 out of range"},
		{name: "sort dims differ", op: OpSort, operands: shp(f32(5), s32(4)), attrs: Attributes{Dimensions: dims(0)},
			called: []*Computation{mustComp(ScalarComparator(CmpLT, F32, S32))}, err: "different dimensions"},
	})
}

func TestInferContractions(t *testing.T) {
	batchDot := &DotDims{LhsBatch: dims(0), RhsBatch: dims(0), LhsContracting: dims(2), RhsContracting: dims(1)}
	matmul := &DotDims{LhsContracting: dims(1), RhsContracting: dims(0)}
	// dim_labels b01f_01io->b01f.
	nhwc := &ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: dims(1, 2),
		KernelInput: 2, KernelOutput: 3, KernelSpatial: dims(0, 1),
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: dims(1, 2)}
	nchw := DefaultConvDims(2)
	w3 := MakeWindow(dims(3, 3), nil)
	strided := []WindowDim{
		{Size: 3, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1},
		{Size: 3, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
	lhsDilated := []WindowDim{{Size: 3, Stride: 1, WindowDilation: 1, BaseDilation: 2}}
	conv1d := &ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: dims(2), KernelOutput: 0, KernelInput: 1,
		KernelSpatial: dims(2), OutputBatch: 0, OutputFeature: 1, OutputSpatial: dims(2)}
	runInferCases(t, []inferCase{
		{name: "dot matmul", op: OpDot, operands: shp(f32(2, 3), f32(3, 4)), attrs: Attributes{Dot: matmul},
			want: f32(2, 4)},
		{name: "dot batch", op: OpDot, operands: shp(f32(8, 2, 3), f32(8, 3, 4)), attrs: Attributes{Dot: batchDot},
			want: f32(8, 2, 4)},
		{name: "dot outer", op: OpDot, operands: shp(f32(2), f32(3)), want: f32(2, 3)},
		{name: "dot rhs contracting last", op: OpDot, operands: shp(s32(2, 3), s32(4, 3)),
			attrs: Attributes{Dot: &DotDims{LhsContracting: dims(1), RhsContracting: dims(1)}}, want: s32(2, 4)},
		{name: "dot sizes", op: OpDot, operands: shp(f32(2, 3), f32(4, 4)), attrs: Attributes{Dot: matmul},
			err: "lhs f32[2,3] dimension 1 and rhs f32[4,4] dimension 0 differ in size"},
		{name: "dot types", op: OpDot, operands: shp(f32(2, 3), s32(3, 4)), attrs: Attributes{Dot: matmul},
			err: "operand types of f32[2,3] and s32[3,4] differ"},
		{name: "dot pred", op: OpDot, operands: shp(pred(2), pred(2)), err: "not numeric"},
		{name: "dot repeated dim", op: OpDot, operands: shp(f32(3, 3), f32(3, 3)),
			attrs: Attributes{Dot: &DotDims{LhsBatch: dims(0), RhsBatch: dims(0), LhsContracting: dims(0), RhsContracting: dims(1)}},
			err:   "repeat"},
		{name: "dot counts", op: OpDot, operands: shp(f32(3, 3), f32(3, 3)),
			attrs: Attributes{Dot: &DotDims{LhsContracting: dims(0)}}, err: "differ in count"},

		{name: "conv nchw", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 3, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3}, want: f32(1, 4, 3, 3)},
		// (5 + 2 - 3)/2 + 1 = 3.
		{name: "conv strided padded", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 3, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: strided}, want: f32(1, 4, 3, 3)},
		{name: "conv nhwc", op: OpConvolution, operands: shp(f32(2, 7, 7, 3), f32(3, 3, 3, 8)),
			attrs: Attributes{Conv: nhwc, Window: w3}, want: f32(2, 5, 5, 8)},
		{name: "conv depthwise", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(3, 1, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3, FeatureGroupCount: 3}, want: f32(1, 3, 3, 3)},
		// lhs dilation 2: 5 → 9; 9 - 3 + 1 = 7.
		{name: "conv lhs dilation", op: OpConvolution, operands: shp(f32(1, 2, 5), f32(4, 2, 3)),
			attrs: Attributes{Conv: conv1d, Window: lhsDilated}, want: f32(1, 4, 7)},
		{name: "conv batch groups", op: OpConvolution, operands: shp(f32(4, 3, 5, 5), f32(6, 3, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3, BatchGroupCount: 2}, want: f32(2, 6, 3, 3)},
		{name: "conv window size", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 3, 2, 2)),
			attrs: Attributes{Conv: &nchw, Window: w3}, err: "window dimension 0 has size 3, but kernel f32[4,3,2,2] spatial dimension 2 has size 2"},
		{name: "conv features", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 2, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3}, err: "needs 3 input features, has 2"},
		{name: "conv groups both", op: OpConvolution, operands: shp(f32(2, 2, 5, 5), f32(2, 1, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3, FeatureGroupCount: 2, BatchGroupCount: 2}, err: "cannot both exceed 1"},
		{name: "conv labels", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 3, 3, 3)),
			attrs: Attributes{Conv: &ConvDims{InputBatch: 0, InputFeature: 0, InputSpatial: dims(2, 3),
				KernelOutput: 0, KernelInput: 1, KernelSpatial: dims(2, 3), OutputBatch: 0, OutputFeature: 1,
				OutputSpatial: dims(2, 3)}, Window: w3}, err: "input dim_labels"},
		{name: "conv rank", op: OpConvolution, operands: shp(f32(1, 3, 5), f32(4, 3, 3, 3)),
			attrs: Attributes{Conv: &nchw, Window: w3}, err: "must have rank 4"},
		{name: "conv no labels", op: OpConvolution, operands: shp(f32(1, 3, 5, 5), f32(4, 3, 3, 3)),
			attrs: Attributes{Window: w3}, err: "has no dim_labels"},
	})
}

func TestInferControl(t *testing.T) {
	state := MakeTuple(s32(), f32(2))
	cond := compOf("cond", shp(state), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Compare(b.GetTupleElement(ps[0], 0), b.ScalarConstant(S32, 3), CmpLT)
	})
	body := compOf("body", shp(state), identity)
	badBody := compOf("bad_body", shp(state), func(b *Builder, ps []*Instruction) *Instruction {
		return b.GetTupleElement(ps[0], 1)
	})
	f2 := compOf("f2", shp(f32(2)), identity)
	s2 := compOf("s2", shp(s32(2)), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Convert(ps[0], F32)
	})
	call := compOf("call", shp(f32(2), s32()), identity)
	runInferCases(t, []inferCase{
		{name: "tuple", op: OpTuple, operands: shp(f32(2), s32()), want: MakeTuple(f32(2), s32())},
		{name: "tuple empty", op: OpTuple, want: MakeTuple()},
		{name: "tuple nested", op: OpTuple, operands: shp(MakeTuple(f32())), want: MakeTuple(MakeTuple(f32()))},
		{name: "get-tuple-element", op: OpGetTupleElement, operands: shp(state), attrs: Attributes{TupleIndex: 1},
			want: f32(2)},
		{name: "get-tuple-element range", op: OpGetTupleElement, operands: shp(state), attrs: Attributes{TupleIndex: 2},
			err: "index 2 out of range"},
		{name: "get-tuple-element array", op: OpGetTupleElement, operands: shp(f32(2)), err: "not a tuple"},

		{name: "while", op: OpWhile, operands: shp(state), called: []*Computation{cond, body}, want: state},
		{name: "while body", op: OpWhile, operands: shp(state), called: []*Computation{cond, badBody},
			err: "body computation \"bad_body\" has signature ((s32[], f32[2])) -> f32[2], want ((s32[], f32[2])) -> (s32[], f32[2])"},
		{name: "while condition", op: OpWhile, operands: shp(state), called: []*Computation{body, body},
			err: "condition computation"},
		{name: "while init", op: OpWhile, operands: shp(f32(2)), called: []*Computation{cond, body}, err: "condition"},

		{name: "conditional pred", op: OpConditional, operands: shp(pred(), f32(2), s32(2)),
			called: []*Computation{f2, s2}, want: f32(2)},
		{name: "conditional index", op: OpConditional, operands: shp(s32(), f32(2), s32(2), f32(2)),
			called: []*Computation{f2, s2, f2}, want: f32(2)},
		{name: "conditional pred three", op: OpConditional, operands: shp(pred(), f32(2), s32(2), f32(2)),
			called: []*Computation{f2, s2, f2}, err: "needs 2 branches"},
		{name: "conditional selector", op: OpConditional, operands: shp(MakeShape(S64), f32(2)),
			called: []*Computation{f2}, err: "branch selector s64[] must be pred[] or s32[]"},
		{name: "conditional argument", op: OpConditional, operands: shp(s32(), s32(2)),
			called: []*Computation{f2}, err: "branch 0 computation"},
		{name: "conditional results", op: OpConditional, operands: shp(pred(), f32(2), s32(2)),
			called: []*Computation{f2, compOf("s2id", shp(s32(2)), identity)}, err: "branch 1"},
		{name: "conditional counts", op: OpConditional, operands: shp(pred(), f32(2)),
			called: []*Computation{f2, f2}, err: "2 branches need 2 branch operands, got 1"},
		{name: "conditional no branches", op: OpConditional, operands: shp(pred()), err: "at least one"},

		{name: "call", op: OpCall, operands: shp(f32(2), s32()), called: []*Computation{call}, want: f32(2)},
		{name: "call arguments", op: OpCall, operands: shp(f32(2)), called: []*Computation{call},
			err: "has signature (f32[2], s32[]) -> f32[2], want (f32[2]) -> f32[2]"},
		{name: "call nil", op: OpCall, operands: shp(f32(2)), called: []*Computation{nil}, err: "is nil"},
		{name: "call no root", op: OpCall, called: []*Computation{{Name: "empty"}}, err: "has no root"},
	})
}

func TestInferFusion(t *testing.T) {
	loop := compOf("fused_loop", shp(f32(4), f32()), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Mul(b.Add(ps[0], b.BroadcastScalar(ps[1], 4)), ps[0])
	})
	input := compOf("fused_reduce", shp(f32(4, 3), f32()), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Reduce([]*Instruction{b.Exp(ps[0])}, ps[1:], b.Reducer(OpAdd, F32), dims(1))
	})
	multi := compOf("fused_pair", shp(s32(3), s32(3)), func(b *Builder, ps []*Instruction) *Instruction {
		return b.Tuple(b.Add(ps[0], ps[1]), b.Mul(ps[0], ps[1]))
	})
	param1 := loop.Params[1].Name
	runInferCases(t, []inferCase{
		{name: "loop", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop}, want: f32(4)},
		{name: "input", op: OpFusion, operands: shp(f32(4, 3), f32()), called: []*Computation{input},
			attrs: Attributes{FusionKind: FusionInput}, want: f32(4)},
		{name: "multi-output", op: OpFusion, operands: shp(s32(3), s32(3)), called: []*Computation{multi},
			attrs: Attributes{FusionKind: FusionLoop}, want: MakeTuple(s32(3), s32(3))},
		{name: "output kind", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop},
			attrs: Attributes{FusionKind: FusionOutput}, want: f32(4)},
		{name: "custom kind", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop},
			attrs: Attributes{FusionKind: FusionCustom}, want: f32(4)},
		{name: "too few operands", op: OpFusion, operands: shp(f32(4)), called: []*Computation{loop},
			err: `fusion: fused computation "fused_loop" takes 2 parameters, got 1 operands`},
		{name: "too many operands", op: OpFusion, operands: shp(f32(4), f32(), f32()), called: []*Computation{loop},
			err: `fused computation "fused_loop" takes 2 parameters, got 3 operands`},
		{name: "operand shape", op: OpFusion, operands: shp(f32(4), f32(4)), called: []*Computation{loop},
			err: `fusion: operand 1 has shape f32[4], but parameter 1 (` + param1 + `) of fused computation "fused_loop" is f32[]`},
		{name: "operand type", op: OpFusion, operands: shp(s32(4), f32()), called: []*Computation{loop},
			err: `operand 0 has shape s32[4], but parameter 0`},
		{name: "declared shape", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop},
			declared: ptr(f32(3)), err: "fusion: declared shape f32[3] differs from inferred shape f32[4]"},
		{name: "unknown kind", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop},
			attrs: Attributes{FusionKind: 9}, err: "fusion: unknown fusion kind fusionkind(9)"},
		{name: "no computation", op: OpFusion, operands: shp(f32(4), f32()), err: "calls 1 computations [calls], got 0"},
		{name: "two computations", op: OpFusion, operands: shp(f32(4), f32()), called: []*Computation{loop, loop},
			err: "calls 1 computations [calls], got 2"},
		{name: "nil computation", op: OpFusion, operands: shp(f32(4)), called: []*Computation{nil}, err: "is nil"},
		{name: "no root", op: OpFusion, called: []*Computation{{Name: "empty"}}, err: `calls computation "empty" has no root`},
	})
}

// TestInferShapeErrorNamesOp checks the error style: op name first, then the
// operand shapes and what is wrong.
func TestInferShapeErrorNamesOp(t *testing.T) {
	_, err := InferShape(OpMultiply, shp(f32(2, 3), f32(3)), nil, nil)
	require.Error(t, err)
	assert.Equal(t, "multiply: operand shapes f32[2,3] and f32[3] differ", err.Error())
}

func TestResultIsDeclared(t *testing.T) {
	var declared []Opcode
	for _, op := range AllOpcodes() {
		if ResultIsDeclared(op) {
			declared = append(declared, op)
		}
	}
	assert.Equal(t, []Opcode{OpParameter, OpIota, OpConvert, OpBitcastConvert, OpBroadcast, OpReshape,
		OpRngBitGenerator, OpCustomCall, OpBitcast, OpRng}, declared)
}
