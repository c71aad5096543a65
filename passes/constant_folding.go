package passes

import (
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// FoldConstants evaluates, with cpuref, each instruction whose operands are all
// constants and replaces it by a constant of its value (XLA's HloConstantFolding):
// frontend dumps carry constant subexpressions (a scale computed from two
// literals, a converted or transposed weight, a mask built from iota-free
// constants) that would otherwise each take a kernel on every run. cpuref defines
// the numerics, so a folded value is bit for bit what the device would have
// computed against cpuref's reference. Left alone:
//   - moves that enlarge their operands, broadcasts and pads (XLA leaves
//     broadcasts too: fused into its users such a move costs nothing, while its
//     value as a constant would take its full size in device memory);
//   - results or operands over maxFoldBytes (a folded constant is resident in
//     device memory for the executable's life, and cpuref's time is compile time);
//   - tuple results, instructions with side effects, control flow and custom calls.
func FoldConstants(m *hlo.Module, _ Config) (bool, error) {
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if !foldable(in) {
				continue
			}
			lit, err := evalOnConstants(in)
			if err != nil {
				continue // cpuref refuses it (a limit, an op it rejects): leave it to the device
			}
			in.Op, in.Operands, in.Called = hlo.OpConstant, nil, nil
			in.Attrs = hlo.Attributes{Literal: lit}
			changed = true
		}
	}
	return changed, nil
}

// maxFoldBytes bounds the constants folding makes and reads.
const maxFoldBytes = 1 << 20

// foldable: an array-valued, side-effect-free computing instruction whose operands
// are all constants of bounded size, and whose result is bounded too.
func foldable(in *hlo.Instruction) bool {
	switch in.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise, hlo.KindMovement,
		hlo.KindReduction, hlo.KindContraction, hlo.KindSort:
	default:
		return false
	}
	if len(in.Operands) == 0 || !in.SideEffectFree() || !in.Shape.IsArray() || in.Shape.ByteSize() > maxFoldBytes {
		return false
	}
	var operandBytes int64
	for _, op := range in.Operands {
		if op.Op != hlo.OpConstant || op.Shape.ByteSize() > maxFoldBytes {
			return false
		}
		operandBytes += op.Shape.ByteSize()
	}
	// A move that enlarges its operands (broadcast, pad) costs nothing fused into
	// its users, while its value as a constant would take its full size.
	return in.Info().Kind != hlo.KindMovement || in.Shape.ByteSize() <= operandBytes
}

// evalOnConstants is in's value: cpuref on a computation of copies of its constant
// operands and of in itself (the module's instructions keep their IDs).
func evalOnConstants(in *hlo.Instruction) (*hlo.Literal, error) {
	ops := make([]*hlo.Instruction, len(in.Operands))
	for i, op := range in.Operands {
		cp := *op
		ops[i] = &cp
	}
	root := *in
	root.Operands = ops
	c := &hlo.Computation{Name: in.Name + ".fold", Instructions: append(ops, &root), Root: &root}
	c.Renumber()
	return cpuref.EvalComputation(c)
}
