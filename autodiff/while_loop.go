package autodiff

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// A while loop with a known trip count n is differentiated as a loop, as JAX does for
// scan: the forward pass runs an augmented loop that also stacks each iteration's
// input state (one [n, …] array per state leaf), and the backward pass runs a loop
// from the last iteration to the first, each step slicing that iteration's state out
// of the stacks and applying the body's VJP (which replays the body: one
// recomputation per iteration). The graph grows with the body, not the trip count;
// memory holds n copies of the state.
//
// With a static trip count both loops count up from 0 to the constant n, the
// pattern tripCount recognises, so the derivative can be differentiated again. A
// bounded data-dependent loop (Options.MaxTripCount = n) runs the original
// condition as well, stops at n iterations at most, and the backward loop runs as
// many iterations as the forward one did; if the condition still holds after n, the
// result's float leaves are NaN.

// loopTape is what the forward loop leaves for the backward one.
type loopTape struct {
	body *hlo.Computation
	// saved holds, per state leaf, the [n, …] stack of its values when stacked[l],
	// else the leaf's value itself: a loop-invariant state element (the body passes
	// it through unchanged, as weights) is kept once, not n times.
	saved   []*hlo.Instruction
	stacked []bool
	// keeps are the body's values the loop stacks besides its states (loop_saving.go),
	// kept their stacks in keeps.order; nil when there are none.
	keeps *loopKeeps
	kept  []*hlo.Instruction
	n     int64
	// count is the forward loop's iteration count, for a bounded loop; nil when it
	// is the constant n.
	count *hlo.Instruction
}

// loopWhile emits the augmented forward loop and puts a node with the loop's VJP on
// the tape. bounded marks a data-dependent loop with at most n iterations.
func (e *engine) loopWhile(in *hlo.Instruction, init *hlo.Instruction, n int64, bounded bool) (*hlo.Instruction, error) {
	body := in.Called[1]
	leaves := init.Shape.Leaves()
	stacked := variantLeaves(body, init.Shape)
	keeps, err := keptInLoop(body)
	if err != nil {
		return nil, err
	}
	aug := []hlo.Shape{init.Shape, hlo.Scalar(hlo.S32)}
	for l, s := range leaves {
		if stacked[l] {
			aug = append(aug, stackShape(s, n))
		}
	}
	for _, in := range keepOrder(keeps) {
		aug = append(aug, stackShape(in.Shape, n))
	}
	augShape := hlo.MakeTuple(aug...)
	fwdBody, err := stackingBody(body, augShape, stacked, keeps)
	if err != nil {
		return nil, err
	}
	var orig *hlo.Computation
	if bounded {
		orig = in.Called[0]
	}
	cond, err := countingCond(in.Called[0].Name+".count", augShape, 1, n, orig)
	if err != nil {
		return nil, err
	}
	start := []*hlo.Instruction{init, e.b.ScalarConstant(hlo.S32, 0)}
	for l, s := range leaves {
		if stacked[l] {
			start = append(start, e.zeros(stackShape(s, n)))
		}
	}
	for _, in := range keepOrder(keeps) {
		start = append(start, e.zeros(stackShape(in.Shape, n)))
	}
	loop := e.b.While(cond, fwdBody, e.b.Tuple(start...))
	out := e.b.GetTupleElement(loop, 0)
	lt := &loopTape{body: body, n: n, stacked: stacked, keeps: keeps}
	if bounded {
		lt.count = e.b.GetTupleElement(loop, 1)
	}
	next := int64(2)
	for l, v := range leafValues(e.b, init) {
		if stacked[l] {
			v = e.b.GetTupleElement(loop, next)
			next++
		}
		lt.saved = append(lt.saved, v)
	}
	for _, k := range keepOrder(keeps) {
		stack := e.b.GetTupleElement(loop, next)
		if keeps.offload[k] {
			stack = e.b.MoveToHost(stack) // until the backward loop (vjpLoop)
		}
		lt.kept = append(lt.kept, stack)
		next++
	}
	if err := e.b.Err(); err != nil {
		return nil, fmt.Errorf("autodiff: while %s: %w", in.Name, err)
	}
	e.loopResiduals(in, lt)
	e.active[out] = true
	e.tape = append(e.tape, &node{orig: in, out: out, args: []*hlo.Instruction{init},
		vjp: func(e *engine, n *node, ct *cot) ([]*cot, error) { return e.vjpLoop(lt, n, ct) }})
	if !bounded {
		return out, nil
	}
	more, err := e.replay(in.Called[0], []*hlo.Instruction{out})
	if err != nil {
		return nil, err
	}
	return e.poison(more, out), nil
}

