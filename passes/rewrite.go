package passes

import "github.com/vkxla/vkxla/hlo"

// rewriteInOrder walks c in order, first pointing each instruction's operands at
// their replacements, then asking replace for its own: a non-nil result (an
// instruction that comes earlier) takes over every use, the root included, and
// the replaced instruction leaves the computation. Operands come before their
// users, so one walk sees every replacement before its uses. mutated reports an
// instruction that replace rewrote in place (it stays).
func rewriteInOrder(c *hlo.Computation, replace func(in *hlo.Instruction) (with *hlo.Instruction, mutated bool)) bool {
	replaced := map[*hlo.Instruction]*hlo.Instruction{}
	kept := c.Instructions[:0:0]
	changed := false
	for _, in := range c.Instructions {
		for i, op := range in.Operands {
			if r, ok := replaced[op]; ok {
				in.Operands[i] = r
			}
		}
		with, mutated := replace(in)
		changed = changed || mutated
		if with != nil && in.Op != hlo.OpParameter {
			replaced[in] = with
			continue
		}
		kept = append(kept, in)
	}
	if len(replaced) == 0 {
		return changed
	}
	if r, ok := replaced[c.Root]; ok {
		c.Root = r
	}
	c.Instructions = kept
	c.Renumber()
	return true
}

// anyComputation applies f to every computation of m and reports whether it
// changed any.
func anyComputation(m *hlo.Module, f func(c *hlo.Computation) bool) bool {
	changed := false
	for _, c := range m.Computations {
		if f(c) {
			changed = true
		}
	}
	return changed
}
