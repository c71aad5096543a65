package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandCholesky lowers cholesky to a column-by-column loop (dynamic-slice, dot, sqrt, dynamic-update-slice); a NaN on the factor's diagonal makes the matrix NaN.
func ExpandCholesky(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpCholesky), hlo.Decompose)
}
