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

// vjpScatter supports two combiners. add (scatter-add, the transpose of gather):
// the operand gets the cotangent, each update the cotangent at its window. replace
// (x.at[i].set(v)): which update wrote each element is found by scattering update
// ids the same way; the operand gets the cotangent where no update wrote, each
// update the cotangent where it was the one that wrote (with repeated indices XLA
// leaves the winner to the implementation; the ids follow the same scatter). An
// update whose window scatter dropped as out of bounds gets zero. Other combiners
// (max, multiply, …) and variadic scatter are errors.
func vjpScatter(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	if len(n.args) != 3 {
		return nil, fmt.Errorf("variadic scatter (%d operands) has no VJP rule: %w", (len(n.args)-1)/2, ErrNotDifferentiable)
	}
	comb := n.orig.Called[0]
	if isReplace(comb) {
		return e.vjpScatterReplace(n, ct)
	}
	if op, ok := reducerOp(comb); !ok || op != hlo.OpAdd {
		return nil, fmt.Errorf("scatter with combiner %q has no VJP rule (add and replace have): %w",
			comb.Name, ErrNotDifferentiable)
	}
	x, idx, upd := n.args[0], n.args[1], n.args[2]
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 0) {
		grads[0] = ct
	}
	if e.needs(n, 2) {
		sg := e.newScatterGather(n.orig.Attrs.Scatter, x, idx, upd)
		g := sg.gather(ct)
		grads[2] = e.b.Select(sg.inBounds(), g, e.like(g, 0))
	}
	return grads, nil
}

// isReplace recognises the combiner (old, new) -> new.
func isReplace(c *hlo.Computation) bool {
	return c != nil && len(c.Params) == 2 && c.Root == c.Params[1]
}

func (e *engine) vjpScatterReplace(n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x, idx, upd := n.args[0], n.args[1], n.args[2]
	sd := n.orig.Attrs.Scatter
	rb := hlo.NewBuilder("replace_s32")
	rb.Parameter(hlo.Scalar(hlo.S32), "old")
	replace, err := rb.BuildComputation(rb.Parameter(hlo.Scalar(hlo.S32), "new"))
	if err != nil {
		return nil, err
	}
	ids := e.b.Reshape(e.b.Iota(hlo.MakeShape(hlo.S32, upd.Shape.NumElements()), 0), upd.Shape.Dims...)
	none := e.full(x.Shape.WithDType(hlo.S32), -1)
	winners := e.b.Scatter([]*hlo.Instruction{none}, idx, []*hlo.Instruction{ids}, replace, *sd)
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 0) {
		grads[0] = e.b.Select(e.b.Compare(winners, none, hlo.CmpEQ), ct, e.like(ct, 0))
	}
	if e.needs(n, 2) {
		sg := e.newScatterGather(sd, x, idx, upd)
		g := sg.gather(ct)
		won := e.b.And(sg.inBounds(), e.b.Compare(sg.gather(winners), ids, hlo.CmpEQ))
		grads[2] = e.b.Select(won, g, e.like(g, 0))
	}
	return grads, nil
}

// scatterGather reads, for each update element of a scatter, the operand-shaped
// array's element it was scattered to: a gather with the scatter's dimension
// numbers transposed.
type scatterGather struct {
	e      *engine
	sd     *hlo.ScatterDims
	x, idx *hlo.Instruction
	upd    *hlo.Instruction
	dims   hlo.GatherDims
	sizes  []int64
}

func (e *engine) newScatterGather(sd *hlo.ScatterDims, x, idx, upd *hlo.Instruction) *scatterGather {
	rank := x.Shape.Rank()
	sizes := make([]int64, rank)
	for i := range sizes {
		sizes[i] = 1
	}
	for j, d := range hlo.Complement(rank, sd.InsertedWindowDims, sd.InputBatchingDims) {
		sizes[d] = upd.Shape.Dims[sd.UpdateWindowDims[j]]
	}
	return &scatterGather{e: e, sd: sd, x: x, idx: idx, upd: upd, sizes: sizes, dims: hlo.GatherDims{
		OffsetDims:               sd.UpdateWindowDims,
		CollapsedSliceDims:       sd.InsertedWindowDims,
		StartIndexMap:            sd.ScatterDimsToOperandDims,
		IndexVectorDim:           sd.IndexVectorDim,
		OperandBatchingDims:      sd.InputBatchingDims,
		StartIndicesBatchingDims: sd.ScatterIndicesBatchingDims,
	}}
}

func (s *scatterGather) gather(v *hlo.Instruction) *hlo.Instruction {
	return s.e.b.Gather(v, s.idx, s.dims, s.sizes)
}

// inBounds is a pred array shaped like the updates: whether the update's window
// was scattered (scatter drops a window with any start out of bounds).
func (s *scatterGather) inBounds() *hlo.Instruction {
	b, sd, idx := s.e.b, s.sd, s.idx
	hi := s.e.startBounds(idx, sd.ScatterDimsToOperandDims, sd.IndexVectorDim, s.x.Shape.Dims, s.sizes)
	in := b.And(b.Compare(idx, s.e.like(idx, 0), hlo.CmpGE), b.Compare(idx, hi, hlo.CmpLE))
	if sd.IndexVectorDim < int64(idx.Shape.Rank()) {
		in = b.Reduce([]*hlo.Instruction{in}, []*hlo.Instruction{b.ScalarConstant(hlo.Pred, 1)},
			b.Reducer(hlo.OpAnd, hlo.Pred), []int64{sd.IndexVectorDim})
	}
	return b.Broadcast(in, s.upd.Shape.Dims, hlo.Complement(s.upd.Shape.Rank(), sd.UpdateWindowDims))
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
