package nn

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// Dense is x·w + bias over x's last dimension: x [..., in], w [in, out], bias
// [out] (nil for none) → [..., out].
func Dense(b *hlo.Builder, x, w, bias X) X {
	last := int64(x.Shape.Rank() - 1)
	y := b.DotGeneral(x, w, hlo.DotDims{LhsContracting: []int64{last}, RhsContracting: []int64{0}})
	if bias == nil {
		return y
	}
	return b.Add(y, broadcastTrailing(b, bias, y))
}

// ReLU is max(x, 0).
func ReLU(b *hlo.Builder, x X) X { return b.Max(x, scalar(b, x, 0)) }

// ReLU6 is min(max(x, 0), 6), MobileNet's activation.
func ReLU6(b *hlo.Builder, x X) X { return b.Clamp(scalar(b, x, 0), x, scalar(b, x, 6)) }

// GELU is the tanh approximation jax.nn.gelu uses by default:
// x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³))).
func GELU(b *hlo.Builder, x X) X {
	cube := b.Mul(b.Mul(x, x), x)
	inner := b.Mul(scalar(b, x, math.Sqrt(2/math.Pi)), b.Add(x, b.Mul(scalar(b, x, 0.044715), cube)))
	return b.Mul(b.Mul(scalar(b, x, 0.5), x), b.Add(scalar(b, x, 1), b.Tanh(inner)))
}

// Softmax over the last dimension, shifted by the row maximum so that exp never
// overflows.
func Softmax(b *hlo.Builder, x X) X {
	e := b.Exp(b.Sub(x, keepLast(b, reduceLast(b, x, hlo.OpMaximum, math.Inf(-1)), x)))
	return b.Div(e, keepLast(b, reduceLast(b, e, hlo.OpAdd, 0), e))
}

// LogSoftmax over the last dimension: x − max − log Σ exp(x − max).
func LogSoftmax(b *hlo.Builder, x X) X {
	shifted := b.Sub(x, keepLast(b, reduceLast(b, x, hlo.OpMaximum, math.Inf(-1)), x))
	lse := b.Log(reduceLast(b, b.Exp(shifted), hlo.OpAdd, 0))
	return b.Sub(shifted, keepLast(b, lse, x))
}

// LayerNorm normalises over the last dimension and applies gamma and beta (both
// [features]): (x − mean) / √(var + eps) · gamma + beta, with the biased variance
// as Flax's LayerNorm.
func LayerNorm(b *hlo.Builder, x, gamma, beta X, eps float64) X {
	centred := b.Sub(x, meanLast(b, x))
	variance := meanLast(b, b.Mul(centred, centred))
	normed := b.Mul(centred, b.Rsqrt(b.Add(variance, scalar(b, x, eps))))
	return b.Add(b.Mul(normed, broadcastTrailing(b, gamma, x)), broadcastTrailing(b, beta, x))
}

// BatchNormInference normalises NHWC (or any [..., C]) x with running statistics:
// (x − mean) / √(var + eps) · scale + offset, every statistic [C].
func BatchNormInference(b *hlo.Builder, x, scale, offset, mean, variance X, eps float64) X {
	inv := b.Rsqrt(b.Add(variance, scalar(b, variance, eps)))
	mul := b.Mul(scale, inv)
	shift := b.Sub(offset, b.Mul(mean, mul))
	return b.Add(b.Mul(x, broadcastTrailing(b, mul, x)), broadcastTrailing(b, shift, x))
}
