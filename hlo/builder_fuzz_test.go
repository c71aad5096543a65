package hlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzBuilder drives the builder with op sequences decoded from the input: random
// ops, operands, shapes and attributes. No input may panic; every failing call must
// leave a builder error, every succeeding one an instruction that passes CheckShape,
// and every builder without an error must Build a module that verifies.
func FuzzBuilder(f *testing.F) {
	for i := range AllOpcodes() {
		// One f32[2,3] and one s32[3] parameter, then op i with early operands.
		f.Add([]byte{2, 3, 2, 2, 3, 1, 1, 3, byte(i), 0, 1, 2, 1, 0, 2, 1, 3})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{data: data}
		for steps := 0; !r.done() && steps < 64; {
			b, vals := newFuzzBuilder(r)
			for !r.done() && steps < 64 && b.Err() == nil {
				steps++
				in := fuzzOp(b, r, vals)
				checkFuzzStep(t, b, in)
				if in != nil {
					vals = append(vals, in)
				}
			}
			if b.Err() == nil && len(vals) > 0 {
				_, err := b.Build(vals[len(vals)-1])
				require.NoError(t, err, "the builder accepted every op, so Build must verify")
			}
		}
	})
}

func checkFuzzStep(t *testing.T, b *Builder, in *Instruction) {
	t.Helper()
	if in == nil {
		require.Error(t, b.Err(), "a nil result must leave an error")
		require.True(t, strings.HasPrefix(b.Err().Error(), "hlo builder"), b.Err().Error())
		return
	}
	require.NoError(t, b.Err())
	require.NoError(t, validShape(in.Shape))
	shapes := make([]Shape, len(in.Operands))
	for i, x := range in.Operands {
		shapes[i] = x.Shape
	}
	require.NoError(t, CheckShape(in.Op, shapes, &in.Attrs, in.Called, in.Shape))
}

// fuzzReader draws choices from the fuzz input; past its end every draw is 0.
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) done() bool { return r.pos >= len(r.data) }

func (r *fuzzReader) byte() byte {
	if r.done() {
		return 0
	}
	r.pos++
	return r.data[r.pos-1]
}

func (r *fuzzReader) intn(n int) int { return int(r.byte()) % n }
func (r *fuzzReader) bool() bool     { return r.byte()&1 == 1 }

// small is a dimension-sized value, mostly valid, sometimes -1.
func (r *fuzzReader) small() int64 { return int64(r.byte()%6) - 1 }

func (r *fuzzReader) smalls(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = r.small()
	}
	return out
}

var fuzzTypes = []DType{Pred, S32, U8, F32, F16}

func (r *fuzzReader) dtype() DType { return fuzzTypes[r.intn(len(fuzzTypes))] }

func (r *fuzzReader) shape() Shape {
	dt, rank := r.dtype(), r.intn(4)
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = int64(r.intn(4))
	}
	return MakeShape(dt, dims...)
}

func newFuzzBuilder(r *fuzzReader) (*Builder, []*Instruction) {
	b := NewBuilder("fuzz")
	n := 1 + r.intn(3)
	vals := make([]*Instruction, 0, n)
	for i := 0; i < n; i++ {
		vals = append(vals, b.Parameter(r.shape(), ""))
	}
	return b, vals
}

// fuzzOp adds one op chosen by the input, with operands from vals.
func fuzzOp(b *Builder, r *fuzzReader, vals []*Instruction) *Instruction {
	op := AllOpcodes()[r.intn(len(AllOpcodes()))]
	pick := func() *Instruction { return vals[r.intn(len(vals))] }
	x := pick()
	switch op.Info().Kind {
	case KindUnary:
		return b.Unary(op, x)
	case KindBinary:
		return b.Binary(op, x, pick())
	case KindLeaf:
		return fuzzLeaf(b, r, op)
	case KindElementwise:
		return fuzzElementwise(b, r, op, x, pick)
	case KindMovement:
		return fuzzMovement(b, r, op, x, pick)
	case KindReduction, KindContraction, KindSort:
		return fuzzReduction(b, r, op, x, pick)
	}
	return fuzzControl(b, r, op, x, pick)
}

func fuzzLeaf(b *Builder, r *fuzzReader, op Opcode) *Instruction {
	switch op {
	case OpParameter:
		return b.Parameter(r.shape(), "")
	case OpConstant:
		return b.ScalarConstant(r.dtype(), float64(r.small()))
	}
	return b.Iota(r.shape(), r.small())
}

