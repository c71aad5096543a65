package train

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// Optimizer is an update rule applied to each parameter in the step module.
type Optimizer interface {
	// Slots names the state tensors the rule keeps per parameter, each shaped like
	// the parameter (zeros before the first step).
	Slots() []string
	// Update returns the parameter's new value and its new state (in Slots order)
	// from the gradient, the state and the 1-based step number t (a scalar).
	Update(b *hlo.Builder, param, grad nn.X, state []nn.X, t nn.X) (nn.X, []nn.X)
}

// SGD is gradient descent with momentum (nn.SGDMomentum: v' = μ·v + g,
// p' = p − lr·v'); Momentum 0 is plain SGD, whose velocity output is the gradient.
type SGD struct{ LR, Momentum float64 }

// Slots is the velocity.
func (SGD) Slots() []string { return []string{"velocity"} }

// Update is one SGD step.
func (o SGD) Update(b *hlo.Builder, param, grad nn.X, state []nn.X, _ nn.X) (nn.X, []nn.X) {
	p, v := nn.SGDMomentum(b, param, grad, state[0], o.LR, o.Momentum)
	return p, []nn.X{v}
}

// Adam is Adam, or AdamW with a WeightDecay (nn.Adam).
type Adam struct{ nn.AdamConfig }

// Slots are the first and second moments.
func (Adam) Slots() []string { return []string{"m", "v"} }

// Update is one Adam(W) step.
func (o Adam) Update(b *hlo.Builder, param, grad nn.X, state []nn.X, t nn.X) (nn.X, []nn.X) {
	p, m, v := nn.Adam(b, param, grad, state[0], state[1], t, o.AdamConfig)
	return p, []nn.X{m, v}
}
