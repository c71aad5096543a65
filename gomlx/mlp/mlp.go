// Package mlp is a GoMLX MLP classifier on a synthetic data set, trained with
// GoMLX's trainer, optimizer and training loop on any GoMLX backend: the
// end-to-end example and benchmark of the vkxla backend (cmd/gomlx-mlp runs it
// on vkxla and simplego side by side).
package mlp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX's own style
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/datasets"
	"github.com/gomlx/gomlx/pkg/ml/train"
	"github.com/gomlx/gomlx/pkg/ml/train/losses"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// Config sizes the problem and the model.
type Config struct {
	Examples, Features, Classes, Hidden, Batch, Steps int
	Seed                                              uint64
	LearningRate                                      float64
}

// Default is the example's configuration: 8 overlapping Gaussian blobs in 32
// dimensions, one hidden layer of 256, batches of 256, Adam at 0.003.
var Default = Config{Examples: 4096, Features: 32, Classes: 8, Hidden: 256, Batch: 256, Steps: 100, Seed: 42, LearningRate: 0.003}

// Result is one training run.
type Result struct {
	// Losses is the batch loss after each step.
	Losses []float32
	// StepTimes is each step's wall time (the first ones include compiling).
	StepTimes []time.Duration
	// Context holds the trained variables.
	Context *context.Context
}

