package autodiff

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// Every-k checkpointing of scans (√n checkpointing; docs/autodiff.md "Every-k
// checkpointing"). A loop of n steps is differentiated as two nested loops: an
// outer loop over q = n/k segments whose body runs k steps of the original body
// in an inner loop, and, when k does not divide n, a trailing loop of the r = n −
// qk steps left. The outer loop is then differentiated as any counted loop: its
// forward pass stacks only each segment's input state (q rows instead of n), and
// its backward body replays one segment — the inner loop, now a stacking loop of
// k rows — and runs the k backward steps from that stack. Memory holds q + k
// states instead of n (about 2√n at k = √n); each forward step runs twice more.

// LoopCheckpoint asks for every-k checkpointing of differentiated loops.
type LoopCheckpoint struct {
	// Every is the segment length k: the forward loop keeps every k-th state. 0
	// takes k = ⌈√n⌉ per loop, the k that minimises q + k.
	Every int64
}

// every is the segment length for a loop of n steps, or 0 when the loop is
// differentiated whole (no checkpointing asked, or a segment would be the loop).
func (c *LoopCheckpoint) every(n int64) int64 {
	if c == nil {
		return 0
	}
	k := c.Every
	if k == 0 {
		k = int64(math.Ceil(math.Sqrt(float64(n))))
	}
	if k <= 1 || k >= n {
		return 0
	}
	return k
}

// withSegments is a copy of o that records the loops segmentedWhile builds, so
// that they are not segmented again (two levels, not a recursion to one step).
func (o *Options) withSegments() *Options {
	if o == nil || o.LoopCheckpoint == nil {
		return o
	}
	c := *o
	c.segments = map[*hlo.Computation]bool{}
	return &c
}

// segmentOf is the segment length for loop w of n steps: 0 for a loop that
// segmentedWhile built or where no checkpointing applies.
func (o *Options) segmentOf(w *hlo.Instruction, n int64) int64 {
	if o == nil || o.segments[w.Called[1]] {
		return 0
	}
	return o.LoopCheckpoint.every(n)
}

// segmentedWhile differentiates loop in (n steps) as q segments of k steps and a
// trailing loop of the rest, by replaying the nested form built for it.
func (e *engine) segmentedWhile(in, init *hlo.Instruction, n, k int64) (*hlo.Instruction, error) {
	if bad := impureIn(in.Called[1]); bad != nil {
		return nil, fmt.Errorf("autodiff: while %s: LoopCheckpoint: the body's %s draws random numbers or has side effects, so a recomputed segment would differ from the forward pass; differentiate this loop without LoopCheckpoint: %w",
			in.Name, bad.Name, hlo.ErrUnsupported)
	}
	nested, err := nestLoop(in, n, k, e.opts.segments)
	if err != nil {
		return nil, fmt.Errorf("autodiff: while %s: segments of %d steps: %w", in.Name, k, err)
	}
	return e.replay(nested, []*hlo.Instruction{init})
}

// nestLoop builds state ↦ the state after n steps of in's body, as an outer
// loop of n/k segments of an inner loop of k steps, then a loop of n mod k
// steps. The loops' states are the original state's elements followed by their
// own s32 counter; elements the body passes through stay passed through, so they
// are not stacked. The bodies it builds are recorded in built.
func nestLoop(in *hlo.Instruction, n, k int64, built map[*hlo.Computation]bool) (*hlo.Computation, error) {
	body := in.Called[1]
	state := in.Shape
	elems, variant := stateElems(body, state)
	loopShape := hlo.MakeTuple(append(elems, hlo.Scalar(hlo.S32))...)
	counter := int64(len(elems))
	steps, err := stepsBody(body, loopShape, variant)
	if err != nil {
		return nil, err
	}
	segment, err := segmentBody(body.Name, loopShape, variant, steps, k)
	if err != nil {
		return nil, err
	}
	built[steps], built[segment] = true, true
	b := hlo.NewBuilder(body.Name + ".segmented")
	x := b.Parameter(state, "x")
	v, err := emitCounted(b, body.Name+".segments", loopShape, segment, splitState(b, x), n/k)
	if err != nil {
		return nil, err
	}
	if r := n % k; r > 0 {
		tail, err := stepsBody(body, loopShape, variant)
		if err != nil {
			return nil, err
		}
		built[tail] = true
		if v, err = emitCounted(b, body.Name+".tail", loopShape, tail, elemsOf(b, v, counter), r); err != nil {
			return nil, err
		}
	}
	return b.BuildComputation(joinState(b, state, elemsOf(b, v, counter)))
}

