package codegen

import "github.com/vkxla/vkxla/hlo"

// inPlaceInputs reports, per input of an elemental kernel, whether every read of it
// is of the element at the linear index the invocation is computing (the index
// every output is stored at), through elementwise ops, copies and reshapes only.
// Such an input is read before the same invocation overwrites that element, and no
// other invocation touches it, so an output with the input's element size and
// count may be written over the input's buffer: the runtime shares them when the
// input dies at this kernel.
func inPlaceInputs(c *hlo.Computation) []bool {
	ok := make([]bool, len(c.Params))
	for i := range ok {
		ok[i] = true
	}
	seen := map[*hlo.Instruction]map[bool]bool{}
	var walk func(in *hlo.Instruction, aligned bool)
	walk = func(in *hlo.Instruction, aligned bool) {
		if seen[in][aligned] {
			return
		}
		if seen[in] == nil {
			seen[in] = map[bool]bool{}
		}
		seen[in][aligned] = true
		if in.Op == hlo.OpParameter {
			if n := int(in.Attrs.ParameterNumber); n >= 0 && n < len(ok) && !aligned {
				ok[n] = false
			}
			return
		}
		for j, op := range in.Operands {
			walk(op, aligned && readsSameIndex(in, j))
		}
	}
	if c.Root.Op == hlo.OpTuple {
		for _, e := range c.Root.Operands {
			walk(e, true)
		}
	} else {
		walk(c.Root, true)
	}
	return ok
}

// readsSameIndex says whether in reads operand j only at the linear index of the
// element it computes.
func readsSameIndex(in *hlo.Instruction, j int) bool {
	op := in.Operands[j]
	if !op.Shape.IsArray() || !in.Shape.IsArray() {
		return false
	}
	switch in.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		// Scalar operands of clamp and select are broadcast: read at index 0.
		return op.Shape.SameDims(in.Shape)
	}
	switch in.Op {
	case hlo.OpCopy, hlo.OpReshape:
		return true
	case hlo.OpDynamicUpdateSlice:
		// The operand is read at the output's index outside the update window (the
		// update and the start indices are read elsewhere).
		return j == 0
	}
	return false
}
