package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandTopK lowers topk to a stable sort of (x, iota) along the last dimension and two slices (XLA's TopkDecomposer), as the TopK custom-call.
func ExpandTopK(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpTopK), hlo.Decompose)
}
