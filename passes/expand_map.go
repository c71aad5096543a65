package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandMap inlines each map's scalar computation over whole arrays (XLA's MapInliner): parameters become the operands, constants are broadcast, elementwise ops are re-emitted on arrays.
func ExpandMap(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpMap), hlo.Decompose)
}
