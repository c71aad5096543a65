package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandTriangularSolve lowers triangular-solve to forward substitution in a while loop (one row per iteration: dynamic-slice, dot, dynamic-update-slice), every variant reduced to the lower, left, untransposed one by transposes and reversals.
func ExpandTriangularSolve(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpTriangularSolve), hlo.Decompose)
}
