package passes

import (
	"crypto/sha256"
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// CSE merges instructions that compute the same value: the same opcode, shape,
// attributes, called computations and (already merged) operands, as XLA's
// HloCSE does. Frontend dumps repeat broadcasts, converts and whole
// subexpressions; each copy would otherwise cost a kernel or a buffer. Every
// instruction but a parameter and one with side effects (Instruction.SideEffectFree)
// may merge; constants merge when their bytes are equal (hashed, never printed: a constant
// can be hundreds of megabytes).
func CSE(m *hlo.Module, _ Config) (bool, error) {
	return anyComputation(m, mergeEqualInstructions), nil
}

// mergeEqualInstructions keeps the first of each set of equal instructions and
// points every use of the others at it.
func mergeEqualInstructions(c *hlo.Computation) bool {
	first := map[string]*hlo.Instruction{}
	return rewriteInOrder(c, func(in *hlo.Instruction) (*hlo.Instruction, bool) {
		key, ok := cseKey(in)
		if !ok {
			return nil, false
		}
		if prev, seen := first[key]; seen {
			return prev, false
		}
		first[key] = in
		return nil, false
	})
}

// cseKey is the instruction's printed form without its own name: operands and
// called computations print by their (unique) names, attributes in full. A
// constant's key is its shape and a hash of its bytes. Parameters, opt-barriers,
// tuple constants and instructions with side effects have no key.
func cseKey(in *hlo.Instruction) (string, bool) {
	if !in.SideEffectFree() {
		return "", false
	}
	switch in.Op {
	case hlo.OpParameter, hlo.OpOptBarrier: // each barrier fences its own program point
		return "", false
	case hlo.OpConstant:
		lit := in.Attrs.Literal
		if lit == nil || lit.Shape().IsTuple() {
			return "", false
		}
		sum := sha256.Sum256(lit.Bytes())
		return "constant " + lit.Shape().String() + " " + string(sum[:]), true
	}
	text := in.String()
	_, body, _ := strings.Cut(text, " = ")
	return body, true
}