// vjpLoop runs the backward loop: state (k, cotangent of the state, stacks…); step k
// takes iteration n-1-k's input state from the stacks and maps the cotangent of its
// output to that of its input.
func (e *engine) vjpLoop(lt *loopTape, n *node, ct *cot) ([]*cot, error) {
	stateShape := n.args[0].Shape
	shapes := []hlo.Shape{hlo.Scalar(hlo.S32), stateShape}
	carried := slices.Clone(lt.saved)
	for j, stack := range lt.kept {
		if lt.keeps.offload[lt.keeps.order[j]] {
			stack = e.b.MoveToDevice(stack)
		}
		carried = append(carried, stack)
	}
	for _, s := range carried {
		shapes = append(shapes, s.Shape)
	}
	start := append([]*hlo.Instruction{e.b.ScalarConstant(hlo.S32, 0), e.materialize(ct, stateShape)}, carried...)
	if lt.count != nil {
		shapes = append(shapes, lt.count.Shape)
		start = append(start, lt.count)
	}
	bwdShape := hlo.MakeTuple(shapes...)
	bwdBody, err := backwardBody(lt, bwdShape, e.opts)
	if err != nil {
		return nil, err
	}
	var cond *hlo.Computation
	if lt.count == nil {
		cond, err = countingCond(lt.body.Name+".vjp.count", bwdShape, 0, lt.n, nil)
	} else {
		cond, err = lessThanElement(lt.body.Name+".vjp.count", bwdShape, 0, int64(len(shapes)-1))
	}
	if err != nil {
		return nil, err
	}
	loop := e.b.While(cond, bwdBody, e.b.Tuple(start...))
	return []*cot{e.split(e.b.GetTupleElement(loop, 1))}, nil
}

// stackingBody is the forward loop's body over (state, t, stacks…): it writes the
// stacked state leaves into row t of their stacks and runs the original body.
func stackingBody(body *hlo.Computation, augShape hlo.Shape, stacked []bool, keeps *loopKeeps) (*hlo.Computation, error) {
	b := hlo.NewBuilder(body.Name + ".stack")
	p := b.Parameter(augShape, "aug")
	state, t := b.GetTupleElement(p, 0), b.GetTupleElement(p, 1)
	fwd := newEngine(b, nil)
	if keeps != nil {
		fwd.loop = &loopKeeps{saves: keeps.saves, reach: keeps.reach, got: map[*hlo.Instruction]*hlo.Instruction{}}
	}
	next, err := fwd.replay(body, []*hlo.Instruction{state})
	if err != nil {
		return nil, err
	}
	out := []*hlo.Instruction{next, b.Add(t, b.ScalarConstant(hlo.S32, 1))}
	push := func(v *hlo.Instruction) {
		row := b.Reshape(v, append([]int64{1}, v.Shape.Dims...)...)
		stack := b.GetTupleElement(p, int64(len(out)))
		out = append(out, b.DynamicUpdateSlice(stack, row, rowStart(b, t, v.Shape.Rank())))
	}
	for l, leaf := range leafValues(b, state) {
		if stacked[l] {
			push(leaf)
		}
	}
	for _, in := range keepOrder(keeps) {
		v := fwd.loop.got[in]
		if v == nil {
			return nil, fmt.Errorf("autodiff: while body %s: the forward replay did not reach the kept value %s", body.Name, in.Name)
		}
		push(v)
	}
	return b.BuildComputation(b.Tuple(out...))
}

