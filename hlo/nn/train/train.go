// Package train assembles a whole training step as one HLO module: the forward
// loss of a model over named parameters, its gradient (autodiff.ValueAndGrad) and
// an optimizer's update, so that one executable runs a step. It holds the models
// (an MLP, a transformer-block language model, a small conv net), the optimizers
// (SGD with momentum, Adam/AdamW) and a synthetic data set; it builds modules and
// literals only (no device), so cmd/vkxla, bench and the tests share it.
package train

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// ErrInvalidModel is wrapped by the errors for a model Build cannot assemble: no
// parameters, a non-array tensor, a loss that is not a floating-point scalar.
var ErrInvalidModel = errors.New("invalid model")

// Tensor is one named input of a model: a parameter or a batch tensor.
type Tensor struct {
	Name  string
	Shape hlo.Shape
	// Init is how Init fills a parameter: Const + Scale·u with u uniform in
	// [-1, 1) (zeros by default). Batch tensors ignore it.
	Init Init
}

// Init is a parameter's initial distribution: Const + Scale·uniform(-1, 1).
type Init struct{ Const, Scale float64 }

// Model is a loss over named parameters and a batch.
type Model struct {
	Name   string
	Params []Tensor
	Batch  []Tensor
	// Loss adds the scalar loss to b from the parameters and the batch tensors
	// (in the order of Params and Batch).
	Loss func(b *hlo.Builder, params, batch []nn.X) nn.X
}

// LossModule is the model's loss as a module: (params…, batch…) → loss.
func (m Model) LossModule() (*hlo.Module, error) {
	if len(m.Params) == 0 {
		return nil, fmt.Errorf("train: model %q has no parameters: %w", m.Name, ErrInvalidModel)
	}
	b := hlo.NewBuilder(m.Name + ".loss")
	params := parameters(b, m.Params)
	loss := m.Loss(b, params, parameters(b, m.Batch))
	if err := b.Err(); err != nil {
		return nil, fmt.Errorf("train: model %q: %w", m.Name, err)
	}
	if !loss.Shape.IsScalar() || !loss.Shape.DType.IsFloat() {
		return nil, fmt.Errorf("train: model %q: the loss is %v, not a floating-point scalar: %w", m.Name, loss.Shape, ErrInvalidModel)
	}
	mod, err := b.Build(loss)
	if err != nil {
		return nil, fmt.Errorf("train: model %q: %w", m.Name, err)
	}
	return mod, nil
}

func parameters(b *hlo.Builder, ts []Tensor) []nn.X {
	xs := make([]nn.X, len(ts))
	for i, t := range ts {
		xs[i] = b.Parameter(t.Shape, t.Name)
	}
	return xs
}

// Step is a training step's module and the meaning of its inputs and outputs.
//
// Inputs, in order: the parameters, the optimizer state (for each parameter, each
// of the optimizer's slots, shaped like it), the step number t (a scalar of the
// parameters' type: 1 for the first update), then the batch. Outputs: a flat
// tuple (loss, parameters', state', t+1). Output k+1 replaces input k for every
// k < Updated: a caller feeds them back as the next step's inputs, and Donating's
// module lets the runtime write them in place.
type Step struct {
	Module *hlo.Module
	Model  Model
	// State names the state inputs ("<param>.<slot>"), in order.
	State []Tensor
	// Updated counts the inputs that the step replaces: parameters, state and t.
	Updated int
}

// Build assembles one training step of model under opt as one module.
func Build(model Model, opt Optimizer) (*Step, error) { return build(model, opt, 1) }

// BuildDataParallel is the step of one of replicas devices training together on
// a batch split between them: model's batch tensors are one device's shard. The
// step all-reduces the loss and the gradients (one all-reduce of all of them,
// replica_groups over every replica) and divides them by replicas before the
// update, so that with a loss that is a mean over its batch (every Model here)
// each device takes the step one device takes on the whole batch, and every
// device's parameters stay equal. Run it with vkxla.CompileReplicated or
// vkxla.CompileDistributed on replicas devices.
func BuildDataParallel(model Model, opt Optimizer, replicas int) (*Step, error) {
	if replicas < 1 {
		return nil, fmt.Errorf("train: model %q: %d replicas: %w", model.Name, replicas, ErrInvalidModel)
	}
	return build(model, opt, replicas)
}

