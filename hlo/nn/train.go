package nn

import "github.com/vkxla/vkxla/hlo"

// SoftmaxCrossEntropy is the mean over the batch of −Σ labels · log softmax(logits),
// for logits and labels [B, classes] (labels one-hot or any distribution).
func SoftmaxCrossEntropy(b *hlo.Builder, logits, labels X) X {
	perExample := reduceLast(b, b.Mul(labels, LogSoftmax(b, logits)), hlo.OpAdd, 0)
	dt := perExample.Shape.DType
	total := b.Reduce([]X{perExample}, []X{b.ScalarConstant(dt, 0)}, b.Reducer(hlo.OpAdd, dt), []int64{0})
	return b.Div(b.Negate(total), b.ScalarConstant(dt, float64(logits.Shape.Dims[0])))
}

// SGDMomentum is one step of SGD with momentum in the form PyTorch and optax's
// trace use: v' = momentum·v + g, p' = p − lr·v'. It returns p' and v'.
func SGDMomentum(b *hlo.Builder, param, grad, velocity X, lr, momentum float64) (X, X) {
	v := b.Add(b.Mul(scalar(b, velocity, momentum), velocity), grad)
	return b.Sub(param, b.Mul(scalar(b, v, lr), v)), v
}

// AdamConfig are Adam's hyperparameters; WeightDecay > 0 makes it AdamW
// (decoupled decay, as optax.adamw: the decay is added to the update, not to the
// gradient).
type AdamConfig struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
}

// DefaultAdam is optax.adam's defaults at a learning rate of 1e-3.
var DefaultAdam = AdamConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}

// Adam is one Adam(W) step for one tensor: m' = β1·m + (1−β1)·g,
// v' = β2·v + (1−β2)·g², p' = p − lr·(m̂/(√v̂ + eps) + wd·p) with m̂ = m'/(1−β1^t)
// and v̂ = v'/(1−β2^t). step is t, the 1-based step number, as an f32 (or the
// parameter's type) scalar. It returns p', m', v'.
func Adam(b *hlo.Builder, param, grad, m, v, step X, c AdamConfig) (X, X, X) {
	m2 := b.Add(b.Mul(scalar(b, m, c.Beta1), m), b.Mul(scalar(b, grad, 1-c.Beta1), grad))
	v2 := b.Add(b.Mul(scalar(b, v, c.Beta2), v), b.Mul(scalar(b, grad, 1-c.Beta2), b.Mul(grad, grad)))
	mHat := b.Div(m2, biasCorrection(b, step, c.Beta1, m2))
	vHat := b.Div(v2, biasCorrection(b, step, c.Beta2, v2))
	update := b.Div(mHat, b.Add(b.Sqrt(vHat), scalar(b, vHat, c.Eps)))
	if c.WeightDecay > 0 {
		update = b.Add(update, b.Mul(scalar(b, param, c.WeightDecay), param))
	}
	return b.Sub(param, b.Mul(scalar(b, update, c.LR), update)), m2, v2
}

// biasCorrection is 1 − beta^step, broadcast to like's shape.
func biasCorrection(b *hlo.Builder, step X, beta float64, like X) X {
	dt := step.Shape.DType
	power := b.Pow(b.ScalarConstant(dt, beta), step)
	return b.BroadcastScalar(b.Sub(b.ScalarConstant(dt, 1), power), like.Shape.Dims...)
}
