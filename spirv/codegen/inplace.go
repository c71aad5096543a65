package codegen

import "github.com/vkxla/vkxla/hlo"

// inPlaceInputs reports, per input of an elemental kernel, whether every read of it
// is of the element at the linear index the invocation is computing (the index
// every output is stored at), through elementwise ops, copies and reshapes only.
// Such an input is read before the same invocation overwrites that element, and no
// other invocation touches it, so an output with the input's element size and
// count may be written over the input's buffer: the runtime shares them when the
// input dies at this kernel.
//
// In a row kernel (rows >= 0 is the rank of its rows, rows.go) one invocation
// reads and writes whole rows: it folds the row's reductions before it stores any
// of the row's outputs. An input read only by those folds at the reduction's own
// element (so inside the row being computed), or by the outputs at their own
// element, is then read before its row is overwritten, by the invocation that
// overwrites it, and qualifies as well.
func inPlaceInputs(c *hlo.Computation, rows int) []bool {
	ok := make([]bool, len(c.Params))
	for i := range ok {
		ok[i] = true
	}
	seen := map[*hlo.Instruction]map[access]bool{}
	var walk func(in *hlo.Instruction, a access)
	walk = func(in *hlo.Instruction, a access) {
		if seen[in][a] {
			return
		}
		if seen[in] == nil {
			seen[in] = map[access]bool{}
		}
		seen[in][a] = true
		if in.Op == hlo.OpParameter {
			if n := int(in.Attrs.ParameterNumber); n >= 0 && n < len(ok) && a != sameElement {
				ok[n] = false
			}
			return
		}
		for j := range in.Operands {
			walk(in.Operands[j], operandAccess(in, j, a, rows))
		}
	}
	for _, e := range c.Outputs() {
		walk(e, sameElement)
	}
	return ok
}

// access is which elements of a value a kernel may read, relative to the output
// element an invocation computes.
type access uint8

const (
	elsewhere   access = iota // any element
	sameElement               // the element at the output's linear index
	sameRow                   // the row's value (row kernels: one per row, computed up front)
)

// operandAccess is how in, read with access a, reads its operand j; rows is the
// rank of a row kernel's rows, or -1.
func operandAccess(in *hlo.Instruction, j int, a access, rows int) access {
	switch {
	case a == elsewhere:
		return elsewhere
	case rows >= 0 && in.Op == hlo.OpReduce && in.Shape.IsArray() && in.Shape.Rank() == rows:
		if j == 0 { // a row reduction folds its input row by row, at each element
			return sameElement
		}
		return elsewhere
	case a == sameRow:
		if isElementwise(in) && in.Operands[j].Shape.SameDims(in.Shape) {
			return sameRow
		}
		return elsewhere
	case readsSameIndex(in, j):
		return sameElement
	case rows >= 0 && isRowBroadcast(in, rows):
		return sameRow
	}
	return elsewhere
}

// isElementwise reports ops that compute each element from the operands' elements
// at the same index.
func isElementwise(in *hlo.Instruction) bool {
	switch in.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return true
	}
	return false
}

// isRowBroadcast reports a broadcast of a value of the given rank along the minor
// dims (its dims map to the leading ones).
func isRowBroadcast(in *hlo.Instruction, rank int) bool {
	if in.Op != hlo.OpBroadcast || len(in.Attrs.Dimensions) != rank {
		return false
	}
	for i, d := range in.Attrs.Dimensions {
		if d != int64(i) {
			return false
		}
	}
	return true
}

// readsSameIndex says whether in reads operand j only at the linear index of the
// element it computes.
func readsSameIndex(in *hlo.Instruction, j int) bool {
	op := in.Operands[j]
	if !op.Shape.IsArray() || !in.Shape.IsArray() {
		return false
	}
	if isElementwise(in) {
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
