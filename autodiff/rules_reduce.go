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
		hlo.OpDot:              arrayVJP(widened(vjpDot)),
		hlo.OpConvolution:      arrayVJP(widened(vjpConvolution)),
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
		// Ties split the cotangent equally among the elements equal to the result,
		// the init value counting as one more element.
		hit := e.b.Compare(x, spread(out), hlo.CmpEQ)
		initHit := e.b.Compare(e.broadcastTo(init, out.Shape), out, hlo.CmpEQ)
		count := e.b.Add(e.sum(e.b.Select(hit, e.like(x, 1), e.like(x, 0)), dims),
			e.b.Select(initHit, e.like(out, 1), e.like(out, 0)))
		share := e.b.Div(g, count)
		gx = e.b.Select(hit, spread(share), e.like(x, 0))
		if e.needs(n, 1) {
			ginit = e.sumAll(e.b.Select(initHit, share, e.like(share, 0)))
		}
	default:
		return nil, fmt.Errorf("reduce with reducer %v has no VJP rule (add, multiply, maximum, minimum): %w", op, ErrNotDifferentiable)
	}
	return []*cot{{arr: gx}, {arr: ginit}}, nil
}

// reduceProductGrad: ∂/∂x_j of init·Π x = init·Π_{k≠j} x_k, the product of the
// exclusive prefix and suffix products, never a division by the product (so zeros
// are safe). The reduced dims are moved last and flattened to one of size r; the
// scans take log2(r) shifted multiplies each (O(r log r) work, O(r) memory), with
// ops whose own rules make grad of grad work.
func (e *engine) reduceProductGrad(x, init, g *hlo.Instruction, dims, kept []int64) (*hlo.Instruction, *hlo.Instruction) {
	perm := append(append([]int64{}, kept...), dims...)
	r := int64(1)
	for _, d := range dims {
		r *= x.Shape.Dims[d]
	}
	tDims := make([]int64, len(perm))
	for i, p := range perm {
		tDims[i] = x.Shape.Dims[p]
	}
	flatDims := append(append([]int64{}, tDims[:len(kept)]...), r)
	flat := e.b.Reshape(e.b.Transpose(x, perm...), flatDims...)
	last := int64(len(kept))
	before := e.exclusivePrefixProduct(flat, last)
	after := e.b.Reverse(e.exclusivePrefixProduct(e.b.Reverse(flat, last), last), last)
	others := e.b.Transpose(e.b.Reshape(e.b.Mul(before, after), tDims...), inversePerm(perm)...)
	gk := e.b.Mul(g, e.broadcastTo(init, g.Shape))
	gx := e.b.Mul(e.b.Broadcast(gk, x.Shape.Dims, kept), others)
	dt := x.Shape.DType
	prod := e.b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{e.b.ScalarConstant(dt, 1)},
		e.b.Reducer(hlo.OpMultiply, dt), dims)
	return gx, e.sumAll(e.b.Mul(g, prod))
}

// exclusivePrefixProduct returns y with y_j = Π_{k<j} x_k along dim (the last):
// x shifted by one (1 first), then a Hillis–Steele scan: y ← y · (y shifted by d)
// for d = 1, 2, 4, … < r.
func (e *engine) exclusivePrefixProduct(x *hlo.Instruction, dim int64) *hlo.Instruction {
	one := e.b.ScalarConstant(x.Shape.DType, 1)
	shift := func(v *hlo.Instruction, d int64) *hlo.Instruction {
		pads := make([]hlo.PadDim, v.Shape.Rank())
		pads[dim] = hlo.PadDim{Low: d, High: -d}
		return e.b.Pad(v, one, pads)
	}
	r := x.Shape.Dims[dim]
	y := shift(x, 1)
	for d := int64(1); d < r; d *= 2 {
		y = e.b.Mul(y, shift(y, d))
	}
	return y
}
