package codegen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// scatterComp is scatter of rows: operand [R, D], indices [U] (s32), updates [U, D].
func scatterComp(t testing.TB, dt hlo.DType, rows, u int64, op hlo.Opcode, unique bool) *hlo.Computation {
	b := newCB(t, "scatter")
	x, ind, upd := b.param(s(dt, rows, 6)), b.param(s(hlo.S32, u)), b.param(s(dt, u, 6))
	sd := &hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, UniqueIndices: unique}
	return b.build(b.op(hlo.OpScatter, hlo.Attributes{Scatter: sd}, []*hlo.Computation{scalarComp(t, op, dt)}, x, ind, upd))
}

func TestScatter(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.S32, hlo.U32, hlo.F16, hlo.S8, hlo.F64, hlo.U64} {
		for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpMaximum} {
			for _, unique := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%v/unique=%v", dt, op, unique), func(t *testing.T) {
					p := lowerOK(t, scatterComp(t, dt, 10, 5, op, unique))
					require.Len(t, p.Dispatches, 2)
				})
			}
		}
	}
	// Overwrite combiner (returns the update): serial.
	b := newCB(t, "overwrite")
	a, u := b.param(s(hlo.F32)), b.param(s(hlo.F32))
	_ = a
	over := b.build(u)
	b = newCB(t, "scatter_overwrite")
	x, ind, upd := b.param(s(hlo.F32, 4, 5)), b.param(s(hlo.U8, 2, 3, 2)), b.param(s(hlo.F32, 2, 3))
	sd := &hlo.ScatterDims{InsertedWindowDims: []int64{0, 1}, ScatterDimsToOperandDims: []int64{0, 1}, IndexVectorDim: 2}
	lowerOK(t, b.build(b.op(hlo.OpScatter, hlo.Attributes{Scatter: sd}, []*hlo.Computation{over}, x, ind, upd)))
}

func TestScatterVariadicAndBatching(t *testing.T) {
	b := newCB(t, "scatter2")
	x0, x1 := b.param(s(hlo.F32, 3, 10)), b.param(s(hlo.S32, 3, 10))
	ind := b.param(s(hlo.S64, 3, 4))
	u0, u1 := b.param(s(hlo.F32, 3, 4)), b.param(s(hlo.S32, 3, 4))
	sd := &hlo.ScatterDims{InsertedWindowDims: []int64{1}, ScatterDimsToOperandDims: []int64{1}, IndexVectorDim: 2,
		InputBatchingDims: []int64{0}, ScatterIndicesBatchingDims: []int64{0}}
	rb := newCB(t, "pair_add")
	a0, a1, c0, c1 := rb.param(s(hlo.F32)), rb.param(s(hlo.S32)), rb.param(s(hlo.F32)), rb.param(s(hlo.S32))
	red := rb.build(rb.simple(hlo.OpTuple, rb.simple(hlo.OpAdd, a0, c0), rb.simple(hlo.OpAdd, a1, c1)))
	p := lowerOK(t, b.build(b.op(hlo.OpScatter, hlo.Attributes{Scatter: sd}, []*hlo.Computation{red}, x0, x1, ind, u0, u1)))
	require.Len(t, p.Outputs, 2)
}

func TestSort(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.S32, hlo.F16, hlo.BF16, hlo.U8, hlo.Pred, hlo.F64, hlo.S64} {
		for _, dims := range [][]int64{{1}, {5}, {3, 100}, {64, 2}, {1000}} {
			t.Run(fmt.Sprintf("%v/%v", dt, dims), func(t *testing.T) {
				b := newCB(t, "sort")
				x := b.param(s(dt, dims...))
				dim := int64(len(dims) - 1)
				if dims[0] == 64 {
					dim = 0
				}
				lowerOK(t, b.build(b.op(hlo.OpSort, hlo.Attributes{Dimensions: []int64{dim}, IsStable: true},
					[]*hlo.Computation{compareComp(t, hlo.CmpLT, dt)}, x)))
			})
		}
	}
	// Key-value sort.
	b := newCB(t, "sort_kv")
	keys, vals := b.param(s(hlo.F32, 4, 33)), b.param(s(hlo.S32, 4, 33))
	cb := newCB(t, "kv_less")
	l0, r0 := cb.param(s(hlo.F32)), cb.param(s(hlo.F32))
	cb.param(s(hlo.S32))
	cb.param(s(hlo.S32))
	comp := cb.build(cb.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpLT, CompareType: hlo.CompareTotalOrder}, nil, l0, r0))
	p := lowerOK(t, b.build(b.op(hlo.OpSort, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{comp}, keys, vals)))
	require.Len(t, p.Outputs, 2)
	// 6·7/2 stages for P = 64, plus init and gather.
	require.Len(t, p.Dispatches, 21+2)
}
