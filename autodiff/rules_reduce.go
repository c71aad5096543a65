package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

func reductionRows() map[hlo.Opcode]row {
	return map[hlo.Opcode]row{
		hlo.OpReduce:           {vjp: vjpReduce},
		hlo.OpReduceWindow:     {vjp: vjpReduceWindow},
		hlo.OpSelectAndScatter: arrayVJP(vjpSelectAndScatter),
		hlo.OpDot:              arrayVJP(vjpDot),
		hlo.OpConvolution:      arrayVJP(vjpConvolution),
		hlo.OpSort:             {vjp: vjpSort},
	}
}

// vjpReduce handles a one-operand reduce by its reducer: add, multiply, maximum or
// minimum. A variadic reduce (argmax and friends) has no rule: its index results are
// integers and carry nothing, and a cotangent on a float result is an error.
func vjpReduce(e *engine, n *node, ct *cot) ([]*cot, error) {
	if len(n.args) != 2 {
		return nil, fmt.Errorf("variadic reduce (%d operands, as argmax's) is not differentiable; its integer results carry no gradient: %w",
			len(n.args)/2, ErrNotDifferentiable)
	}
	if ct.arr == nil {
		return nil, nil
	}
	op, ok := reducerOp(n.orig.Called[0])
	if !ok {
		return nil, fmt.Errorf("reducer %q is not a single binary op: %w", n.orig.Called[0].Name, ErrNotDifferentiable)
	}
	x, init, out, g := n.args[0], n.args[1], n.out, ct.arr
	dims := n.orig.Attrs.Dimensions
	kept := hlo.Complement(x.Shape.Rank(), dims)
	spread := func(v *hlo.Instruction) *hlo.Instruction { return e.b.Broadcast(v, x.Shape.Dims, kept) }
	var gx, ginit *hlo.Instruction
	switch op {
	case hlo.OpAdd:
		gx, ginit = spread(g), e.sumAll(g)
	case hlo.OpMultiply:
		gx, ginit = e.reduceProductGrad(x, init, g, dims, kept)
	case hlo.OpMaximum, hlo.OpMinimum:
		if e.needs(n, 1) {
			return nil, fmt.Errorf("the gradient with respect to a %v reduce's init value is not supported: %w", op, ErrNotDifferentiable)
		}
		// Ties split the cotangent equally among the elements equal to the result.
		hit := e.b.Compare(x, spread(out), hlo.CmpEQ)
		count := e.sum(e.b.Select(hit, e.like(x, 1), e.like(x, 0)), dims)
		gx = e.b.Select(hit, spread(e.b.Div(g, count)), e.like(x, 0))
	default:
		return nil, fmt.Errorf("reduce with reducer %v has no VJP rule (add, multiply, maximum, minimum): %w", op, ErrNotDifferentiable)
	}
	return []*cot{{arr: gx}, {arr: ginit}}, nil
}

// reduceProductGrad: ∂/∂x_j of init·Π x = init·Π_{k≠j} x_k, computed as a product
// over the other elements (never a division by the product, so zeros are safe).
// The reduced dims are moved last and flattened to one of size r; an r×r mask
// replaces x_j by 1 in row j, and a product over the last dim gives the exclusive
// products: O(r²) work per kept element.
func (e *engine) reduceProductGrad(x, init, g *hlo.Instruction, dims, kept []int64) (*hlo.Instruction, *hlo.Instruction) {
	perm := append(append([]int64{}, kept...), dims...)
	xt := e.b.Transpose(x, perm...)
	keptDims := make([]int64, len(kept))
	r := int64(1)
	for i, d := range kept {
		keptDims[i] = x.Shape.Dims[d]
	}
	for _, d := range dims {
		r *= x.Shape.Dims[d]
	}
	k := len(keptDims)
	flat := e.b.Reshape(xt, append(append([]int64{}, keptDims...), r)...)
	sq := append(append([]int64{}, keptDims...), r, r)
	rows := e.b.Broadcast(flat, sq, append(seq(k), int64(k+1)))
	eye := e.b.Compare(e.b.Iota(hlo.MakeShape(hlo.S32, sq...), int64(k)),
		e.b.Iota(hlo.MakeShape(hlo.S32, sq...), int64(k+1)), hlo.CmpEQ)
	dt := x.Shape.DType
	masked := e.b.Select(eye, e.like(rows, 1), rows)
	excl := e.b.Reduce([]*hlo.Instruction{masked}, []*hlo.Instruction{e.b.ScalarConstant(dt, 1)},
		e.b.Reducer(hlo.OpMultiply, dt), []int64{int64(k + 1)})
	tDims := make([]int64, len(perm))
	for i, p := range perm {
		tDims[i] = x.Shape.Dims[p]
	}
	back := e.b.Transpose(e.b.Reshape(excl, tDims...), inversePerm(perm)...)
	gk := e.b.Mul(g, e.broadcastTo(init, g.Shape))
	gx := e.b.Mul(e.b.Broadcast(gk, x.Shape.Dims, kept), back)
	prod := e.b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{e.b.ScalarConstant(dt, 1)},
		e.b.Reducer(hlo.OpMultiply, dt), dims)
	return gx, e.sumAll(e.b.Mul(g, prod))
}

// seq returns 0, 1, …, n-1.
func seq(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i)
	}
	return s
}
