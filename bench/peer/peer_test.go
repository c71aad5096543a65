// Package peer checks vkxla's gradients against another Go ML framework, GoMLX
// v0.26.0 with its pure-Go backend (simplego): the same MLP loss, differentiated
// by autodiff.Grad (run on the Vulkan device) and by GoMLX's graph.Gradient.
// It is its own module so that the main module gains no dependency; run it with
// `make peer`.
package peer

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// The MLP: sizes[0] features → hidden layers with ReLU → sizes[last] classes,
// softmax cross-entropy averaged over the batch.
var (
	sizes = []int64{64, 128, 128, 10}
	batch = int64(256)
)

// problem is the model, its gradient module and the inputs (parameters, then
// x and labels).
type problem struct {
	model  train.Model
	grad   *hlo.Module
	inputs []*hlo.Literal
}

func newProblem(t testing.TB) problem {
	model := train.MLP("mlp", hlo.F32, batch, sizes...)
	loss, err := model.LossModule()
	if err != nil {
		t.Fatal(err)
	}
	wrt := make([]int, len(model.Params))
	for i := range wrt {
		wrt[i] = i
	}
	grad, err := autodiff.Grad(loss, wrt, nil)
	if err != nil {
		t.Fatal(err)
	}
	step, err := train.Build(model, train.SGD{})
	if err != nil {
		t.Fatal(err)
	}
	x, labels := train.Blobs(1, hlo.F32, batch, sizes[0], sizes[len(sizes)-1], 1)
	return problem{model: model, grad: grad, inputs: append(step.Init(2)[:len(model.Params)], x, labels)}
}

// gomlxGradient is the same loss in GoMLX: inputs are the parameters (w0, b0,
// w1, b1, …), x and labels; outputs the gradients of every parameter.
func gomlxGradient(in []*graph.Node) []*graph.Node {
	params, x, labels := in[:len(in)-2], in[len(in)-2], in[len(in)-1]
	h := x
	for i := 0; i < len(params); i += 2 {
		h = graph.Add(graph.MatMul(h, params[i]), graph.ExpandAxes(params[i+1], 0))
		if i+2 < len(params) {
			h = graph.Max(h, graph.ZerosLike(h))
		}
	}
	perExample := graph.ReduceSum(graph.Mul(labels, graph.LogSoftmax(h, -1)), -1)
	loss := graph.Neg(graph.ReduceAllMean(perExample))
	return graph.Gradient(loss, params...)
}

func toTensor(l *hlo.Literal) *tensors.Tensor {
	data := make([]float32, l.NumElements())
	for i := range data {
		data[i] = float32(l.Float64(i))
	}
	dims := make([]int, len(l.Shape().Dims))
	for i, d := range l.Shape().Dims {
		dims[i] = int(d)
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

// side is one framework's gradient function, ready to run.
type side struct {
	name string
	run  func() ([][]float32, error)
}

func vkxlaSide(t testing.TB, p problem) side {
	rt, err := vkxla.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := rt.Compile(context.Background(), p.grad)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exe.Close(); err != nil {
			t.Error(err)
		}
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return side{name: fmt.Sprintf("vkxla on %v", rt.Device()), run: func() ([][]float32, error) {
		out, err := exe.Run(context.Background(), p.inputs...)
		if err != nil {
			return nil, err
		}
		vals := make([][]float32, len(out))
		for i, o := range out {
			if vals[i], err = hlo.Values[float32](o); err != nil {
				return nil, err
			}
		}
		return vals, nil
	}}
}

func gomlxSide(t testing.TB, p problem) side {
	backend, err := NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	exec, err := graph.NewExec(backend, gomlxGradient)
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(p.inputs))
	for i, l := range p.inputs {
		args[i] = toTensor(l)
	}
	return side{name: "GoMLX v0.26.0 simplego", run: func() ([][]float32, error) {
		out, err := exec.Exec(args...)
		if err != nil {
			return nil, err
		}
		vals := make([][]float32, len(out))
		for i, o := range out {
			if vals[i], err = tensors.CopyFlatData[float32](o); err != nil {
				return nil, err
			}
		}
		return vals, nil
	}}
}

// TestMLPGradientMatchesGoMLX: every gradient element agrees within the grad
// module's program tolerance; the best time of a few runs of each (after a
// first, compiling run) is reported side by side.
func TestMLPGradientMatchesGoMLX(t *testing.T) {
	p := newProblem(t)
	sides := []side{vkxlaSide(t, p), gomlxSide(t, p)}
	results := make([][][]float32, len(sides))
	for i, s := range sides {
		var err error
		if results[i], err = s.run(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	spec := vkxla.ProgramTolerance(p.grad, hlo.F32)
	var maxDiff, maxGrad float64
	for k, param := range p.model.Params {
		got, want := results[0][k], results[1][k]
		if len(got) != len(want) {
			t.Fatalf("%s: %d gradient values from vkxla, %d from GoMLX", param.Name, len(got), len(want))
		}
		for i := range got {
			maxDiff, maxGrad = max(maxDiff, abs(float64(got[i]-want[i]))), max(maxGrad, abs(float64(want[i])))
			if d := float64(got[i] - want[i]); d > spec.Abs+spec.Rel*abs(float64(want[i])) || -d > spec.Abs+spec.Rel*abs(float64(want[i])) {
				t.Fatalf("d loss / d %s[%d]: vkxla %g, GoMLX %g (tolerance %+v)", param.Name, i, got[i], want[i], spec)
			}
		}
	}
	t.Logf("MLP %v, batch %d: gradients of %d parameters agree within |d| ≤ %.2g + %.2g·|GoMLX|; largest |d| %.2g, largest |gradient| %.2g",
		sizes, batch, len(p.model.Params), spec.Abs, spec.Rel, maxDiff, maxGrad)
	for _, s := range sides {
		best := time.Duration(1 << 62)
		for range 5 {
			start := time.Now()
			if _, err := s.run(); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		t.Logf("%-60s best of 5: %v per gradient (wall, inputs uploaded and gradients read back)", s.name, best)
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}
