package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandMulHi lowers mulhi to a product in the 64-bit type (types up to 32 bits) or to 32-bit limb products (64-bit types).
func ExpandMulHi(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpMulHi), hlo.Decompose)
}
