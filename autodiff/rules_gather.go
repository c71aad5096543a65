package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// vjpGather scatter-adds the cotangent into zeros at the gathered positions. Gather
// clamps each start so the slice stays in bounds while scatter drops out-of-bounds
// windows, so the indices are clamped explicitly first (as gather did).
func vjpGather(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x, idx := n.args[0], n.args[1]
	gd, sizes := n.orig.Attrs.Gather, n.orig.Attrs.SliceSizes
	hi := e.startBounds(idx, gd.StartIndexMap, gd.IndexVectorDim, x.Shape.Dims, sizes)
	clamped := e.b.Clamp(e.like(idx, 0), idx, hi)
	sd := hlo.ScatterDims{
		UpdateWindowDims:           gd.OffsetDims,
		InsertedWindowDims:         gd.CollapsedSliceDims,
		ScatterDimsToOperandDims:   gd.StartIndexMap,
		IndexVectorDim:             gd.IndexVectorDim,
		InputBatchingDims:          gd.OperandBatchingDims,
		ScatterIndicesBatchingDims: gd.StartIndicesBatchingDims,
	}
	dt := ct.Shape.DType
	g := e.b.Scatter([]*hlo.Instruction{e.zeros(x.Shape.WithDType(dt))}, clamped,
		[]*hlo.Instruction{ct}, e.b.Reducer(hlo.OpAdd, dt), sd)
	return []*hlo.Instruction{g, nil}, nil
}

// startBounds returns an array shaped like idx holding, for each index component,
// the largest in-bounds start: dims[d] - sizes[d] for the operand dim d it maps to.
func (e *engine) startBounds(idx *hlo.Instruction, indexMap []int64, ivd int64, dims, sizes []int64) *hlo.Instruction {
	dt := idx.Shape.DType
	if ivd == int64(idx.Shape.Rank()) {
		return e.like(idx, float64(dims[indexMap[0]]-sizes[indexMap[0]]))
	}
	lit := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(indexMap))))
	for k, d := range indexMap {
		v := dims[d] - sizes[d]
		if dt.IsUnsigned() {
			lit.SetUint64(k, uint64(v))
		} else {
			lit.SetInt64(k, v)
		}
	}
	return e.b.Broadcast(e.b.Constant(lit), idx.Shape.Dims, []int64{ivd})
}

// vjpScatter supports the add combiner (scatter-add, the transpose of gather): the
// operand gets the cotangent, each update the cotangent at its window (zero for a
// window scatter dropped as out of bounds). Other combiners (replace, max, …) and
// variadic scatter are reported as not supported.
func vjpScatter(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	if len(n.args) != 3 {
		return nil, fmt.Errorf("variadic scatter (%d operands) has no VJP rule: %w", (len(n.args)-1)/2, ErrNotDifferentiable)
	}
	if op, ok := reducerOp(n.orig.Called[0]); !ok || op != hlo.OpAdd {
		return nil, fmt.Errorf("scatter with combiner %q has no VJP rule (only add): %w",
			n.orig.Called[0].Name, ErrNotDifferentiable)
	}
	x, idx, upd := n.args[0], n.args[1], n.args[2]
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 0) {
		grads[0] = ct
	}
	if e.needs(n, 2) {
		grads[2] = e.scatterUpdateGrad(n.orig.Attrs.Scatter, x, idx, upd, ct)
	}
	return grads, nil
}

func (e *engine) scatterUpdateGrad(sd *hlo.ScatterDims, x, idx, upd, ct *hlo.Instruction) *hlo.Instruction {
	rank := x.Shape.Rank()
	sizes := make([]int64, rank)
	windowDims := hlo.Complement(rank, sd.InsertedWindowDims, sd.InputBatchingDims)
	for i := range sizes {
		sizes[i] = 1
	}
	for j, d := range windowDims {
		sizes[d] = upd.Shape.Dims[sd.UpdateWindowDims[j]]
	}
	gd := hlo.GatherDims{
		OffsetDims:               sd.UpdateWindowDims,
		CollapsedSliceDims:       sd.InsertedWindowDims,
		StartIndexMap:            sd.ScatterDimsToOperandDims,
		IndexVectorDim:           sd.IndexVectorDim,
		OperandBatchingDims:      sd.InputBatchingDims,
		StartIndicesBatchingDims: sd.ScatterIndicesBatchingDims,
	}
	g := e.b.Gather(ct, idx, gd, sizes)
	// A window scatter skipped (some start out of bounds) gets no cotangent.
	hi := e.startBounds(idx, sd.ScatterDimsToOperandDims, sd.IndexVectorDim, x.Shape.Dims, sizes)
	in := e.b.And(e.b.Compare(idx, e.like(idx, 0), hlo.CmpGE), e.b.Compare(idx, hi, hlo.CmpLE))
	if sd.IndexVectorDim < int64(idx.Shape.Rank()) {
		in = e.b.Reduce([]*hlo.Instruction{in}, []*hlo.Instruction{e.b.ScalarConstant(hlo.Pred, 1)},
			e.b.Reducer(hlo.OpAnd, hlo.Pred), []int64{sd.IndexVectorDim})
	}
	scatterDims := hlo.Complement(upd.Shape.Rank(), sd.UpdateWindowDims)
	mask := e.b.Broadcast(in, upd.Shape.Dims, scatterDims)
	return e.b.Select(mask, g, e.like(g, 0))
}

// reducerOp recognises a computation (a, b) -> op(a, b) (either operand order) and
// returns op.
func reducerOp(c *hlo.Computation) (hlo.Opcode, bool) {
	if c == nil || len(c.Params) != 2 || c.Root == nil || len(c.Root.Operands) != 2 {
		return 0, false
	}
	r := c.Root
	a, b := r.Operands[0], r.Operands[1]
	if (a == c.Params[0] && b == c.Params[1]) || (a == c.Params[1] && b == c.Params[0]) {
		return r.Op, r.Op.Info().Kind == hlo.KindBinary
	}
	return 0, false
}
