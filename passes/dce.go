package passes

import "github.com/vkxla/vkxla/hlo"

// DCE removes every instruction whose value does not reach its computation's root
// (parameters stay: they are the signature), then every computation that no
// remaining instruction calls. An instruction with side effects (a custom-call with
// custom_call_has_side_effect=true: Instruction.SideEffectFree) stays, with what it
// reads, even when nothing uses its value.
func DCE(m *hlo.Module, _ Config) (bool, error) {
	changed := anyComputation(m, removeDeadInstructions)
	return removeUncalledComputations(m) || changed, nil
}

// removeDeadInstructions keeps the parameters, the instructions with side effects
// and what they and the root depend on.
func removeDeadInstructions(c *hlo.Computation) bool {
	live := liveInstructions(c)
	kept := c.Instructions[:0:0]
	for _, in := range c.Instructions {
		if live[in] || in.Op == hlo.OpParameter {
			kept = append(kept, in)
		}
	}
	if len(kept) == len(c.Instructions) {
		return false
	}
	c.Instructions = kept
	c.Renumber()
	return true
}

// liveInstructions is the root, the instructions with side effects and what they
// depend on, transitively: what DCE keeps besides the parameters.
func liveInstructions(c *hlo.Computation) map[*hlo.Instruction]bool {
	live := map[*hlo.Instruction]bool{c.Root: true}
	for _, in := range c.Instructions {
		if !in.SideEffectFree() {
			live[in] = true
		}
	}
	for i := len(c.Instructions) - 1; i >= 0; i-- {
		in := c.Instructions[i]
		if !live[in] {
			continue
		}
		for _, op := range in.Operands {
			live[op] = true
		}
	}
	return live
}

// removeUncalledComputations keeps the entry and what it calls, transitively.
func removeUncalledComputations(m *hlo.Module) bool {
	reached := map[*hlo.Computation]bool{m.Entry: true}
	// Callees come before callers, so one backward sweep sees every caller first.
	for i := len(m.Computations) - 1; i >= 0; i-- {
		c := m.Computations[i]
		if !reached[c] {
			continue
		}
		for _, in := range c.Instructions {
			for _, callee := range in.Called {
				reached[callee] = true
			}
		}
	}
	kept := m.Computations[:0:0]
	for _, c := range m.Computations {
		if reached[c] {
			kept = append(kept, c)
		}
	}
	if len(kept) == len(m.Computations) {
		return false
	}
	m.Computations = kept
	return true
}
