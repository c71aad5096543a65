package gomlx_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla"
	vkgomlx "github.com/vkxla/vkxla/gomlx"
	"github.com/vkxla/vkxla/gomlx/mlp"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// The benchmarks time, in one process and interleaved step by step, a program
// written in GoMLX run through the vkxla backend, the same work through vkxla's
// own API, and the GoMLX program on simplego; they report each one's time per
// step and the ratios (docs/gomlx.md records them).

func openBackends(b *testing.B) (*vkgomlx.Backend, backends.Backend) {
	b.Helper()
	vk, err := vkgomlx.NewWithConfig(vkgomlx.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = vk.Close() })
	sg, err := simplego.New("")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sg.Finalize)
	return vk, sg
}

// interleave runs each step function once per iteration, in turn (the order
// rotates from one iteration to the next, so that none always follows the same
// one: a step after simplego's CPU-bound step runs on a busier, colder CPU),
// after warm untimed rounds, and reports each one's median time per step in ms
// (the host is shared: a median resists the steps another process slowed). Use an
// iteration count that is a multiple of the step count, so that each step follows
// each other equally often.
func interleave(b *testing.B, names []string, steps []func() error) stepTimes {
	b.Helper()
	for range 3 {
		for i, f := range steps {
			if err := f(); err != nil {
				b.Fatalf("%s: %v", names[i], err)
			}
		}
	}
	times := make(stepTimes, len(steps))
	b.ResetTimer()
	for n := range b.N {
		for k := range steps {
			i := (n + k) % len(steps)
			// Each step starts on a collected heap: simplego's garbage would
			// otherwise be collected (by assists and background workers on
			// both cores) during whichever step follows it.
			runtime.GC()
			start := time.Now()
			if err := steps[i](); err != nil {
				b.Fatalf("%s: %v", names[i], err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	for i := range steps {
		b.ReportMetric(times.ms(i), names[i]+"-ms/step")
	}
	return times
}

// stepTimes are interleave's times: [step][iteration].
type stepTimes [][]time.Duration

// ms is step i's median time in ms.
func (t stepTimes) ms(i int) float64 {
	ts := slices.Clone(t[i])
	slices.Sort(ts)
	return ts[len(ts)/2].Seconds() * 1e3
}

// ratio is the median over iterations of step i's time over step j's in the
// same iteration, which ran next to it: a load that comes and goes between
// iterations slows both of a pair, so the paired ratio moves less than the
// ratio of the two medians does.
func (t stepTimes) ratio(i, j int) float64 {
	rs := make([]float64, len(t[i]))
	for n := range rs {
		rs[n] = t[i][n].Seconds() / t[j][n].Seconds()
	}
	slices.Sort(rs)
	return rs[len(rs)/2]
}

// BenchmarkMLPTrainStep: one Adam step of the MLP (mlp.Default: 32 → 256 → 8,
// batch 256). "gomlx-vkxla" is GoMLX's trainer on the vkxla backend; "vkxla-api"
// the model suite's program of the same model and optimizer
// (hlo/nn/train.Build, as bench/models.go's MLP training step), run with its
// parameters and state donated and fed back; "gomlx-simplego" GoMLX's trainer
// on simplego.
func BenchmarkMLPTrainStep(b *testing.B) {
	vk, sg := openBackends(b)
	c := mlp.Default
	gv, gs := mlp.NewSession(vk, c), mlp.NewSession(sg, c)
	native, err := newNativeStep(vk.Runtime(), c)
	if err != nil {
		b.Fatal(err)
	}
	defer native.close()
	step := func(s *mlp.Session) func() error { return func() error { _, err := s.Step(); return err } }
	ts := interleave(b, []string{"gomlx-vkxla", "vkxla-api", "gomlx-simplego"}, []func() error{step(gv), native.step, step(gs)})
	b.ReportMetric(ts.ratio(0, 1), "gomlx-vkxla/vkxla-api")
	b.ReportMetric(ts.ratio(2, 0), "simplego/gomlx-vkxla")
}

// nativeStep is the model suite's MLP Adam step through vkxla's API.
type nativeStep struct {
	exe     *vkxla.Executable
	state   []*vkxla.DeviceTensor // parameters, optimizer state, t: donated, replaced
	batch   []*vkxla.DeviceTensor
	updated int
}

func newNativeStep(rt *vkxla.Runtime, c mlp.Config) (*nativeStep, error) {
	model := train.MLP("mlp", hlo.F32, int64(c.Batch), int64(c.Features), int64(c.Hidden), int64(c.Classes))
	st, err := train.Build(model, train.Adam{AdamConfig: nn.DefaultAdam})
	if err != nil {
		return nil, err
	}
	donate := make([]int, st.Updated)
	for i := range donate {
		donate[i] = i
	}
	n := &nativeStep{updated: st.Updated}
	if n.exe, err = rt.Compile(context.Background(), st.Module, vkxla.WithDonation(donate...)); err != nil {
		return nil, err
	}
	x, labels := train.Blobs(5, hlo.F32, int64(c.Batch), int64(c.Features), int64(c.Classes), 0.5)
	for i, lit := range append(st.Init(6), x, labels) {
		t, err := rt.Upload(context.Background(), lit)
		if err != nil {
			return nil, err
		}
		if i < st.Updated {
			n.state = append(n.state, t)
		} else {
			n.batch = append(n.batch, t)
		}
	}
	return n, nil
}

func (n *nativeStep) step() error {
	args := make([]any, 0, len(n.state)+len(n.batch))
	for _, t := range append(append([]*vkxla.DeviceTensor{}, n.state...), n.batch...) {
		args = append(args, t)
	}
	outs, err := n.exe.RunOnDevice(context.Background(), args...)
	if err != nil {
		return err
	}
	copy(n.state, outs[1:1+n.updated]) // output k+1 replaces input k
	return outs[0].Close()             // the loss
}

func (n *nativeStep) close() {
	for _, t := range append(n.state, n.batch...) {
		_ = t.Close()
	}
	_ = n.exe.Close()
}

// BenchmarkMLPForward: the MLP's forward pass (mlp.Default sizes) written in
// GoMLX; see benchForward.
func BenchmarkMLPForward(b *testing.B) {
	c := mlp.Default
	x, _ := mlp.Data(c)
	forward := func(x, w1, b1, w2, b2 *graph.Node) *graph.Node {
		h := graph.Max(graph.Add(graph.Dot(x, w1), graph.ExpandAxes(b1, 0)), graph.ScalarZero(x.Graph(), x.DType()))
		return graph.Add(graph.Dot(h, w2), graph.ExpandAxes(b2, 0))
	}
	benchForward(b, forward, func() []any {
		return []any{tensors.FromValue(x[:c.Batch]),
			tensors.FromShape(shapeF32(c.Features, c.Hidden)), tensors.FromShape(shapeF32(c.Hidden)),
			tensors.FromShape(shapeF32(c.Hidden, c.Classes)), tensors.FromShape(shapeF32(c.Classes))}
	})
}

// BenchmarkCNNForward: a small CNN's forward pass in GoMLX (batch 8 of 32×32×3,
// 3×3 convolutions to 16 and 32 channels with ReLU and 2×2 max pools, a dense
// layer to 10); see benchForward. Strides are explicit: simplego fails on
// GoMLX's default (empty) strides.
func BenchmarkCNNForward(b *testing.B) {
	forward := func(x, k1, k2, w *graph.Node) *graph.Node {
		relu := func(x *graph.Node) *graph.Node { return graph.Max(x, graph.ScalarZero(x.Graph(), x.DType())) }
		h := graph.MaxPool(relu(graph.Convolve(x, k1).Strides(1).PadSame().Done())).Window(2).Done()
		h = graph.MaxPool(relu(graph.Convolve(h, k2).Strides(1).PadSame().Done())).Window(2).Done()
		return graph.Dot(graph.Reshape(h, 8, -1), w)
	}
	benchForward(b, forward, func() []any {
		return []any{tensors.FromShape(shapeF32(8, 32, 32, 3)), tensors.FromShape(shapeF32(3, 3, 3, 16)),
			tensors.FromShape(shapeF32(3, 3, 16, 32)), tensors.FromShape(shapeF32(8*8*32, 10))}
	})
}

// benchForward times a forward graph: graph.Exec on the vkxla backend
// ("gomlx-vkxla"), the very HLO module the backend built run with vkxla's
// RunOnDevice on the same device tensors ("vkxla-api": the backend path's
// overhead is the ratio), and graph.Exec on simplego. newInputs makes one set of
// inputs per backend (a GoMLX tensor lives on one); zeros serve, as the timing
// does not depend on the values.
func benchForward(b *testing.B, forward any, newInputs func() []any) {
	vk, sg := openBackends(b)
	inputs, sgInputs := newInputs(), newInputs()
	ev := graph.MustNewExecAny(vk, forward)
	if _, err := ev.Exec(inputs...); err != nil {
		b.Fatal(err)
	}
	api := sameModule(b, vk, inputs)
	es := graph.MustNewExecAny(sg, forward)
	ts := interleave(b, []string{"gomlx-vkxla", "vkxla-api", "gomlx-simplego"}, []func() error{execRun(ev, inputs), api, execRun(es, sgInputs)})
	b.ReportMetric(ts.ratio(0, 1), "gomlx-vkxla/vkxla-api")
	b.ReportMetric(ts.ratio(2, 0), "simplego/gomlx-vkxla")
}

// sameModule returns a step that runs the module the backend compiled last with
// vkxla's RunOnDevice, on the device tensors behind inputs (GoMLX tensors that
// have run on vk).
func sameModule(b *testing.B, vk *vkgomlx.Backend, inputs []any) func() error {
	b.Helper()
	vx, err := vk.LastCompiled().VKXLA()
	if err != nil {
		b.Fatal(err)
	}
	var args []any
	for _, in := range inputs {
		buf, err := in.(*tensors.Tensor).Buffer(vk, 0)
		if err != nil {
			b.Fatal(err)
		}
		args = append(args, buf.(*vkgomlx.Buffer).Tensor())
	}
	return runAndClose(vx, args)
}

// execRun returns a step that runs e on inputs and frees its outputs.
func execRun(e *graph.Exec, inputs []any) func() error {
	return func() error {
		outs, err := e.Exec(inputs...)
		for _, o := range outs {
			o.MustFinalizeAll()
		}
		return err
	}
}

// runAndClose returns a step that runs exe on device-resident args and closes
// its outputs.
func runAndClose(exe *vkxla.Executable, args []any) func() error {
	return func() error {
		outs, err := exe.RunOnDevice(context.Background(), args...)
		for _, o := range outs {
			_ = o.Close()
		}
		return err
	}
}

func shapeF32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
