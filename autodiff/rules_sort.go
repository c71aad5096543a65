package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// vjpSort treats sort as a permutation: the sort is run again with an iota operand
// that the comparator ignores (same comparator, same stability), which yields each
// output element's source position; each operand's cotangent is its output's
// cotangent scattered back to those positions. With an unstable sort and equal keys
// the permutation is one of the valid ones.
func vjpSort(e *engine, n *node, ct *cot) ([]*cot, error) {
	dim := n.orig.Attrs.Dimensions[0]
	shape := n.args[0].Shape
	cmp, err := withIgnoredOperand(n.orig.Called[0], hlo.S32)
	if err != nil {
		return nil, fmt.Errorf("extending the comparator: %w", err)
	}
	iota := e.b.Iota(shape.WithDType(hlo.S32), dim)
	sorted := e.b.Sort(append(append([]*hlo.Instruction{}, n.args...), iota), cmp, dim, n.orig.Attrs.IsStable)
	perm := e.b.GetTupleElement(sorted, int64(len(n.args)))
	idx := e.sourceIndices(perm, dim)
	out := make([]*cot, len(n.args))
	for i := range n.args {
		c := ct
		if len(n.args) > 1 {
			c = nil
			if i < len(ct.elems) {
				c = ct.elems[i]
			}
		}
		if c == nil || c.arr == nil || !e.needs(n, i) {
			continue
		}
		out[i] = &cot{arr: e.permuteBack(c.arr, idx)}
	}
	return out, nil
}

// sourceIndices builds full index vectors (shape dims…, rank): the position an
// output element came from: perm along dim, its own index elsewhere.
func (e *engine) sourceIndices(perm *hlo.Instruction, dim int64) *hlo.Instruction {
	rank := perm.Shape.Rank()
	dims := append(append([]int64{}, perm.Shape.Dims...), 1)
	parts := make([]*hlo.Instruction, rank)
	for d := range rank {
		var v *hlo.Instruction
		if int64(d) == dim {
			v = perm
		} else {
			v = e.b.Iota(perm.Shape, int64(d))
		}
		parts[d] = e.b.Reshape(v, dims...)
	}
	return e.b.Concatenate(int64(rank), parts...)
}

// permuteBack scatters g's elements to the positions idx names (a permutation, so
// nothing collides).
func (e *engine) permuteBack(g, idx *hlo.Instruction) *hlo.Instruction {
	rank := g.Shape.Rank()
	dt := g.Shape.DType
	sd := hlo.ScatterDims{
		InsertedWindowDims:       hlo.Iota64(rank),
		ScatterDimsToOperandDims: hlo.Iota64(rank),
		IndexVectorDim:           int64(rank),
	}
	return e.b.Scatter([]*hlo.Instruction{e.zeros(g.Shape)}, idx, []*hlo.Instruction{g},
		e.b.Reducer(hlo.OpAdd, dt), sd)
}

// withIgnoredOperand copies a sort comparator with one more (lhs, rhs) parameter
// pair of type dt, which it does not read.
func withIgnoredOperand(c *hlo.Computation, dt hlo.DType) (*hlo.Computation, error) {
	b := hlo.NewBuilder(c.Name + ".perm")
	params := make([]*hlo.Instruction, len(c.Params))
	for i, p := range c.Params {
		params[i] = b.Parameter(p.Shape, p.Name)
	}
	b.Parameter(hlo.Scalar(dt), "perm.lhs")
	b.Parameter(hlo.Scalar(dt), "perm.rhs")
	return b.BuildComputation(b.Inline(c, params))
}
