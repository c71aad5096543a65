package autodiff

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Checkpointed regions (hlo.Builder.Checkpoint, jax.checkpoint). The forward pass
// runs the region as usual and keeps, besides its result, only the values its
// policy saves. The region's VJP recomputes the rest: a backward computation
// replays the region from its arguments and the saved values and differentiates
// the replay. That computation is inlined behind an opt-barrier over everything it
// reads from the forward pass, together with the incoming cotangent, so that
//
//   - CSE cannot merge the recomputed instructions with the forward ones (their
//     operands are the barrier's, not the forward values), nor fusion fuse across;
//   - the recomputation depends on the cotangent, which exists only once the
//     backward pass reaches the region: no schedule can hoist it into the forward
//     pass, where it would keep the values alive that checkpointing drops.

// saving is a region's record of the values its policy keeps. In the forward
// replay each saveable instruction's value is appended; in the recomputation the
// same instructions come in the same order (the same body, the same active
// arguments) and take the saved values back instead of being recomputed.
type saving struct {
	saves map[*hlo.Instruction]bool // the region's instructions whose values are kept
	// offload are the kept values the policy keeps in host memory: the forward
	// replay keeps MoveToHost of them (hosted[i] marks values[i]).
	offload map[*hlo.Instruction]bool
	hosted  []bool
	values  []*hlo.Instruction
	// origs are, in the forward replay, the instructions of the region values[i]
	// is the value of (SavedResiduals names them).
	origs      []*hlo.Instruction
	next       int
	recomputes bool
}

// replaySaveable replays a saveable instruction of a region: recorded forward,
// taken from the saved values in the recomputation. A saved value still goes on
// the tape over the recomputed operands, so that its cotangent reaches them.
func (e *engine) replaySaveable(in *hlo.Instruction, ops []*hlo.Instruction, anyActive bool) (*hlo.Instruction, error) {
	s := e.saving
	if !s.recomputes {
		out, err := e.replayInstruction(in, ops, anyActive)
		kept := out
		if s.offload[in] && err == nil {
			kept = e.b.MoveToHost(out)
		}
		s.values = append(s.values, kept)
		s.hosted = append(s.hosted, s.offload[in])
		s.origs = append(s.origs, in)
		return out, err
	}
	if s.next >= len(s.values) {
		return nil, fmt.Errorf("autodiff: checkpoint recomputation of %s: the replay reached more saveable values (%d) than the forward pass saved", in.Name, len(s.values))
	}
	out := s.values[s.next]
	s.next++
	return out, e.tapeTaken(in, out, ops, anyActive)
}

// tapeTaken puts a value taken in place of in's recomputation on the tape over the
// recomputed operands, so that its cotangent reaches them. A draw whose
// distribution's parameters are differentiated has no rule of its own (its
// gradient is its decomposition's, a + u·(b − a)): taking its value is refused.
func (e *engine) tapeTaken(in, out *hlo.Instruction, ops []*hlo.Instruction, anyActive bool) error {
	if !anyActive || !hasFloatLeaf(out.Shape) {
		return nil
	}
	if drawsRandom(in) {
		return fmt.Errorf("autodiff: %s draws with parameters that depend on a differentiated value, inside a checkpointed "+
			"region or a loop, whose backward pass takes the forward draw: not implemented: %w", in.Name, hlo.ErrUnsupported)
	}
	n := &node{orig: in, out: out, args: ops}
	if hlo.IsCustomCallTo(in, hlo.CheckpointNameTarget) {
		n.vjp = vjpPassThrough // a name is the identity
	}
	e.active[out] = true
	e.tape = append(e.tape, n)
	return nil
}