// backwardBody is the backward loop's body over (k, ct, stacks…).
func backwardBody(lt *loopTape, bwdShape hlo.Shape, opts *Options) (*hlo.Computation, error) {
	b := hlo.NewBuilder(lt.body.Name + ".vjp")
	p := b.Parameter(bwdShape, "bwd")
	k, ctv := b.GetTupleElement(p, 0), b.GetTupleElement(p, 1)
	last := b.ScalarConstant(hlo.S32, float64(lt.n-1))
	var count *hlo.Instruction
	nCarried := len(lt.saved) + len(lt.kept)
	if lt.count != nil {
		count = b.GetTupleElement(p, int64(2+nCarried))
		last = b.Sub(count, b.ScalarConstant(hlo.S32, 1))
	}
	t := b.Sub(last, k)
	row := func(stack *hlo.Instruction) *hlo.Instruction {
		dims := stack.Shape.Dims[1:]
		return b.Reshape(b.DynamicSlice(stack, rowStart(b, t, len(dims)), append([]int64{1}, dims...)), dims...)
	}
	leaves := make([]*hlo.Instruction, len(lt.saved))
	saved := make([]*hlo.Instruction, nCarried)
	for i := range saved {
		saved[i] = b.GetTupleElement(p, int64(2+i))
	}
	for l := range lt.saved {
		leaves[l] = saved[l]
		if lt.stacked[l] {
			leaves[l] = row(saved[l])
		}
	}
	state := rebuild(b, ctv.Shape, &leaves)
	sub := newEngine(b, opts)
	if lt.keeps != nil {
		sub.loop = &loopKeeps{saves: lt.keeps.saves, reach: lt.keeps.reach, rows: map[*hlo.Instruction]*hlo.Instruction{}}
		for j, in := range lt.keeps.order {
			sub.loop.rows[in] = row(saved[len(lt.saved)+j])
		}
	}
	sub.markActive(state)
	out, err := sub.replay(lt.body, []*hlo.Instruction{state})
	if err != nil {
		return nil, err
	}
	if err := sub.backprop(out, sub.split(ctv)); err != nil {
		return nil, err
	}
	ctIn := sub.materialize(sub.floatOnly(sub.cts[state], state.Shape), state.Shape)
	root := append([]*hlo.Instruction{b.Add(k, b.ScalarConstant(hlo.S32, 1)), ctIn}, saved...)
	if count != nil {
		root = append(root, count)
	}
	return b.BuildComputation(b.Tuple(root...))
}

// countingCond builds (state) -> state[i] < n for an s32 counter at tuple index i;
// with orig, also orig(state[0]) (the original loop's condition).
func countingCond(name string, shape hlo.Shape, i, n int64, orig *hlo.Computation) (*hlo.Computation, error) {
	b := hlo.NewBuilder(name)
	p := b.Parameter(shape, "s")
	more := b.Compare(b.GetTupleElement(p, i), b.ScalarConstant(hlo.S32, float64(n)), hlo.CmpLT)
	if orig != nil {
		holds, err := newEngine(b, nil).replay(orig, []*hlo.Instruction{b.GetTupleElement(p, 0)})
		if err != nil {
			return nil, err
		}
		more = b.And(more, holds)
	}
	return b.BuildComputation(more)
}

// lessThanElement builds (state) -> state[i] < state[j].
func lessThanElement(name string, shape hlo.Shape, i, j int64) (*hlo.Computation, error) {
	b := hlo.NewBuilder(name)
	p := b.Parameter(shape, "s")
	return b.BuildComputation(b.Compare(b.GetTupleElement(p, i), b.GetTupleElement(p, j), hlo.CmpLT))
}

// rowStart is the dynamic-slice start (t, 0, …, 0) of a row of a stack.
func rowStart(b *hlo.Builder, t *hlo.Instruction, rank int) []*hlo.Instruction {
	starts := []*hlo.Instruction{t}
	for range rank {
		starts = append(starts, b.ScalarConstant(hlo.S32, 0))
	}
	return starts
}

// variantLeaves reports, per state leaf, whether the body may change it: all but
// the leaves of a tuple element that the body's root tuple passes through as
// get-tuple-element of its parameter at the same index.
func variantLeaves(body *hlo.Computation, state hlo.Shape) []bool {
	var out []bool
	if !state.IsTuple() || body.Root.Op != hlo.OpTuple {
		for range state.Leaves() {
			out = append(out, true)
		}
		return out
	}
	for i, el := range state.Elems {
		r := body.Root.Operands[i]
		same := r.Op == hlo.OpGetTupleElement && r.Operands[0] == body.Params[0] && r.Attrs.TupleIndex == int64(i)
		for range el.Leaves() {
			out = append(out, !same)
		}
	}
	return out
}

func stackShape(s hlo.Shape, n int64) hlo.Shape {
	return hlo.MakeShape(s.DType, append([]int64{n}, s.Dims...)...)
}

// leafValues lists the array leaves of a value, depth first, as get-tuple-elements.
func leafValues(b *hlo.Builder, v *hlo.Instruction) []*hlo.Instruction {
	if !v.Shape.IsTuple() {
		return []*hlo.Instruction{v}
	}
	var out []*hlo.Instruction
	for i := range v.Shape.Elems {
		out = append(out, leafValues(b, b.GetTupleElement(v, int64(i)))...)
	}
	return out
}

// rebuild assembles a value of shape s from leaves (consumed from the front).
func rebuild(b *hlo.Builder, s hlo.Shape, leaves *[]*hlo.Instruction) *hlo.Instruction {
	if !s.IsTuple() {
		v := (*leaves)[0]
		*leaves = (*leaves)[1:]
		return v
	}
	elems := make([]*hlo.Instruction, len(s.Elems))
	for i, es := range s.Elems {
		elems[i] = rebuild(b, es, leaves)
	}
	return b.Tuple(elems...)
}