func fuzzElementwise(b *Builder, r *fuzzReader, op Opcode, x *Instruction, pick func() *Instruction) *Instruction {
	switch op {
	case OpCompare:
		return b.CompareTyped(x, pick(), ComparisonDirection(r.intn(7)), CompareType(r.intn(6)))
	case OpSelect:
		return b.Select(x, pick(), pick())
	case OpClamp:
		return b.Clamp(x, pick(), pick())
	case OpConvert:
		return b.Convert(x, r.dtype())
	}
	return b.BitcastConvert(x, r.dtype())
}

func fuzzMovement(b *Builder, r *fuzzReader, op Opcode, x *Instruction, pick func() *Instruction) *Instruction {
	rank := x.Shape.Rank()
	switch op {
	case OpBroadcast:
		if r.bool() { // a valid broadcast adding a major dimension
			return b.Broadcast(x, append([]int64{r.small()}, x.Shape.Dims...), fuzzIota(rank, 1))
		}
		return b.Broadcast(x, r.smalls(r.intn(4)), r.smalls(rank))
	case OpReshape:
		if r.bool() {
			return b.Reshape(x, x.Shape.NumElements())
		}
		return b.Reshape(x, r.smalls(r.intn(4))...)
	case OpTranspose:
		return b.Transpose(x, r.smalls(rank)...)
	case OpSlice:
		return b.Slice(x, r.smalls(rank), r.smalls(rank), r.smalls(rank))
	case OpConcatenate:
		return b.Concatenate(r.small(), x, pick())
	case OpPad:
		pads := make([]PadDim, rank)
		for i := range pads {
			pads[i] = PadDim{r.small(), r.small(), r.small()}
		}
		return b.Pad(x, pick(), pads)
	case OpReverse:
		return b.Reverse(x, r.smalls(r.intn(3))...)
	}
	return fuzzIndexing(b, r, op, x, pick)
}

func fuzzIota(n int, offset int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i) + offset
	}
	return out
}

func fuzzStarts(b *Builder, r *fuzzReader, n int) []*Instruction {
	starts := make([]*Instruction, n)
	for i := range starts {
		starts[i] = b.ScalarConstant(S32, float64(r.small()))
	}
	return starts
}

func fuzzIndexing(b *Builder, r *fuzzReader, op Opcode, x *Instruction, pick func() *Instruction) *Instruction {
	rank := x.Shape.Rank()
	switch op {
	case OpDynamicSlice:
		return b.DynamicSlice(x, fuzzStarts(b, r, rank), r.smalls(rank))
	case OpDynamicUpdateSlice:
		return b.DynamicUpdateSlice(x, pick(), fuzzStarts(b, r, rank))
	case OpGather:
		if r.bool() && rank > 0 && x.Shape.Dims[0] > 0 {
			return fuzzRowGather(b, r, x)
		}
		g := GatherDims{OffsetDims: r.smalls(r.intn(3)), CollapsedSliceDims: r.smalls(r.intn(2)),
			StartIndexMap: r.smalls(r.intn(3)), IndexVectorDim: r.small(),
			OperandBatchingDims: r.smalls(r.intn(2)), StartIndicesBatchingDims: r.smalls(r.intn(2))}
		return b.Gather(x, pick(), g, r.smalls(rank))
	}
	if r.bool() && rank > 0 && x.Shape.Dims[0] > 0 {
		return fuzzRowScatter(b, r, x)
	}
	s := ScatterDims{UpdateWindowDims: r.smalls(r.intn(3)), InsertedWindowDims: r.smalls(r.intn(2)),
		ScatterDimsToOperandDims: r.smalls(r.intn(3)), IndexVectorDim: r.small(),
		InputBatchingDims: r.smalls(r.intn(2)), ScatterIndicesBatchingDims: r.smalls(r.intn(2))}
	return b.Scatter([]*Instruction{x}, pick(), []*Instruction{pick()}, b.Reducer(OpAdd, x.Shape.DType), s)
}