// savedInstructions finds the instructions of a region (and of the calls and
// fusions it inlines) whose values policy keeps: dots and convolutions, or for a
// CheckpointName with a kept name the value it names, so that every rule reading
// that value (tanh's reads its result) reads the kept one. Where the named value
// comes from an op the replay expands rather than tapes (a call, a while loop, a
// custom-call), the name itself is kept: the op is recomputed for its own
// backward pass, the name's readers read the kept value. Nested regions keep by
// their own policies. Random draws are kept whatever the policy: the
// recomputation must see the forward pass's bits, and drawing again would advance
// the RNG state to new ones. offload gets the kept values the policy keeps in host
// memory (hlo.CheckpointPolicy.Offloads: named values, or dots under
// offload_dot_with_no_batch_dims).
func savedInstructions(c *hlo.Computation, policy hlo.CheckpointPolicy, into, offload map[*hlo.Instruction]bool) {
	for _, in := range c.Instructions {
		switch {
		case hlo.IsCustomCallTo(in, hlo.CheckpointNameTarget):
			if !policy.Saveable(in) {
				continue
			}
			kept := in
			if named := in.Operands[0]; table[named.Op].expand == nil {
				kept = named
			}
			into[kept] = true
			if policy.Offloads(in) {
				offload[kept] = true
			}
		case in.Op == hlo.OpCall || in.Op == hlo.OpFusion:
			savedInstructions(in.Called[0], policy, into, offload)
		case drawsRandom(in):
			into[in] = true
		case policy.Saveable(in) && table[in.Op].expand == nil && in.Op != hlo.OpConstant:
			into[in] = true
			if policy.Offloads(in) {
				offload[in] = true
			}
		}
	}
}

// drawsRandom reports whether in reads the RNG state, so that running it again
// gives other values: rng and rng-get-and-update-state. (rng-bit-generator is a
// function of its state operand: replayed on the same state it gives the same bits.)
func drawsRandom(in *hlo.Instruction) bool {
	return in.Op == hlo.OpRng || in.Op == hlo.OpRngGetAndUpdateState
}

func vjpPassThrough(_ *engine, _ *node, ct *cot) ([]*cot, error) { return []*cot{ct}, nil }

// expandCheckpoint replays a region on the differentiated path and puts one node
// on the tape whose rule recomputes it.
func expandCheckpoint(e *engine, in *hlo.Instruction, ops []*hlo.Instruction) (*hlo.Instruction, error) {
	policy, err := hlo.CheckpointPolicyOf(in)
	if err != nil {
		return nil, fmt.Errorf("autodiff: %w: %w", ErrInvalidArgument, err)
	}
	if len(in.Called) != 1 {
		return nil, fmt.Errorf("autodiff: checkpoint %s calls %d computations, want its one region: %w",
			in.Name, len(in.Called), ErrInvalidArgument)
	}
	body := in.Called[0]
	if err := redrawn(body, true); err != nil {
		return nil, err
	}
	fwd := newEngine(e.b, e.opts)
	saves, offload := map[*hlo.Instruction]bool{}, map[*hlo.Instruction]bool{}
	savedInstructions(body, policy, saves, offload)
	fwd.saving = &saving{saves: saves, offload: offload}
	fwd.loop = e.loop // a loop around the region keeps some of its values itself
	for _, op := range ops {
		fwd.active[op] = e.active[op]
	}
	out, err := fwd.replay(body, ops)
	if err != nil {
		return nil, err
	}
	if !fwd.active[out] {
		return out, nil // nothing differentiable flows through the region
	}
	e.active[out] = true
	r := &region{body: body, saves: saves, saved: fwd.saving.values, hosted: fwd.saving.hosted, origs: fwd.saving.origs}
	e.tape = append(e.tape, &node{orig: in, out: out, args: ops,
		vjp: func(e *engine, n *node, ct *cot) ([]*cot, error) { return e.recompute(n, ct, r) }})
	return out, nil
}

// region is what a checkpointed region's forward replay leaves for its VJP.
type region struct {
	body  *hlo.Computation
	saves map[*hlo.Instruction]bool
	saved []*hlo.Instruction // the kept values, in replay order
	// hosted marks the saved values in host memory (MoveToHost): the backward
	// computation moves them back to the device where it reads them.
	hosted []bool
	origs  []*hlo.Instruction // the region's instructions they are the values of
}

