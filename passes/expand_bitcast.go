package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandBitcast lowers each bitcast to the movement its layouts stand for: a
// reshape when operand and result are row-major, otherwise a transpose of the
// operand into memory order, a reshape, and a transpose out of the result's memory
// order (docs/ir.md).
func ExpandBitcast(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpBitcast), hlo.Decompose)
}
