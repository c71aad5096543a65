package gomlx_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TestBERTLayerAgreesWithModelSuite: the encoder layer written in GoMLX, run on
// the vkxla backend, gives the model suite's layer (hlo/nn, on cpuref) on the same
// inputs — so the benchmark below compares one model written two ways. The
// outputs are layernormed (order 1): 1e-4 absolute covers f32 reassociation.
func TestBERTLayerAgreesWithModelSuite(t *testing.T) {
	s := bertSmall
	ps := bertParams(s)
	outs, want := bothPrograms(t, ps, 3, bertGoMLX(s.heads), func() (*hlo.Module, error) { return bertModule(s) })
	if err := agree(tensors.MustCopyFlatData[float32](outs[0]), want, 1e-4); err != nil {
		t.Fatal(err)
	}
}

// TestBERTLayerGradientsAgreeWithModelSuite: the layer's gradients by GoMLX's
// graph.Gradient, run on the vkxla backend, give autodiff.VJP of the model
// suite's layer on cpuref, output and every parameter's gradient (within 1e-3 of
// each gradient's largest magnitude: the layernorms' backward passes cancel; and
// 1e-6 absolute for dk.bias, zero by symmetry — softmax ignores a shift of every
// score of a query — where cpuref's VJP gives 0 and GoMLX's the residue of its
// sums, 1e-8).
func TestBERTLayerGradientsAgreeWithModelSuite(t *testing.T) {
	s := bertSmall
	ps := bertGradParams(s)
	outs, want := bothPrograms(t, ps, 3, bertGradGoMLX(s.heads), func() (*hlo.Module, error) { return bertVJPModule(s) })
	if len(outs) != len(want.Elems()) {
		t.Fatalf("%d outputs, want %d", len(outs), len(want.Elems()))
	}
	for i, w := range want.Elems() {
		name := "output"
		if i > 0 {
			name = "d" + ps[i-1].name
		}
		if err := agree(tensors.MustCopyFlatData[float32](outs[i]), w, 1e-3*maxAbs(w)+1e-6); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// agree reports the first element of got more than tol from want's.
func agree(got []float32, want *hlo.Literal, tol float64) error {
	if len(got) != want.NumElements() {
		return fmt.Errorf("%d elements, want %d", len(got), want.NumElements())
	}
	for i, g := range got {
		if w := want.Float64(i); !(math.Abs(float64(g)-w) <= tol) {
			return fmt.Errorf("element %d = %g, the model suite's program gives %g (tolerance %g)", i, g, w, tol)
		}
	}
	return nil
}

func maxAbs(l *hlo.Literal) float64 {
	m := 0.0
	for i := range l.NumElements() {
		m = max(m, math.Abs(l.Float64(i)))
	}
	return m
}

// BenchmarkBERTLayerForward: the encoder layer at bertMedium's sizes; see
// benchModelSuite.
func BenchmarkBERTLayerForward(b *testing.B) {
	s := bertMedium
	benchModelSuite(b, bertParams(s), func(in []*graph.Node) []*graph.Node { return []*graph.Node{bertGoMLX(s.heads)(in)} },
		func() (*hlo.Module, error) { return bertModule(s) }, true)
}

// BenchmarkBERTLayerGradient: the layer's output and the gradients of every
// parameter (GoMLX's graph.Gradient against autodiff.VJP of the model suite's
// layer); see benchModelSuite.
func BenchmarkBERTLayerGradient(b *testing.B) {
	s := bertMedium
	benchModelSuite(b, bertGradParams(s), bertGradGoMLX(s.heads), func() (*hlo.Module, error) { return bertVJPModule(s) }, true)
}

// benchModelSuite times one model written in GoMLX through the vkxla backend
// ("gomlx-vkxla"); the very module the backend built, through RunOnDevice on the
// same device tensors ("vkxla-api": the backend path's overhead); the model
// suite's program of the same model through vkxla's API ("model-suite": GoMLX's
// program against ours); and, with simplego, GoMLX on simplego. Both programs
// take the parameters ps.
func benchModelSuite(b *testing.B, ps []param, fn func([]*graph.Node) []*graph.Node, suite func() (*hlo.Module, error), simplego bool) {
	vk, sg := openBackends(b)
	values := inputValues(ps, 3)
	inputs := gomlxTensors(ps, values)
	ev := graph.MustNewExec(vk, fn)
	if _, err := ev.Exec(inputs...); err != nil {
		b.Fatal(err)
	}
	api := sameModule(b, vk, inputs)
	m, err := suite()
	if err != nil {
		b.Fatal(err)
	}
	ours := moduleRun(b, vk.Runtime(), m, literals(ps, values))
	names := []string{"gomlx-vkxla", "vkxla-api", "model-suite"}
	steps := []func() error{execRun(ev, inputs), api, ours}
	if simplego {
		names = append(names, "gomlx-simplego")
		steps = append(steps, execRun(graph.MustNewExec(sg, fn), gomlxTensors(ps, values)))
	}
	ts := interleave(b, names, steps)
	b.ReportMetric(ts.ratio(0, 1), "gomlx-vkxla/vkxla-api")
	b.ReportMetric(ts.ratio(0, 2), "gomlx-vkxla/model-suite")
	if simplego {
		b.ReportMetric(ts.ratio(3, 0), "simplego/gomlx-vkxla")
	}
}

// moduleRun compiles m and returns a step that runs it on inputs uploaded once.
func moduleRun(b *testing.B, rt *vkxla.Runtime, m *hlo.Module, inputs []*hlo.Literal) func() error {
	exe, err := rt.Compile(context.Background(), m)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = exe.Close() })
	var args []any
	for _, lit := range inputs {
		t, err := rt.Upload(context.Background(), lit)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = t.Close() })
		args = append(args, t)
	}
	return runAndClose(exe, args)
}
