package codegen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// reduceComp builds reduce(x, init) over dims with the reducer op.
func reduceComp(t testing.TB, dt hlo.DType, dims []int64, over []int64, op hlo.Opcode) *hlo.Computation {
	b := newCB(t, "reduce")
	x, init := b.param(s(dt, dims...)), b.param(s(dt))
	return b.build(b.op(hlo.OpReduce, hlo.Attributes{Dimensions: over}, []*hlo.Computation{scalarComp(t, op, dt)}, x, init))
}

func TestReduceElemental(t *testing.T) {
	for _, dt := range hlo.AllDTypes {
		if !dt.IsNumeric() {
			continue
		}
		for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum, hlo.OpMultiply} {
			t.Run(fmt.Sprintf("%v/%v", dt, op), func(t *testing.T) {
				p := lowerOK(t, reduceComp(t, dt, []int64{4, 5, 6}, []int64{2, 0}, op))
				require.Len(t, p.Dispatches, 1)
				lowerOK(t, reduceComp(t, dt, []int64{7}, []int64{0}, op))
			})
		}
	}
	// pred and/or reductions
	lowerOK(t, reduceComp(t, hlo.Pred, []int64{4, 33}, []int64{1}, hlo.OpOr))
}

func TestReduceTree(t *testing.T) {
	cases := []struct {
		dims, over []int64
		passes     int
	}{
		{[]int64{8, 4096}, []int64{1}, 1},
		{[]int64{4096, 3}, []int64{0}, 1},
		{[]int64{1 << 20}, []int64{0}, 2},
		{[]int64{3, 1000, 70}, []int64{1, 2}, 2},
	}
	for _, dt := range []hlo.DType{hlo.F32, hlo.S32, hlo.U32, hlo.F16, hlo.BF16, hlo.F64, hlo.S8, hlo.U64} {
		for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum, hlo.OpMinimum} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("%v/%v/%v", dt, op, c.dims), func(t *testing.T) {
					p := lowerOK(t, reduceComp(t, dt, c.dims, c.over, op))
					require.Len(t, p.Dispatches, c.passes)
					require.Len(t, p.Scratch, c.passes-1)
				})
			}
		}
	}
	// Without subgroup arithmetic: the shared-memory tree only.
	target := LavapipeTarget()
	target.SubgroupArithmetic = false
	lowerFor(t, reduceComp(t, hlo.F32, []int64{2, 5000}, []int64{1}, hlo.OpAdd), target)
}

// argmaxReducer is the variadic (value, index) reducer keeping the larger value
// and, on ties, the smaller index.
func argmaxReducer(t testing.TB) *hlo.Computation {
	b := newCB(t, "argmax")
	av, ai := b.param(s(hlo.F32)), b.param(s(hlo.S32))
	bv, bi := b.param(s(hlo.F32)), b.param(s(hlo.S32))
	gt := b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpGT}, nil, av, bv)
	eq := b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpEQ}, nil, av, bv)
	lt := b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpLT}, nil, ai, bi)
	pickA := b.simple(hlo.OpOr, gt, b.simple(hlo.OpAnd, eq, lt))
	v := b.simple(hlo.OpSelect, pickA, av, bv)
	i := b.simple(hlo.OpSelect, pickA, ai, bi)
	return b.build(b.simple(hlo.OpTuple, v, i))
}

func TestReduceVariadic(t *testing.T) {
	for _, n := range []int64{50, 5000} {
		b := newCB(t, "argmax")
		x := b.param(s(hlo.F32, 3, n))
		iota := b.declared(hlo.OpIota, s(hlo.S32, 3, n), hlo.Attributes{IotaDimension: 1})
		v0, i0 := b.param(s(hlo.F32)), b.param(s(hlo.S32))
		r := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{argmaxReducer(t)}, x, iota, v0, i0)
		p := lowerOK(t, b.build(r))
		require.Len(t, p.Outputs, 2)
	}
}

// A reduction feeding elementwise ops (softmax's normaliser) stays one kernel.
func TestReduceFused(t *testing.T) {
	b := newCB(t, "softmax_denominator")
	x := b.param(s(hlo.F32, 16, 100))
	zero := b.constant(hlo.ScalarLiteral[float32](0))
	e := b.simple(hlo.OpExp, x)
	sum := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{scalarComp(t, hlo.OpAdd, hlo.F32)}, e, zero)
	bs := b.declared(hlo.OpBroadcast, s(hlo.F32, 16, 100), hlo.Attributes{Dimensions: []int64{0}}, sum)
	p := lowerOK(t, b.build(b.simple(hlo.OpDivide, e, bs)))
	require.Len(t, p.Dispatches, 1)
}

func TestReduceWindow(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.F16, hlo.S32, hlo.U8, hlo.F64} {
		t.Run(dt.String(), func(t *testing.T) {
			b := newCB(t, "maxpool")
			x, init := b.param(s(dt, 2, 9, 9, 3)), b.param(s(dt))
			w := []hlo.WindowDim{hlo.NewWindowDim(1), hlo.NewWindowDim(3), hlo.NewWindowDim(3), hlo.NewWindowDim(1)}
			w[1].Stride, w[2].Stride = 2, 2
			w[1].PadLow, w[1].PadHigh = 1, 1
			w[2].BaseDilation, w[2].WindowDilation = 2, 2
			lowerOK(t, b.build(b.op(hlo.OpReduceWindow, hlo.Attributes{Window: w},
				[]*hlo.Computation{scalarComp(t, hlo.OpMaximum, dt)}, x, init)))
		})
	}
}

func TestSelectAndScatter(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.S32} {
		t.Run(dt.String(), func(t *testing.T) {
			b := newCB(t, "maxpool_grad")
			x := b.param(s(dt, 2, 8, 8))
			w := []hlo.WindowDim{hlo.NewWindowDim(1), hlo.NewWindowDim(3), hlo.NewWindowDim(2)}
			w[1].Stride, w[2].Stride = 2, 2
			w[1].PadLow, w[1].PadHigh = 1, 0
			src := b.param(s(dt, 2, 4, 4))
			init := b.param(s(dt))
			sel := compareComp(t, hlo.CmpGE, dt)
			lowerOK(t, b.build(b.op(hlo.OpSelectAndScatter, hlo.Attributes{Window: w},
				[]*hlo.Computation{sel, scalarComp(t, hlo.OpAdd, dt)}, x, src, init)))
		})
	}
}