// MedianStep is the median step time after the first warm steps.
func (r Result) MedianStep(warm int) time.Duration {
	if len(r.StepTimes) <= warm {
		return 0
	}
	ts := append([]time.Duration(nil), r.StepTimes[warm:]...)
	for i := range ts { // insertion sort: a few hundred values
		for j := i; j > 0 && ts[j] < ts[j-1]; j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts[len(ts)/2]
}

// Data is the synthetic data set: Classes Gaussian blobs (unit variance) around
// centres drawn from N(0, 0.3²), which overlap (no model reaches accuracy 1),
// from Seed; the same on every machine.
func Data(c Config) (x [][]float32, labels [][]int32) {
	r := rand.New(rand.NewPCG(c.Seed, 1))
	centres := make([][]float64, c.Classes)
	for k := range centres {
		centres[k] = make([]float64, c.Features)
		for f := range centres[k] {
			centres[k][f] = 0.3 * r.NormFloat64()
		}
	}
	x, labels = make([][]float32, c.Examples), make([][]int32, c.Examples)
	for i := range x {
		k := i % c.Classes
		x[i] = make([]float32, c.Features)
		for f := range x[i] {
			x[i][f] = float32(centres[k][f] + r.NormFloat64())
		}
		labels[i] = []int32{int32(k)}
	}
	return x, labels
}

// initial is the model's initial weights, from Seed on the host (Glorot-uniform
// weights, zero biases), so that every backend starts from the same point: the
// backends' random generators need not agree bit for bit.
func initial(c Config) map[string]any {
	r := rand.New(rand.NewPCG(c.Seed, 2))
	glorot := func(in, out int) [][]float32 {
		lim := math.Sqrt(6 / float64(in+out))
		w := make([][]float32, in)
		for i := range w {
			w[i] = make([]float32, out)
			for j := range w[i] {
				w[i][j] = float32((2*r.Float64() - 1) * lim)
			}
		}
		return w
	}
	return map[string]any{
		"hidden/weights": glorot(c.Features, c.Hidden), "hidden/biases": make([]float32, c.Hidden),
		"output/weights": glorot(c.Hidden, c.Classes), "output/biases": make([]float32, c.Classes),
	}
}

// dense is x·w + b with the scope's variables (initial made them).
func dense(ctx *context.Context, x *Node) *Node {
	g := x.Graph()
	w := ctx.GetVariable("weights").ValueGraph(g)
	b := ctx.GetVariable("biases").ValueGraph(g)
	return Add(Dot(x, w), ExpandAxes(b, 0))
}

// model is the classifier: dense, ReLU, dense to logits.
func model(ctx *context.Context, _ any, inputs []*Node) []*Node {
	h := Max(dense(ctx.In("hidden"), inputs[0]), ScalarZero(inputs[0].Graph(), inputs[0].DType()))
	return []*Node{dense(ctx.In("output"), h)}
}

// newTrainer makes the context with the initial weights and GoMLX's trainer
// (softmax cross-entropy, Adam).
func newTrainer(backend backends.Backend, c Config) (*context.Context, *train.Trainer) {
	ctx := context.New()
	ctx.SetParam(optimizers.ParamLearningRate, c.LearningRate)
	for name, v := range initial(c) {
		scope, vname := splitName(name)
		ctx.In(scope).VariableWithValue(vname, v)
	}
	return ctx, train.NewTrainer(backend, ctx, model, losses.SparseCategoricalCrossEntropyLogits,
		optimizers.Adam().Done(), nil, nil)
}

// Session steps the trainer on one fixed batch (the first c.Batch examples):
// the benchmarks' train step.
type Session struct {
	trainer        *train.Trainer
	inputs, labels []*tensors.Tensor
}

// NewSession prepares a session on backend.
func NewSession(backend backends.Backend, c Config) *Session {
	x, labels := Data(c)
	_, trainer := newTrainer(backend, c)
	return &Session{trainer: trainer,
		inputs: []*tensors.Tensor{tensors.FromValue(x[:c.Batch])}, labels: []*tensors.Tensor{tensors.FromValue(labels[:c.Batch])}}
}

// Step runs one train step and returns its batch loss.
func (s *Session) Step() (float32, error) {
	metrics, err := s.trainer.TrainStep(nil, s.inputs, s.labels)
	if err != nil {
		return 0, err
	}
	loss, ok := metrics[0].Value().(float32)
	for _, m := range metrics {
		m.MustFinalizeAll()
	}
	if !ok {
		return 0, fmt.Errorf("mlp: loss metric is %s, want a float32 scalar", metrics[0].Shape())
	}
	return loss, nil
}

// Train trains the model for c.Steps steps on backend with GoMLX's training
// loop and returns the loss curve and step times.
func Train(backend backends.Backend, c Config) (Result, error) {
	x, labels := Data(c)
	ctx, trainer := newTrainer(backend, c)
	ds, err := datasets.InMemoryFromData(backend, "blobs", []any{x}, []any{labels})
	if err != nil {
		return Result{}, err
	}
	ds = ds.Infinite(true).BatchSize(c.Batch, true)
	loop := train.NewLoop(trainer)
	var res Result
	last := time.Now()
	loop.OnStep("record", 0, func(_ *train.Loop, metrics []*tensors.Tensor) error {
		now := time.Now()
		res.StepTimes = append(res.StepTimes, now.Sub(last))
		last = now
		loss, ok := metrics[0].Value().(float32)
		if !ok {
			return fmt.Errorf("mlp: loss metric is %s, want a float32 scalar", metrics[0].Shape())
		}
		res.Losses = append(res.Losses, loss)
		return nil
	})
	res.Context = ctx
	_, err = loop.RunSteps(ds, c.Steps)
	return res, err
}

func splitName(name string) (scope, vname string) {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i], name[i+1:]
		}
	}
	return "", name
}

// Accuracy evaluates the model trained in ctx on the whole data set.
func Accuracy(backend backends.Backend, ctx *context.Context, c Config) (float64, error) {
	x, labels := Data(c)
	exec, err := context.NewExec(backend, ctx, func(ctx *context.Context, x *Node) *Node {
		return ArgMax(model(ctx, nil, []*Node{x})[0], -1, dtypes.Int32)
	})
	if err != nil {
		return 0, err
	}
	out, err := exec.Exec(x)
	if err != nil {
		return 0, err
	}
	pred := out[0].Value().([]int32)
	right := 0
	for i, p := range pred {
		if p == labels[i][0] {
			right++
		}
	}
	return float64(right) / float64(len(pred)), nil
}