func fuzzWindow(r *fuzzReader, n int) []WindowDim {
	w := make([]WindowDim, n)
	for i := range w {
		w[i] = WindowDim{Size: r.small(), Stride: r.small(), PadLow: r.small(), PadHigh: r.small(),
			WindowDilation: 1 + int64(r.intn(2)), BaseDilation: 1 + int64(r.intn(2))}
	}
	return w
}

func fuzzReduction(b *Builder, r *fuzzReader, op Opcode, x *Instruction, pick func() *Instruction) *Instruction {
	dt, rank := x.Shape.DType, x.Shape.Rank()
	init := func() *Instruction { return b.ScalarConstant(dt, 0) }
	switch op {
	case OpReduce:
		return b.Reduce([]*Instruction{x}, []*Instruction{init()}, b.Reducer(OpMaximum, dt), r.smalls(r.intn(3)))
	case OpReduceWindow:
		return b.ReduceWindow([]*Instruction{x}, []*Instruction{init()}, b.Reducer(OpAdd, dt), fuzzWindow(r, rank))
	case OpSelectAndScatter:
		return b.SelectAndScatter(x, pick(), init(), b.Comparator(CmpGE, dt), b.Reducer(OpAdd, dt), fuzzWindow(r, rank))
	case OpDot:
		if r.bool() {
			return b.Dot(x, pick())
		}
		n := r.intn(2)
		return b.DotGeneral(x, pick(), DotDims{r.smalls(n), r.smalls(n), r.smalls(1), r.smalls(1)})
	case OpConvolution:
		spatial := max(rank-2, 0)
		return b.Conv(x, pick(), fuzzWindow(r, spatial), DefaultConvDims(spatial), r.small(), r.small())
	}
	return b.Sort([]*Instruction{x}, b.Comparator(CmpLT, dt), r.small(), r.bool())
}

func fuzzControl(b *Builder, r *fuzzReader, op Opcode, x *Instruction, pick func() *Instruction) *Instruction {
	s := x.Shape
	switch op {
	case OpTuple:
		return b.Tuple(x, pick())
	case OpGetTupleElement:
		if s.IsTuple() && len(s.Elems) > 0 {
			return b.GetTupleElement(x, int64(r.intn(len(s.Elems))))
		}
		return b.GetTupleElement(x, r.small())
	case OpWhile:
		never := compOf("never", shp(s), func(b *Builder, _ []*Instruction) *Instruction {
			return b.ScalarConstant(Pred, 0)
		})
		return b.While(never, compOf("body", shp(pick().Shape), identity), x)
	case OpConditional:
		branches := []*Computation{compOf("b0", shp(s), identity), compOf("b1", shp(s), identity)}
		return b.Conditional(pick(), branches, []*Instruction{x, pick()})
	case OpFusion:
		// Kinds 0…4: the four kinds, and one the builder must refuse.
		fused := compOf("fused", shp(s), func(b *Builder, ps []*Instruction) *Instruction { return b.Tuple(ps[0], ps[0]) })
		return b.Fusion(FusionKind(r.intn(5)), fused, x)
	}
	return b.Call(compOf("callee", shp(s), identity), x)
}

// fuzzRowGather gathers n rows of x (a valid gather, which random dimension numbers
// rarely make): indices s32[n], one per row, the other dims kept whole.
func fuzzRowGather(b *Builder, r *fuzzReader, x *Instruction) *Instruction {
	rank := x.Shape.Rank()
	idx := b.Iota(MakeShape(S32, int64(r.intn(4))), 0)
	g := GatherDims{OffsetDims: fuzzIota(rank-1, 1), CollapsedSliceDims: []int64{0},
		StartIndexMap: []int64{0}, IndexVectorDim: 1}
	return b.Gather(x, idx, g, append([]int64{1}, x.Shape.Dims[1:]...))
}

// fuzzRowScatter adds n rows into x at run-time row indices.
func fuzzRowScatter(b *Builder, r *fuzzReader, x *Instruction) *Instruction {
	rank, n := x.Shape.Rank(), int64(r.intn(4))
	idx := b.Iota(MakeShape(S32, n), 0)
	upd := b.Parameter(MakeShape(x.Shape.DType, append([]int64{n}, x.Shape.Dims[1:]...)...), "")
	s := ScatterDims{UpdateWindowDims: fuzzIota(rank-1, 1), InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
	return b.Scatter([]*Instruction{x}, idx, []*Instruction{upd}, b.Reducer(OpAdd, x.Shape.DType), s)
}
