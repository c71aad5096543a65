package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// cot is the cotangent of one value: an array for an array value, one cot per
// element for a tuple. A nil *cot (or nil element) is zero: zeros are never built
// until a consumer needs a materialised value.
type cot struct {
	arr   *hlo.Instruction
	elems []*cot
}

// node is one tape entry: an instruction of the forward pass that depends on a
// differentiated parameter. orig carries the opcode, attributes, called computations
// and original shapes the rule reads; out and args are the replayed values.
type node struct {
	orig *hlo.Instruction
	out  *hlo.Instruction
	args []*hlo.Instruction
	// vjp, when set, is the node's own rule in place of its opcode's: a while loop's
	// backward loop, which needs what its forward loop stacked.
	vjp func(e *engine, n *node, ct *cot) ([]*cot, error)
}

// engine holds one transformation: the builder of the new computation, the tape and
// the cotangents accumulated so far (keyed by replayed value).
type engine struct {
	b      *hlo.Builder
	opts   *Options
	tape   []*node
	active map[*hlo.Instruction]bool
	cts    map[*hlo.Instruction]*cot
	// saving, inside a checkpointed region, records or hands back the values its
	// policy keeps (checkpoint.go); nil elsewhere.
	saving *saving
	// loop, in a loop body's replay, holds the values the loop stacks per
	// iteration (loop_saving.go); nil elsewhere.
	loop *loopKeeps
	// residuals, in the top-level engine of SavedResiduals only, records what the
	// forward pass keeps for the backward one (residuals.go).
	residuals *residualLog
}

func newEngine(b *hlo.Builder, opts *Options) *engine {
	return &engine{b: b, opts: opts, active: map[*hlo.Instruction]bool{}, cts: map[*hlo.Instruction]*cot{}}
}

// markActive marks a value as depending on a differentiated parameter, if it has a
// floating-point leaf (integer and pred values carry no gradient).
func (e *engine) markActive(x *hlo.Instruction) {
	if x != nil && hasFloatLeaf(x.Shape) {
		e.active[x] = true
	}
}

func hasFloatLeaf(s hlo.Shape) bool {
	if s.IsTuple() {
		for _, el := range s.Elems {
			if hasFloatLeaf(el) {
				return true
			}
		}
		return false
	}
	return differentiable(s.DType)
}

// needs reports whether operand i of n wants a cotangent.
func (e *engine) needs(n *node, i int) bool { return e.active[n.args[i]] }

// replay adds c's instructions to the builder with c's parameters bound to args and
// returns the value of c's root. Calls and fusions on the differentiated path are
// inlined (the tape sees their ops) and while loops become stacking loops whose
// tape node runs a backward loop.
func (e *engine) replay(c *hlo.Computation, args []*hlo.Instruction) (*hlo.Instruction, error) {
	if len(args) != len(c.Params) {
		return nil, fmt.Errorf("autodiff: computation %q takes %d arguments, got %d", c.Name, len(c.Params), len(args))
	}
	vals := make(map[*hlo.Instruction]*hlo.Instruction, len(c.Instructions))
	for i, p := range c.Params {
		vals[p] = args[i]
	}
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		ops := make([]*hlo.Instruction, len(in.Operands))
		anyActive := false
		for i, o := range in.Operands {
			ops[i] = vals[o]
			anyActive = anyActive || e.active[ops[i]]
		}
		out, err := e.replayOne(in, ops, anyActive)
		if err != nil {
			return nil, err
		}
		vals[in] = out
	}
	return vals[c.Root], nil
}

// replayOne adds one instruction; an active one goes on the tape (or is expanded).
func (e *engine) replayOne(in *hlo.Instruction, ops []*hlo.Instruction, anyActive bool) (*hlo.Instruction, error) {
	switch {
	case e.loop != nil && e.loop.saves[in]:
		return e.replayKept(in, ops, anyActive)
	case e.loop != nil && e.loop.reach[in] && !anyActive:
		return e.replay(in.Called[0], ops) // inlined, so that the kept values inside are reached
	}
	if e.saving != nil && e.saving.saves[in] {
		return e.replaySaveable(in, ops, anyActive)
	}
	return e.replayInstruction(in, ops, anyActive)
}

// replayInstruction adds one instruction, expanded or taped where it is active.
func (e *engine) replayInstruction(in *hlo.Instruction, ops []*hlo.Instruction, anyActive bool) (*hlo.Instruction, error) {
	if anyActive {
		if expand := table[in.Op].expand; expand != nil {
			return expand(e, in, ops)
		}
	}
	out := e.b.SetName(e.b.Reemit(in, ops), in.Name) // forward values keep their names
	if err := e.b.Err(); err != nil {
		return nil, fmt.Errorf("autodiff: replaying %s: %w", in.Name, err)
	}
	if anyActive && hasFloatLeaf(out.Shape) {
		e.active[out] = true
		e.tape = append(e.tape, &node{orig: in, out: out, args: ops})
	}
	return out, nil
}

// record puts an instruction the engine built itself on the tape (its own template).
func (e *engine) record(out *hlo.Instruction, args ...*hlo.Instruction) {
	for _, a := range args {
		if e.active[a] && hasFloatLeaf(out.Shape) {
			e.active[out] = true
			e.tape = append(e.tape, &node{orig: out, out: out, args: args})
			return
		}
	}
}

