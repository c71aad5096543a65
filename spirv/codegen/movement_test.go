package codegen

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// movementDTypes are the element types every data-movement test runs over.
var movementDTypes = []hlo.DType{hlo.Pred, hlo.S8, hlo.U16, hlo.F16, hlo.BF16, hlo.S32, hlo.F32, hlo.U64, hlo.F64}

func forDTypes(t *testing.T, dts []hlo.DType, fn func(t *testing.T, dt hlo.DType)) {
	for _, dt := range dts {
		t.Run(dt.String(), func(t *testing.T) { fn(t, dt) })
	}
}

func TestBroadcastReshapeTranspose(t *testing.T) {
	forDTypes(t, movementDTypes, func(t *testing.T, dt hlo.DType) {
		b := newCB(t, "broadcast")
		x := b.param(s(dt, 3, 4))
		lowerOK(t, b.build(b.declared(hlo.OpBroadcast, s(dt, 4, 2, 3), hlo.Attributes{Dimensions: []int64{2, 0}}, x)))
		b = newCB(t, "broadcast_scalar")
		x = b.param(s(dt))
		lowerOK(t, b.build(b.declared(hlo.OpBroadcast, s(dt, 5, 6), hlo.Attributes{Dimensions: []int64{}}, x)))
		b = newCB(t, "reshape")
		x = b.param(s(dt, 6, 4))
		lowerOK(t, b.build(b.declared(hlo.OpReshape, s(dt, 2, 3, 4), hlo.Attributes{}, x)))
		b = newCB(t, "reshape_unit")
		x = b.param(s(dt, 6, 4))
		lowerOK(t, b.build(b.declared(hlo.OpReshape, s(dt, 1, 6, 1, 4), hlo.Attributes{}, x)))
		b = newCB(t, "transpose")
		x = b.param(s(dt, 2, 3, 4))
		lowerOK(t, b.build(b.op(hlo.OpTranspose, hlo.Attributes{Dimensions: []int64{2, 0, 1}}, nil, x)))
	})
}

func TestSliceReverseConcatPad(t *testing.T) {
	forDTypes(t, movementDTypes, func(t *testing.T, dt hlo.DType) {
		b := newCB(t, "slice")
		x := b.param(s(dt, 10, 9))
		lowerOK(t, b.build(b.op(hlo.OpSlice, hlo.Attributes{Slice: []hlo.SliceDim{{Start: 1, Limit: 9, Stride: 3}, {Start: 0, Limit: 9, Stride: 1}}}, nil, x)))
		b = newCB(t, "reverse")
		x = b.param(s(dt, 4, 5))
		lowerOK(t, b.build(b.op(hlo.OpReverse, hlo.Attributes{Dimensions: []int64{1}}, nil, x)))
		b = newCB(t, "concatenate")
		x, y, z := b.param(s(dt, 2, 3)), b.param(s(dt, 2, 0)), b.param(s(dt, 2, 5))
		lowerOK(t, b.build(b.op(hlo.OpConcatenate, hlo.Attributes{Dimensions: []int64{1}}, nil, x, y, z)))
		b = newCB(t, "pad")
		x, v := b.param(s(dt, 3, 4)), b.param(s(dt))
		pads := []hlo.PadDim{{Low: 1, High: 2, Interior: 1}, {Low: -1, High: 0, Interior: 0}}
		lowerOK(t, b.build(b.op(hlo.OpPad, hlo.Attributes{Padding: pads}, nil, x, v)))
	})
}

func TestIota(t *testing.T) {
	for _, dt := range hlo.AllDTypes {
		if !dt.IsNumeric() {
			continue
		}
		b := newCB(t, "iota")
		lowerOK(t, b.build(b.declared(hlo.OpIota, s(dt, 3, 17), hlo.Attributes{IotaDimension: 1})))
	}
}

func TestDynamicSlices(t *testing.T) {
	for _, it := range []hlo.DType{hlo.S32, hlo.U8, hlo.S64, hlo.U32} {
		forDTypes(t, movementDTypes, func(t *testing.T, dt hlo.DType) {
			b := newCB(t, "dynamic_slice")
			x, i, j := b.param(s(dt, 8, 6)), b.param(s(it)), b.param(s(it))
			lowerOK(t, b.build(b.op(hlo.OpDynamicSlice, hlo.Attributes{SliceSizes: []int64{3, 6}}, nil, x, i, j)))
			b = newCB(t, "dynamic_update_slice")
			x, u := b.param(s(dt, 8, 6)), b.param(s(dt, 2, 3))
			i, j = b.param(s(it)), b.param(s(it))
			lowerOK(t, b.build(b.simple(hlo.OpDynamicUpdateSlice, x, u, i, j)))
		})
	}
}

func TestGather(t *testing.T) {
	forDTypes(t, movementDTypes, func(t *testing.T, dt hlo.DType) {
		// Embedding lookup: rows of a [V, D] table by s32 ids [B, S].
		b := newCB(t, "gather_rows")
		x, ids := b.param(s(dt, 50, 8)), b.param(s(hlo.S32, 4, 6))
		gd := &hlo.GatherDims{OffsetDims: []int64{2}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 2}
		lowerOK(t, b.build(b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{1, 8}}, nil, x, ids)))
		// Index vectors along dim 0, 2-D windows.
		b = newCB(t, "gather_vec")
		x, ids = b.param(s(dt, 9, 7, 5)), b.param(s(hlo.U32, 2, 3))
		gd = &hlo.GatherDims{OffsetDims: []int64{1, 2}, CollapsedSliceDims: []int64{1}, StartIndexMap: []int64{0, 1}, IndexVectorDim: 0}
		lowerOK(t, b.build(b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{2, 1, 5}}, nil, x, ids)))
		// Batching dims.
		b = newCB(t, "gather_batch")
		x, ids = b.param(s(dt, 3, 10, 4)), b.param(s(hlo.S64, 3, 5, 1))
		gd = &hlo.GatherDims{OffsetDims: []int64{2}, CollapsedSliceDims: []int64{1}, StartIndexMap: []int64{1},
			IndexVectorDim: 2, OperandBatchingDims: []int64{0}, StartIndicesBatchingDims: []int64{0}}
		lowerOK(t, b.build(b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{1, 1, 4}}, nil, x, ids)))
	})
}
