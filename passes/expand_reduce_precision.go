package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandReducePrecision lowers reduce-precision to integer ops on the float's bits
// (hlo.Decompose): round to nearest even at mantissa_bits, then overflow to ±inf and
// flush to ±0 outside exponent_bits' range; NaN stays NaN.
func ExpandReducePrecision(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpReducePrecision), hlo.Decompose)
}