// backprop seeds out's cotangent and walks the tape backwards, applying each
// node's rule and accumulating the operands' cotangents.
func (e *engine) backprop(out *hlo.Instruction, seed *cot) error {
	if !e.active[out] {
		return nil // the result does not depend on any differentiated parameter
	}
	e.accumulate(out, seed)
	for i := len(e.tape) - 1; i >= 0; i-- {
		n := e.tape[i]
		ct := e.cts[n.out]
		if ct == nil {
			continue
		}
		delete(e.cts, n.out) // no longer needed; keeps the map small
		grads, err := e.apply(n, ct)
		if err != nil {
			return err
		}
		for j, g := range grads {
			if g != nil && e.needs(n, j) {
				e.accumulate(n.args[j], g)
			}
		}
		if err := e.b.Err(); err != nil {
			return fmt.Errorf("autodiff: the VJP of %s (%v): %w", n.orig.Name, n.orig.Op, err)
		}
	}
	return nil
}

// apply runs n's rule (its own, or its opcode's), or reports its op as not
// differentiable.
func (e *engine) apply(n *node, ct *cot) ([]*cot, error) {
	row, err := rowFor(n)
	if err != nil {
		return nil, err
	}
	vjp := row.vjp
	if n.vjp != nil {
		vjp = n.vjp
	}
	switch {
	case vjp != nil:
		grads, err := vjp(e, n, ct)
		if err != nil {
			return nil, fmt.Errorf("autodiff: %s (%v): %w", n.orig.Name, n.orig.Op, err)
		}
		return grads, nil
	case row.zero != "":
		return nil, nil
	}
	reason := row.notDifferentiable
	if reason == "" {
		reason = "no VJP rule"
	}
	return nil, fmt.Errorf("autodiff: %s (%v) is on the path from a differentiated parameter to the result: %s: %w",
		n.orig.Name, n.orig.Op, reason, ErrNotDifferentiable)
}

// accumulate adds c to x's cotangent, dropping integer and pred leaves.
func (e *engine) accumulate(x *hlo.Instruction, c *cot) {
	e.cts[x] = e.add(e.cts[x], e.floatOnly(c, x.Shape))
}

func (e *engine) floatOnly(c *cot, s hlo.Shape) *cot {
	if c == nil {
		return nil
	}
	if !s.IsTuple() {
		if !differentiable(s.DType) || c.arr == nil {
			return nil
		}
		return c
	}
	out := &cot{elems: make([]*cot, len(s.Elems))}
	zero := true
	for i, es := range s.Elems {
		if i < len(c.elems) {
			out.elems[i] = e.floatOnly(c.elems[i], es)
			zero = zero && out.elems[i] == nil
		}
	}
	if zero {
		return nil // a tuple cotangent with no float part is zero
	}
	return out
}

// add sums two cotangents of one value.
func (e *engine) add(a, b *cot) *cot {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.arr != nil && b.arr != nil:
		return &cot{arr: e.b.Add(a.arr, b.arr)}
	}
	n := max(len(a.elems), len(b.elems))
	out := &cot{elems: make([]*cot, n)}
	for i := range n {
		var x, y *cot
		if i < len(a.elems) {
			x = a.elems[i]
		}
		if i < len(b.elems) {
			y = b.elems[i]
		}
		out.elems[i] = e.add(x, y)
	}
	return out
}

// materialize returns c as a value of shape s, building zeros where it is zero.
func (e *engine) materialize(c *cot, s hlo.Shape) *hlo.Instruction {
	if !s.IsTuple() {
		if c == nil || c.arr == nil {
			return e.zeros(s)
		}
		return c.arr
	}
	elems := make([]*hlo.Instruction, len(s.Elems))
	for i, es := range s.Elems {
		var ci *cot
		if c != nil && i < len(c.elems) {
			ci = c.elems[i]
		}
		elems[i] = e.materialize(ci, es)
	}
	return e.b.Tuple(elems...)
}

// split returns a tuple value's cotangent as one cot per element of an
// instruction's value: GTEs of a tuple-shaped cotangent value.
func (e *engine) split(v *hlo.Instruction) *cot {
	if !v.Shape.IsTuple() {
		return &cot{arr: v}
	}
	c := &cot{elems: make([]*cot, len(v.Shape.Elems))}
	for i := range v.Shape.Elems {
		c.elems[i] = e.split(e.b.GetTupleElement(v, int64(i)))
	}
	return c
}

// zeros builds an array (or tuple) of zeros of shape s.
func (e *engine) zeros(s hlo.Shape) *hlo.Instruction { return e.full(s, 0) }

// full builds an array of shape s filled with v.
func (e *engine) full(s hlo.Shape, v float64) *hlo.Instruction {
	if s.IsTuple() {
		elems := make([]*hlo.Instruction, len(s.Elems))
		for i, es := range s.Elems {
			elems[i] = e.full(es, v)
		}
		return e.b.Tuple(elems...)
	}
	c := e.b.ScalarConstant(s.DType, v)
	if s.Rank() == 0 {
		return c
	}
	return e.b.BroadcastScalar(c, s.Dims...)
}

// like builds an array filled with v of x's shape.
func (e *engine) like(x *hlo.Instruction, v float64) *hlo.Instruction { return e.full(x.Shape, v) }
