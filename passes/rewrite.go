package passes

import "github.com/vkxla/vkxla/hlo"

// rewriteInOrder walks c in order asking replace for each instruction: a non-nil
// result (an instruction that comes earlier) takes over every use, the root
// included, and the replaced instruction leaves the computation. mutated reports
// an instruction that replace rewrote in place (it stays).
func rewriteInOrder(c *hlo.Computation, replace func(in *hlo.Instruction) (with *hlo.Instruction, mutated bool)) bool {
	anyMutated := false
	replacedAny, _ := replaceInOrder(c, func(in *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction, error) {
		with, mutated := replace(in)
		anyMutated = anyMutated || mutated
		return nil, with, nil
	})
	return replacedAny || anyMutated
}

// replaceInOrder walks c in order, first pointing each instruction's operands at
// their replacements, then asking step for its own: when step names an
// instruction with, that instruction takes over every use of in, the root
// included, in leaves the computation and insert (new instructions with comes
// from, if any) takes its place. Operands come before their users, so one walk
// sees every replacement before its uses. It reports whether anything was
// replaced; parameters are never replaced.
func replaceInOrder(c *hlo.Computation, step func(in *hlo.Instruction) (insert []*hlo.Instruction, with *hlo.Instruction, err error)) (bool, error) {
	replaced := map[*hlo.Instruction]*hlo.Instruction{}
	kept := c.Instructions[:0:0]
	for _, in := range c.Instructions {
		for i, op := range in.Operands {
			if r, ok := replaced[op]; ok {
				in.Operands[i] = r
			}
		}
		insert, with, err := step(in)
		if err != nil {
			return false, err
		}
		if with == nil || in.Op == hlo.OpParameter {
			kept = append(kept, in)
			continue
		}
		kept = append(kept, insert...)
		replaced[in] = with
	}
	if len(replaced) == 0 {
		return false, nil
	}
	if r, ok := replaced[c.Root]; ok {
		c.Root = r
	}
	c.Instructions = kept
	c.Renumber()
	return true, nil
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
