package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandRng lowers rng as XLA's RngExpander does: a state from
// rng-get-and-update-state, Philox bits through rng-bit-generator, and the bits
// made uniform or normal values (hlo.Decompose; docs/ir.md).
func ExpandRng(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpRng), hlo.Decompose)
}
