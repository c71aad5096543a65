package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Rules of tuples and control flow.

// vjpTuple hands each element's cotangent to the operand it came from.
func vjpTuple(e *engine, n *node, ct *cot) ([]*cot, error) {
	out := make([]*cot, len(n.args))
	for i := range out {
		if i < len(ct.elems) {
			out[i] = ct.elems[i]
		}
	}
	return out, nil
}

// vjpGetTupleElement makes a tuple cotangent that is zero except at the index.
func vjpGetTupleElement(e *engine, n *node, ct *cot) ([]*cot, error) {
	t := &cot{elems: make([]*cot, len(n.args[0].Shape.Elems))}
	t.elems[n.orig.Attrs.TupleIndex] = ct
	return []*cot{t}, nil
}

// expandCall inlines a call or fusion on the differentiated path: the tape then
// holds the called computation's ops, differentiated by their own rules.
func expandCall(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	return e.replay(in.Called[0], ops)
}

// vjpConditional runs, under the same selector, a backward conditional whose branch
// k is the VJP of forward branch k (recomputing that branch's forward pass). Each
// backward branch takes (its forward operand, the result's cotangent) and returns
// the cotangents of every branch operand, zero but its own.
func vjpConditional(e *engine, n *node, ct *cot) ([]*cot, error) {
	branches := n.orig.Called
	args := n.args[1:]
	ctv := e.materialize(ct, n.out.Shape)
	argShapes := make([]hlo.Shape, len(args))
	for i, a := range args {
		argShapes[i] = a.Shape
	}
	bwd := make([]*hlo.Computation, len(branches))
	operands := make([]*hlo.Instruction, len(branches))
	for k, br := range branches {
		c, err := branchVJP(br, k, argShapes, n.out.Shape, e.opts)
		if err != nil {
			return nil, err
		}
		bwd[k] = c
		operands[k] = e.b.Tuple(args[k], ctv)
	}
	res := e.b.Conditional(n.args[0], bwd, operands)
	out := make([]*cot, len(n.args))
	for i := range args {
		if e.needs(n, i+1) {
			out[i+1] = e.split(e.b.GetTupleElement(res, int64(i)))
		}
	}
	return out, nil
}

// branchVJP builds the backward computation of branch k: (arg_k, ct) -> tuple of
// cotangents for every branch's operand.
func branchVJP(br *hlo.Computation, k int, argShapes []hlo.Shape, outShape hlo.Shape, opts *Options) (*hlo.Computation, error) {
	if d := drawIn(br, map[*hlo.Computation]bool{}); d != nil {
		return nil, fmt.Errorf("autodiff: conditional branch %q draws random numbers (%s), which its VJP would draw again: "+
			"replaying them is not implemented: %w", br.Name, d.Name, hlo.ErrUnsupported)
	}
	sub := newEngine(hlo.NewBuilder(br.Name+".vjp"), opts)
	p := sub.b.Parameter(hlo.MakeTuple(argShapes[k], outShape), "arg_ct")
	arg, ctv := sub.b.GetTupleElement(p, 0), sub.b.GetTupleElement(p, 1)
	if err := sub.b.Err(); err != nil {
		return nil, fmt.Errorf("autodiff: conditional branch %q: %w", br.Name, err)
	}
	sub.markActive(arg)
	out, err := sub.replay(br, []*hlo.Instruction{arg})
	if err != nil {
		return nil, err
	}
	if err := sub.backprop(out, sub.split(ctv)); err != nil {
		return nil, err
	}
	results := make([]*hlo.Instruction, len(argShapes))
	for i, s := range argShapes {
		var c *cot
		if i == k {
			c = sub.cts[arg]
		}
		results[i] = sub.materialize(sub.floatOnly(c, s), s)
	}
	return sub.b.BuildComputation(sub.b.Tuple(results...))
}