// stateElems lists the loop state's elements (the state itself when it is not a
// tuple) and whether the body may change each (variantLeaves, per element).
func stateElems(body *hlo.Computation, state hlo.Shape) ([]hlo.Shape, []bool) {
	if !state.IsTuple() {
		return []hlo.Shape{state}, []bool{true}
	}
	leaves := variantLeaves(body, state)
	var variant []bool
	at := 0
	for _, el := range state.Elems {
		variant = append(variant, len(el.Leaves()) == 0 || leaves[at])
		at += len(el.Leaves())
	}
	return state.Elems, variant
}

// splitState is x's elements (x itself when it is not a tuple).
func splitState(b *hlo.Builder, x *hlo.Instruction) []*hlo.Instruction {
	if !x.Shape.IsTuple() {
		return []*hlo.Instruction{x}
	}
	return elemsOf(b, x, int64(len(x.Shape.Elems)))
}

// joinState is the original state from its elements.
func joinState(b *hlo.Builder, state hlo.Shape, elems []*hlo.Instruction) *hlo.Instruction {
	if !state.IsTuple() {
		return elems[0]
	}
	return b.Tuple(elems...)
}

func elemsOf(b *hlo.Builder, t *hlo.Instruction, count int64) []*hlo.Instruction {
	out := make([]*hlo.Instruction, count)
	for i := range out {
		out[i] = b.GetTupleElement(t, int64(i))
	}
	return out
}

// emitCounted emits while(counter < trips) over (elems…, counter from 0).
func emitCounted(b *hlo.Builder, name string, shape hlo.Shape, body *hlo.Computation, elems []*hlo.Instruction, trips int64) (*hlo.Instruction, error) {
	counter := int64(len(elems))
	cond, err := countingCond(name, shape, counter, trips, nil)
	if err != nil {
		return nil, err
	}
	return b.While(cond, body, b.Tuple(append(elems, b.ScalarConstant(hlo.S32, 0))...)), nil
}

// stepsBody is one step of the original body over (elems…, counter).
func stepsBody(body *hlo.Computation, shape hlo.Shape, variant []bool) (*hlo.Computation, error) {
	b := hlo.NewBuilder(body.Name + ".step")
	p := b.Parameter(shape, "s")
	counter := int64(len(variant))
	in := elemsOf(b, p, counter)
	next, err := newEngine(b, nil).replay(body, []*hlo.Instruction{joinState(b, body.Params[0].Shape, in)})
	if err != nil {
		return nil, err
	}
	return b.BuildComputation(b.Tuple(advance(b, p, variant, splitState(b, next))...))
}

// segmentBody runs k steps (the inner loop over steps) over (elems…, counter).
func segmentBody(name string, shape hlo.Shape, variant []bool, steps *hlo.Computation, k int64) (*hlo.Computation, error) {
	b := hlo.NewBuilder(name + ".segment")
	p := b.Parameter(shape, "s")
	counter := int64(len(variant))
	inner, err := emitCounted(b, name+".steps", shape, steps, elemsOf(b, p, counter), k)
	if err != nil {
		return nil, err
	}
	return b.BuildComputation(b.Tuple(advance(b, p, variant, elemsOf(b, inner, counter))...))
}

// advance is a loop body's root elements: the changed elements from next, the
// others passed through from the parameter p (so they are not stacked), and p's
// counter plus one.
func advance(b *hlo.Builder, p *hlo.Instruction, variant []bool, next []*hlo.Instruction) []*hlo.Instruction {
	counter := int64(len(variant))
	out := make([]*hlo.Instruction, 0, counter+1)
	for i, v := range variant {
		if v {
			out = append(out, next[i])
		} else {
			out = append(out, b.GetTupleElement(p, int64(i)))
		}
	}
	return append(out, b.Add(b.GetTupleElement(p, counter), b.ScalarConstant(hlo.S32, 1)))
}

// impureIn is the first instruction in c (or what it calls) that draws random
// numbers or has side effects, or nil: a segment replayed in the backward pass
// must give the forward pass's values.
func impureIn(c *hlo.Computation) *hlo.Instruction {
	for _, in := range c.Instructions {
		if drawsRandom(in) || !in.SideEffectFree() {
			return in
		}
		for _, cc := range in.Called {
			if bad := impureIn(cc); bad != nil {
				return bad
			}
		}
	}
	return nil
}