// recompute is a region's VJP: its backward computation (arguments, saved values,
// cotangent) → the arguments' cotangents, inlined over an opt-barrier of the
// inputs it reads.
func (e *engine) recompute(n *node, ct *cot, r *region) ([]*cot, error) {
	inputs := append(append(slices.Clone(n.args), r.saved...), e.materialize(ct, n.out.Shape))
	active := make([]bool, len(n.args))
	for i, a := range n.args {
		active[i] = e.active[a]
	}
	bwd, reads, grads, err := regionBackward(r.body, r.saves, active, inputs, r.hosted, e.opts)
	if err != nil || len(grads) == 0 {
		return nil, err
	}
	e.regionResiduals(r, n.args, reads)
	reads[len(inputs)-1] = true // the cotangent always: it orders the recomputation
	var fenced []*hlo.Instruction
	for i, x := range inputs {
		if reads[i] {
			fenced = append(fenced, x)
		}
	}
	barrier := e.b.OptBarrier(e.b.Tuple(fenced...))
	args := slices.Clone(inputs) // unread inputs stay as they are: nothing refers to them
	k := 0
	for i := range inputs {
		if reads[i] {
			args[i] = e.b.GetTupleElement(barrier, int64(k))
			k++
		}
	}
	res := e.b.Inline(bwd, args)
	out := make([]*cot, len(n.args))
	for j, i := range grads {
		out[i] = e.split(e.b.GetTupleElement(res, int64(j)))
	}
	return out, e.b.Err()
}

// regionBackward builds a region's backward computation over parameters shaped
// like inputs (the region's arguments, then the nSaved saved values, then the
// result's cotangent): it replays the region, taking the saved values in place of
// the saveable instructions (moved back to the device first where hosted says
// they are in host memory: behind the barrier, so no schedule moves them back
// before the backward pass needs them), and differentiates the replay. It returns the
// computation, which inputs it reads, and which arguments its result tuple holds
// cotangents for (none: nothing reached the active arguments).
func regionBackward(body *hlo.Computation, saves map[*hlo.Instruction]bool, active []bool, inputs []*hlo.Instruction,
	hosted []bool, opts *Options) (*hlo.Computation, []bool, []int, error) {
	nSaved := len(hosted)
	sub := newEngine(hlo.NewBuilder(body.Name+".recompute"), opts)
	params := make([]*hlo.Instruction, len(inputs))
	for i, x := range inputs {
		params[i] = sub.b.Parameter(x.Shape, x.Name)
	}
	nArgs := len(active)
	args, ct := params[:nArgs], params[len(params)-1]
	values := slices.Clone(params[nArgs : nArgs+nSaved])
	for i, onHost := range hosted {
		if onHost {
			values[i] = sub.b.MoveToDevice(values[i])
		}
	}
	sub.saving = &saving{saves: saves, values: values, recomputes: true}
	for i, a := range args {
		if active[i] {
			sub.markActive(a)
		}
	}
	out, err := sub.replay(body, args)
	if err != nil {
		return nil, nil, nil, err
	}
	if sub.saving.next != nSaved {
		return nil, nil, nil, fmt.Errorf("autodiff: checkpoint region %s: the recomputation took %d of the %d saved values",
			body.Name, sub.saving.next, nSaved)
	}
	if err := sub.backprop(out, sub.split(ct)); err != nil {
		return nil, nil, nil, err
	}
	var grads []int
	var results []*hlo.Instruction
	for i, a := range args {
		if c := sub.floatOnly(sub.cts[a], a.Shape); c != nil {
			grads = append(grads, i)
			results = append(results, sub.materialize(c, a.Shape))
		}
	}
	if len(grads) == 0 {
		return nil, nil, nil, sub.b.Err()
	}
	comp, err := sub.b.BuildComputation(sub.b.Tuple(results...))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("autodiff: checkpoint region %s: %w", body.Name, err)
	}
	return comp, paramsRead(comp), grads, nil
}

// paramsRead reports which of c's parameters its root depends on.
func paramsRead(c *hlo.Computation) []bool {
	reads := make([]bool, len(c.Params))
	seen := map[*hlo.Instruction]bool{}
	var visit func(x *hlo.Instruction)
	visit = func(x *hlo.Instruction) {
		if seen[x] {
			return
		}
		seen[x] = true
		if x.Op == hlo.OpParameter {
			reads[x.Attrs.ParameterNumber] = true
		}
		for _, o := range x.Operands {
			visit(o)
		}
	}
	visit(c.Root)
	return reads
}
