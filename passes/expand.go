package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// expandEach is the shared body of the expander passes: every instruction that
// match selects is replaced by the computation build returns for it, whose
// parameters stand for the instruction's operands. The computation's other
// instructions are inserted just before the replaced one under fresh names, the
// computations they call join the module (callees before callers), and its root
// takes over every use.
func expandEach(m *hlo.Module, match func(*hlo.Instruction) bool,
	build func(in *hlo.Instruction) (*hlo.Computation, error)) (bool, error) {
	names := moduleNames(m)
	changed := false
	for _, c := range slices.Clone(m.Computations) {
		if !slices.ContainsFunc(c.Instructions, match) {
			continue
		}
		if err := expandIn(m, c, names, match, build); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

func expandIn(m *hlo.Module, c *hlo.Computation, names *nameSet, match func(*hlo.Instruction) bool,
	build func(in *hlo.Instruction) (*hlo.Computation, error)) error {
	_, err := replaceInOrder(c, func(in *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction, error) {
		if !match(in) {
			return nil, nil, nil
		}
		body, err := build(in)
		if err != nil {
			return nil, nil, err
		}
		inlined, root := inline(body, in.Name, in.Operands, addCallees(m, c, body, names), names)
		return inlined, root, nil
	})
	return err
}

// inline copies body's instructions (parameters become args) and returns them with
// the copy of the root. Each copy is named after the instruction it expands and
// its opcode (%bn.multiply, %bn.multiply.1, …), so dumps say where it came from.
func inline(body *hlo.Computation, from string, args []*hlo.Instruction,
	callees map[*hlo.Computation]*hlo.Computation, names *nameSet) ([]*hlo.Instruction, *hlo.Instruction) {
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	for i, p := range body.Params {
		copies[p] = args[i]
	}
	var out []*hlo.Instruction
	for _, in := range body.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		ni := &hlo.Instruction{Name: names.fresh(from + "." + in.Op.String()), Op: in.Op, Shape: in.Shape.Clone(),
			Attrs: in.Attrs.Clone(), Called: remapCalled(in.Called, callees)}
		for _, x := range in.Operands {
			ni.Operands = append(ni.Operands, copies[x])
		}
		copies[in] = ni
		out = append(out, ni)
	}
	return out, copies[body.Root]
}

// addCallees adds copies of the computations body calls, transitively, that the
// module lacks, just before caller (so callees stay before callers), under fresh
// names, and returns the copy of each. Copies, because an expansion may hand out
// one computation to many calls and modules.
func addCallees(m *hlo.Module, caller, body *hlo.Computation, names *nameSet) map[*hlo.Computation]*hlo.Computation {
	have := map[*hlo.Computation]bool{}
	for _, c := range m.Computations {
		have[c] = true
	}
	var added []*hlo.Computation
	var visit func(c *hlo.Computation)
	visit = func(c *hlo.Computation) {
		for _, in := range c.Instructions {
			for _, k := range in.Called {
				if !have[k] {
					have[k] = true
					visit(k)
					added = append(added, k)
				}
			}
		}
	}
	visit(body)
	copies := map[*hlo.Computation]*hlo.Computation{}
	var cloned []*hlo.Computation
	for _, k := range added { // callees first, so their copies exist when needed
		nk := hlo.CloneComputation(k, names.fresh)
		for _, in := range nk.Instructions {
			in.Called = remapCalled(in.Called, copies)
		}
		copies[k] = nk
		cloned = append(cloned, nk)
	}
	at := slices.Index(m.Computations, caller)
	m.Computations = slices.Insert(m.Computations, at, cloned...)
	return copies
}

// remapCalled points called computations at their copies.
func remapCalled(called []*hlo.Computation, copies map[*hlo.Computation]*hlo.Computation) []*hlo.Computation {
	out := slices.Clone(called)
	for i, k := range out {
		if nk, ok := copies[k]; ok {
			out[i] = nk
		}
	}
	return out
}

// isOp matches the instructions of one opcode.
func isOp(ops ...hlo.Opcode) func(*hlo.Instruction) bool {
	return func(in *hlo.Instruction) bool { return slices.Contains(ops, in.Op) }
}