func build(model Model, opt Optimizer, replicas int) (*Step, error) {
	lossMod, err := model.LossModule()
	if err != nil {
		return nil, err
	}
	np := len(model.Params)
	wrt := make([]int, np)
	for i := range wrt {
		wrt[i] = i
	}
	vg, err := autodiff.ValueAndGrad(lossMod, wrt, nil)
	if err != nil {
		return nil, fmt.Errorf("train: model %q: %w", model.Name, err)
	}
	dt := model.Params[0].Shape.DType
	step := &Step{Model: model, Updated: np + np*len(opt.Slots()) + 1}
	for _, p := range model.Params {
		for _, s := range opt.Slots() {
			step.State = append(step.State, Tensor{Name: p.Name + "." + s, Shape: p.Shape})
		}
	}
	b := hlo.NewBuilder(model.Name + ".step")
	params := parameters(b, model.Params)
	state := parameters(b, step.State)
	t := b.Parameter(hlo.Scalar(dt), "step")
	batch := parameters(b, model.Batch)
	// The value-and-grad entry is inlined: the passes see one flat graph (no call
	// to optimise across).
	out := b.Inline(vg.Entry, append(append([]nn.X{}, params...), batch...))
	vals := make([]nn.X, 1+np) // the loss and the gradients
	for i := range vals {
		vals[i] = b.GetTupleElement(out, int64(i))
	}
	if replicas > 1 {
		vals = meanOverReplicas(b, vals, replicas)
	}
	outs := []nn.X{vals[0]}
	var newState []nn.X
	slots := len(opt.Slots())
	for i, p := range params {
		np, ns := opt.Update(b, p, vals[1+i], state[i*slots:(i+1)*slots], t)
		outs = append(outs, np)
		newState = append(newState, ns...)
	}
	outs = append(append(outs, newState...), b.Add(t, b.ScalarConstant(dt, 1)))
	if step.Module, err = b.Build(b.Tuple(outs...)); err != nil {
		return nil, fmt.Errorf("train: model %q: assembling the step: %w", model.Name, err)
	}
	return step, nil
}

// Donating returns the step's module with input_output_alias making output k+1
// must-alias input k for every k < Updated, as jax.jit(step, donate_argnums=…)
// compiles it: the parameters, the optimizer state and t are donated, and each
// update is written over the input it replaces (copied over after the last step
// where the update cannot be written in place). A runtime then holds the weights
// and state once.
func (s *Step) Donating() *hlo.Module {
	m := s.Module.Clone()
	m.InputOutputAlias = make([]hlo.InputOutputAlias, s.Updated)
	for k := range s.Updated {
		m.InputOutputAlias[k] = hlo.InputOutputAlias{Output: []int64{int64(k + 1)}, Param: int64(k), Kind: hlo.MustAlias}
	}
	return m
}

// meanOverReplicas is each value's mean over the replicas: one all-reduce (sum) of
// all of them, each then divided by the count.
func meanOverReplicas(b *hlo.Builder, vals []nn.X, replicas int) []nn.X {
	dt := vals[0].Shape.DType
	group := make([]int64, replicas)
	for i := range group {
		group[i] = int64(i)
	}
	sum := b.Collective(hlo.OpAllReduce, vals, [][]int64{group}, nil, b.Reducer(hlo.OpAdd, dt))
	out := make([]nn.X, len(vals))
	for i, v := range vals {
		s := sum
		if len(vals) > 1 {
			s = b.GetTupleElement(sum, int64(i))
		}
		inv := b.BroadcastScalar(b.ScalarConstant(dt, 1/float64(replicas)), v.Shape.Dims...)
		out[i] = b.Mul(s, inv)
	}
	return out
}
