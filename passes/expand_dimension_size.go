package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandDimensionSizes replaces each get-dimension-size by an s32 constant: shapes
// are static, so the size is known here.
func ExpandDimensionSizes(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpGetDimensionSize), hlo.Decompose)
}
