package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// A loop's backward body replays the forward body from the iteration's stacked
// input state: the body is recomputed as if checkpointed with nothing_saveable.
// Two kinds of value must not be recomputed there, and the forward loop stacks
// them per iteration instead (one [n, …] stack each):
//
//   - what a checkpointed region inside the body saves by its policy
//     (jax.checkpoint on the step function of a scan): the backward loop takes it
//     from the stack and recomputes only the rest;
//   - random draws (rng) anywhere in the body or its regions: drawing again would
//     give other bits than the forward pass used.
//
// The kept values are found by walking the body, and the regions, calls and
// fusions that hold one, in replay order; both loops inline those so that every
// kept instruction is reached once per iteration.

// loopKeeps is what a loop body keeps per iteration.
type loopKeeps struct {
	order []*hlo.Instruction        // the kept instructions, in replay order
	saves map[*hlo.Instruction]bool // the same, as a set
	// offload are the kept values a policy keeps in host memory: their stacks go
	// to the host after the forward loop and back before the backward loop.
	offload map[*hlo.Instruction]bool
	reach   map[*hlo.Instruction]bool             // regions, calls and fusions holding one: inlined
	rows    map[*hlo.Instruction]*hlo.Instruction // backward: each kept value's row; nil forward
	got     map[*hlo.Instruction]*hlo.Instruction // forward: each kept value as replayed
}

// keptInLoop walks body for the values its loop must stack. It returns nil when
// there are none.
func keptInLoop(body *hlo.Computation) (*loopKeeps, error) {
	if err := redrawn(body, false); err != nil {
		return nil, err
	}
	k := &loopKeeps{saves: map[*hlo.Instruction]bool{}, offload: map[*hlo.Instruction]bool{}, reach: map[*hlo.Instruction]bool{}}
	if _, err := k.walk(body, hlo.NothingSaveable()); err != nil {
		return nil, err
	}
	if len(k.order) == 0 {
		return nil, nil
	}
	return k, nil
}

// walk adds c's kept instructions under policy (a region's, or nothing_saveable
// outside regions) and reports whether it found any.
func (k *loopKeeps) walk(c *hlo.Computation, policy hlo.CheckpointPolicy) (bool, error) {
	saves, offload := map[*hlo.Instruction]bool{}, map[*hlo.Instruction]bool{}
	savedInstructions(c, policy, saves, offload)
	found := false
	for _, in := range c.Instructions {
		inner, err := k.walkCalled(in, policy)
		if err != nil {
			return false, err
		}
		if inner {
			k.reach[in], found = true, true
			continue
		}
		if !saves[in] || in.Op == hlo.OpCall || in.Op == hlo.OpFusion {
			continue
		}
		if k.saves[in] {
			return false, fmt.Errorf("autodiff: loop body: %s is reached twice (a computation called from two places): %w", in.Name, hlo.ErrUnsupported)
		}
		if !in.Shape.IsArray() {
			return false, fmt.Errorf("autodiff: loop body: the kept value %s is a %v, not an array: %w", in.Name, in.Shape, hlo.ErrUnsupported)
		}
		k.saves[in], found = true, true
		k.offload[in] = offload[in]
		k.order = append(k.order, in)
	}
	return found, nil
}

// walkCalled walks the computation a region (under its policy), call or fusion
// (under the policy around it) runs.
func (k *loopKeeps) walkCalled(in *hlo.Instruction, policy hlo.CheckpointPolicy) (bool, error) {
	switch {
	case hlo.IsCustomCallTo(in, hlo.CheckpointTarget) && len(in.Called) == 1:
		p, err := hlo.CheckpointPolicyOf(in)
		if err != nil {
			return false, fmt.Errorf("autodiff: %w: %w", ErrInvalidArgument, err)
		}
		return k.walk(in.Called[0], p)
	case in.Op == hlo.OpCall || in.Op == hlo.OpFusion:
		return k.walk(in.Called[0], policy)
	}
	return false, nil
}

// replayKept replays an instruction the loop keeps: forward it is computed and
// remembered for its stack, backward it is the iteration's row of that stack. A
// region being replayed around it keeps it too, for its own recomputation.
func (e *engine) replayKept(in *hlo.Instruction, ops []*hlo.Instruction, anyActive bool) (*hlo.Instruction, error) {
	k := e.loop
	if k.rows == nil {
		out, err := e.replayInstruction(in, ops, anyActive)
		k.got[in] = out
		return out, err
	}
	out := k.rows[in]
	if err := e.tapeTaken(in, out, ops, anyActive); err != nil {
		return nil, err
	}
	if s := e.saving; s != nil && s.saves[in] && !s.recomputes {
		s.values = append(s.values, out) // a loop's row: on the device (its stack came back before the loop)
		s.hosted = append(s.hosted, false)
		s.origs = append(s.origs, in)
	}
	return out, nil
}

// keepOrder is keeps' instructions in replay order; none for nil.
func keepOrder(keeps *loopKeeps) []*hlo.Instruction {
	if keeps == nil {
		return nil
	}
	return keeps.order
}

// redrawn finds, among c's instructions (and those of the calls and fusions it
// holds), a construct whose derivative would run its random draws a second time:
// a while loop or conditional (their VJPs replay their bodies), and with regions
// also a nested checkpointed region (the outer recomputation replays it, drawing
// again). Those draws are not replayed yet, so differentiating them is refused
// rather than done under other bits.
func redrawn(c *hlo.Computation, regions bool) error {
	for _, in := range c.Instructions {
		recomputes := in.Op == hlo.OpWhile || in.Op == hlo.OpConditional ||
			(regions && hlo.IsCustomCallTo(in, hlo.CheckpointTarget))
		if in.Op == hlo.OpCall || in.Op == hlo.OpFusion {
			if err := redrawn(in.Called[0], regions); err != nil {
				return err
			}
			continue
		}
		if !recomputes {
			continue
		}
		for _, called := range in.Called {
			if d := drawIn(called, map[*hlo.Computation]bool{}); d != nil {
				return fmt.Errorf("autodiff: %s draws random numbers (%s) inside %s in %s, which the gradient recomputes: "+
					"replaying those draws is not implemented: %w", in.Name, d.Name, called.Name, c.Name, hlo.ErrUnsupported)
			}
		}
	}
	return nil
}

// drawIn returns a random draw in c or a computation it calls, or nil.
func drawIn(c *hlo.Computation, seen map[*hlo.Computation]bool) *hlo.Instruction {
	if seen[c] {
		return nil
	}
	seen[c] = true
	for _, in := range c.Instructions {
		if drawsRandom(in) {
			return in
		}
		for _, called := range in.Called {
			if d := drawIn(called, seen); d != nil {
				return d
			}
		}
	}
	return nil
}
