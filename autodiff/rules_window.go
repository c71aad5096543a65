package autodiff

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// vjpReduceWindow: a windowed sum's transpose spreads each output's cotangent over
// its window (a windowed sum of the stride-dilated cotangent); a windowed max or min
// sends it to the window's selected element with select-and-scatter, XLA's pooling
// gradient: the first maximal (minimal) element of a window in window order gets
// all of it, unlike reduce's equal split of ties (vjpPool).
func vjpReduceWindow(e *engine, n *node, ct *cot) ([]*cot, error) {
	if len(n.args) != 2 {
		return nil, fmt.Errorf("variadic reduce-window has no VJP rule: %w", ErrNotDifferentiable)
	}
	if ct.arr == nil {
		return nil, nil
	}
	op, ok := reducerOp(n.orig.Called[0])
	if !ok {
		return nil, fmt.Errorf("reducer %q is not a single binary op: %w", n.orig.Called[0].Name, ErrNotDifferentiable)
	}
	x, g := n.args[0], ct.arr
	win := n.orig.Attrs.Window
	switch op {
	case hlo.OpAdd:
		return []*cot{{arr: e.windowSumTranspose(x, g, win)}, {arr: e.sumAll(g)}}, nil
	case hlo.OpMaximum, hlo.OpMinimum:
		return e.vjpPool(n, op, g)
	}
	return nil, fmt.Errorf("reduce-window with reducer %v has no VJP rule (add, maximum, minimum): %w", op, ErrNotDifferentiable)
}

// vjpPool differentiates a max or min reduce-window. The init value takes part in
// every window (out = max(init, window)), so first the outputs some element
// reaches are found, from the windows' max over elements only (padding counts as
// the identity, -Inf for max): there the cotangent goes to an element (poolGrad);
// where the init value alone wins, it goes to the init value.
func (e *engine) vjpPool(n *node, op hlo.Opcode, g *hlo.Instruction) ([]*cot, error) {
	x, out := n.args[0], n.out
	win := n.orig.Attrs.Window
	dt := x.Shape.DType
	dir, identity := hlo.CmpGE, math.Inf(-1)
	if op == hlo.OpMinimum {
		dir, identity = hlo.CmpLE, math.Inf(1)
	}
	id := e.b.ScalarConstant(dt, identity)
	best := e.b.ReduceWindow([]*hlo.Instruction{x}, []*hlo.Instruction{id}, e.b.Reducer(op, dt), win)
	reached := e.b.Compare(best, out, hlo.CmpEQ)
	zero := e.like(g, 0)
	ge := e.b.Select(reached, g, zero)
	gx, err := e.poolGrad(x, ge, win, dir)
	if err != nil {
		return nil, err
	}
	grads := []*cot{{arr: gx}, nil}
	if e.needs(n, 1) {
		grads[1] = &cot{arr: e.sumAll(e.b.Select(reached, zero, g))}
	}
	return grads, nil
}

// poolGrad is select-and-scatter of the cotangent onto the window elements that
// select (compare dir) picks, over the forward window itself: select-and-scatter
// skips padding and base-dilation holes and places window-dilated elements as
// reduce-window does.
func (e *engine) poolGrad(x, g *hlo.Instruction, win []hlo.WindowDim, dir hlo.ComparisonDirection) (*hlo.Instruction, error) {
	dt := x.Shape.DType
	sel, err := selector(dir, dt)
	if err != nil {
		return nil, err
	}
	return e.b.SelectAndScatter(x, g, e.b.ScalarConstant(dt, 0), sel, e.b.Reducer(hlo.OpAdd, dt), win), nil
}

// selector builds select-and-scatter's (a, b) -> compare(a, b, dir).
func selector(dir hlo.ComparisonDirection, dt hlo.DType) (*hlo.Computation, error) {
	sb := hlo.NewBuilder(fmt.Sprintf("select_%v_%v", dir, dt))
	a := sb.Parameter(hlo.Scalar(dt), "a")
	b := sb.Parameter(hlo.Scalar(dt), "b")
	return sb.BuildComputation(sb.Compare(a, b, dir))
}

