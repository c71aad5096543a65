package autodiff

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// maxTrips bounds the trip count tripCount will run a counter to, and
// Options.MaxTripCount: the stacks hold one state per iteration.
const maxTrips = 1 << 16

// expandWhile handles a while loop on the differentiated path. It stays a loop:
// loopWhile stacks the states and differentiates with a backward loop. The trip
// count must be known at compile time (tripCount) or bounded by
// Options.MaxTripCount; otherwise the loop is an error, as in JAX's reverse mode.
func expandWhile(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	n, err := tripCount(in)
	if err == nil {
		if n == 0 {
			return ops[0], nil
		}
		if k := e.opts.segmentOf(in, n); k > 0 {
			return e.segmentedWhile(in, ops[0], n, k)
		}
		return e.loopWhile(in, ops[0], n, false)
	}
	limit := e.opts.maxTripCount()
	if limit <= 0 {
		return nil, fmt.Errorf("autodiff: while %s: %v; give Options.MaxTripCount to differentiate it: %w",
			in.Name, err, ErrUnknownTripCount)
	}
	if limit > maxTrips {
		return nil, fmt.Errorf("autodiff: while %s: MaxTripCount %d exceeds the limit %d: %w",
			in.Name, limit, maxTrips, ErrInvalidArgument)
	}
	return e.loopWhile(in, ops[0], limit, true)
}

// poison replaces the floating-point leaves of v by NaN where p (a pred scalar)
// holds.
func (e *engine) poison(p, v *hlo.Instruction) *hlo.Instruction {
	if v.Shape.IsTuple() {
		elems := make([]*hlo.Instruction, len(v.Shape.Elems))
		for i := range elems {
			g := e.b.GetTupleElement(v, int64(i))
			e.record(g, v)
			elems[i] = e.poison(p, g)
		}
		t := e.b.Tuple(elems...)
		e.record(t, elems...)
		return t
	}
	if !v.Shape.DType.IsFloat() {
		return v
	}
	nan := e.like(v, math.NaN())
	s := e.b.Select(p, nan, v)
	e.record(s, p, nan, v)
	return s
}

// tripCount recognises the counted loop XLA's and JAX's fori_loop produce: a tuple
// state whose element i starts at an integer constant, the body sets element i to
// itself plus (or minus) an integer constant, and the condition compares element i
// with an integer constant. It returns the number of iterations, found by running
// the counter; anything else is an error saying what was not recognised.
func tripCount(w *hlo.Instruction) (int64, error) {
	cond, body := w.Called[0], w.Called[1]
	init := w.Operands[0]
	if init.Op != hlo.OpTuple {
		return 0, fmt.Errorf("the loop state is not built by a tuple")
	}
	i, bound, dir, ok := counterCompare(cond)
	if !ok {
		return 0, fmt.Errorf("the condition is not a compare of a state element with a constant")
	}
	start, ok := intConstant(init.Operands[i])
	if !ok {
		return 0, fmt.Errorf("state element %d does not start at a constant", i)
	}
	step, ok := counterStep(body, i)
	if !ok {
		return 0, fmt.Errorf("the body does not add a constant to state element %d", i)
	}
	var n int64
	for v := start; compareInts(v, bound, dir); v += step {
		if n++; n > maxTrips {
			return 0, fmt.Errorf("the trip count exceeds the limit %d", maxTrips)
		}
	}
	return n, nil
}

// counterCompare matches cond's root compare(gte(param, i), constant), either
// operand order, and returns i, the constant and the direction with the element on
// the left.
func counterCompare(cond *hlo.Computation) (int64, int64, hlo.ComparisonDirection, bool) {
	r := cond.Root
	if r.Op != hlo.OpCompare || len(cond.Params) != 1 {
		return 0, 0, 0, false
	}
	dir := r.Attrs.Direction
	a, b := r.Operands[0], r.Operands[1]
	if _, ok := intConstant(a); ok {
		a, b = b, a
		dir = flip(dir)
	}
	bound, ok := intConstant(b)
	if !ok || a.Op != hlo.OpGetTupleElement || a.Operands[0] != cond.Params[0] {
		return 0, 0, 0, false
	}
	return a.Attrs.TupleIndex, bound, dir, true
}

// counterStep matches body's root tuple element i = gte(param, i) ± constant.
func counterStep(body *hlo.Computation, i int64) (int64, bool) {
	r := body.Root
	if r.Op != hlo.OpTuple || len(body.Params) != 1 || int(i) >= len(r.Operands) {
		return 0, false
	}
	u := r.Operands[i]
	if (u.Op != hlo.OpAdd && u.Op != hlo.OpSubtract) || len(u.Operands) != 2 {
		return 0, false
	}
	isCounter := func(x *hlo.Instruction) bool {
		return x.Op == hlo.OpGetTupleElement && x.Operands[0] == body.Params[0] && x.Attrs.TupleIndex == i
	}
	a, b := u.Operands[0], u.Operands[1]
	if u.Op == hlo.OpAdd && !isCounter(a) {
		a, b = b, a
	}
	step, ok := intConstant(b)
	if !ok || !isCounter(a) {
		return 0, false
	}
	if u.Op == hlo.OpSubtract {
		step = -step
	}
	return step, step != 0
}

func intConstant(x *hlo.Instruction) (int64, bool) {
	if x.Op != hlo.OpConstant || !x.Shape.IsScalar() || !x.Shape.DType.IsInteger() || x.Attrs.Literal == nil {
		return 0, false
	}
	if x.Shape.DType.IsUnsigned() {
		return int64(x.Attrs.Literal.Uint64(0)), true
	}
	return x.Attrs.Literal.Int64(0), true
}

func flip(d hlo.ComparisonDirection) hlo.ComparisonDirection {
	switch d {
	case hlo.CmpLT:
		return hlo.CmpGT
	case hlo.CmpLE:
		return hlo.CmpGE
	case hlo.CmpGT:
		return hlo.CmpLT
	case hlo.CmpGE:
		return hlo.CmpLE
	}
	return d
}

func compareInts(a, b int64, d hlo.ComparisonDirection) bool {
	switch d {
	case hlo.CmpEQ:
		return a == b
	case hlo.CmpNE:
		return a != b
	case hlo.CmpLT:
		return a < b
	case hlo.CmpLE:
		return a <= b
	case hlo.CmpGT:
		return a > b
	}
	return a >= b
}