// windowSumTranspose is the transpose of a windowed sum of x: the cotangent, dilated
// by the stride and padded by the window's extent, summed over windows (dilated like
// the forward window) gives the cotangent of the padded, base-dilated operand; the
// padding is then removed and the base dilation skipped by a strided slice.
func (e *engine) windowSumTranspose(x, g *hlo.Instruction, win []hlo.WindowDim) *hlo.Instruction {
	rank := x.Shape.Rank()
	pads := make([]hlo.PadDim, rank)
	tw := make([]hlo.WindowDim, rank)
	for i, w := range win {
		padded := dilated(x.Shape.Dims[i], w.BaseDilation) + w.PadLow + w.PadHigh
		reach := (w.Size - 1) * w.WindowDilation
		pads[i] = hlo.PadDim{Low: reach, High: padded - dilated(g.Shape.Dims[i], w.Stride), Interior: w.Stride - 1}
		tw[i] = hlo.WindowDim{Size: w.Size, Stride: 1, WindowDilation: w.WindowDilation, BaseDilation: 1}
	}
	dt := g.Shape.DType
	zero := e.b.ScalarConstant(dt, 0)
	spread := e.b.ReduceWindow([]*hlo.Instruction{e.b.Pad(g, zero, pads)}, []*hlo.Instruction{zero},
		e.b.Reducer(hlo.OpAdd, dt), tw)
	return e.unpadWindow(spread, x, win)
}

// unpadWindow takes the elements of g (shaped like x padded and base-dilated as
// the window says) that are x's own.
func (e *engine) unpadWindow(g, x *hlo.Instruction, win []hlo.WindowDim) *hlo.Instruction {
	rank := x.Shape.Rank()
	unpad := make([]hlo.PadDim, rank)
	starts, limits, strides := make([]int64, rank), make([]int64, rank), make([]int64, rank)
	for i, w := range win {
		unpad[i] = hlo.PadDim{Low: -w.PadLow, High: -w.PadHigh}
		limits[i], strides[i] = dilated(x.Shape.Dims[i], w.BaseDilation), w.BaseDilation
	}
	zero := e.b.ScalarConstant(g.Shape.DType, 0)
	return e.b.Slice(e.b.Pad(g, zero, unpad), starts, limits, strides)
}

// vjpSelectAndScatter: the result is linear in the source (and the init value,
// added once per element); the operand only chooses positions, so it gets zero.
// Each source element's cotangent is the result's cotangent at the position its
// window selected, found by a reduce-window over (operand, cotangent) pairs that
// keeps the pair the select computation keeps. The select computation must be a
// compare of its two parameters (GE/GT for max pooling, LE/LT for min).
func vjpSelectAndScatter(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	if op, ok := reducerOp(n.orig.Called[1]); !ok || op != hlo.OpAdd {
		return nil, fmt.Errorf("select-and-scatter with scatter %q has no VJP rule (only add): %w",
			n.orig.Called[1].Name, ErrNotDifferentiable)
	}
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 1) {
		g, err := e.selectedCotangent(n, ct)
		if err != nil {
			return nil, err
		}
		grads[1] = g
	}
	if e.needs(n, 2) {
		grads[2] = e.sumAll(ct)
	}
	return grads, nil
}

func (e *engine) selectedCotangent(n *node, ct *hlo.Instruction) (*hlo.Instruction, error) {
	sel := n.orig.Called[0]
	dir, ok := selectDirection(sel)
	if !ok {
		return nil, fmt.Errorf("select computation %q is not a compare of its parameters: %w", sel.Name, ErrNotDifferentiable)
	}
	x := n.args[0]
	dt := x.Shape.DType
	worst := math.Inf(-1)
	if dir == hlo.CmpLE || dir == hlo.CmpLT {
		worst = math.Inf(1)
	}
	rb := hlo.NewBuilder("select_pair")
	ax := rb.Parameter(hlo.Scalar(dt), "ax")
	ac := rb.Parameter(hlo.Scalar(ct.Shape.DType), "ac")
	bx := rb.Parameter(hlo.Scalar(dt), "bx")
	bc := rb.Parameter(hlo.Scalar(ct.Shape.DType), "bc")
	keep := rb.Compare(ax, bx, dir)
	pair, err := rb.BuildComputation(rb.Tuple(rb.Select(keep, ax, bx), rb.Select(keep, ac, bc)))
	if err != nil {
		return nil, err
	}
	rw := e.b.ReduceWindow([]*hlo.Instruction{x, ct},
		[]*hlo.Instruction{e.b.ScalarConstant(dt, worst), e.b.ScalarConstant(ct.Shape.DType, 0)},
		pair, n.orig.Attrs.Window)
	return e.b.GetTupleElement(rw, 1), nil
}

// selectDirection recognises (a, b) -> compare(a, b, dir) with dir one of GE, GT,
// LE, LT.
func selectDirection(c *hlo.Computation) (hlo.ComparisonDirection, bool) {
	if len(c.Params) != 2 || c.Root.Op != hlo.OpCompare {
		return 0, false
	}
	r := c.Root
	if r.Operands[0] != c.Params[0] || r.Operands[1] != c.Params[1] {
		return 0, false
	}
	switch d := r.Attrs.Direction; d {
	case hlo.CmpGE, hlo.CmpGT, hlo.CmpLE, hlo.CmpLT:
		return d, true
	}
	return 0, false
}
