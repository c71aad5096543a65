package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// Finite differences, as in the autodiff package's harness: central differences
// in f64 with h = 1e-6 have an error near 1e-10 for losses of order 1, so
// |grad − fd| ≤ 1e-6 + 1e-5·|fd| leaves a wide margin while a wrong gradient
// (errors of order 1) fails.
const (
	fdStep = 1e-6
	fdAtol = 1e-6
	fdRtol = 1e-5
)

// testModels are small f64 instances of every model with a batch to train on.
func testModels() []struct {
	model Model
	batch []*hlo.Literal
} {
	x, y := Blobs(3, hlo.F64, 6, 3, 3, 0.5)
	tok, tgt := OneHotSequences(4, hlo.F64, 2, 4, 5)
	conv := ConvConfig{Batch: 2, Size: 6, Channels: 2, C1: 3, C2: 4, Classes: 3}
	images := Uniform(5, hlo.MakeShape(hlo.F64, 2, 6, 6, 2))
	_, labels := Blobs(6, hlo.F64, 2, 1, 3, 0)
	return []struct {
		model Model
		batch []*hlo.Literal
	}{
		{MLP("mlp", hlo.F64, 6, 3, 5, 4, 3), []*hlo.Literal{x, y}},
		{TransformerLM("lm", hlo.F64, LMConfig{Vocab: 5, Seq: 4, Dim: 4, Heads: 2, Hidden: 8, Batch: 2, Blocks: 2}), []*hlo.Literal{tok, tgt}},
		{ConvNet("convnet", hlo.F64, conv), []*hlo.Literal{images, labels}},
	}
}

// run evaluates the step on cpuref from the given state and batch.
func run(t *testing.T, s *Step, state, batch []*hlo.Literal) []*hlo.Literal {
	t.Helper()
	out, err := cpuref.Eval(s.Module, append(append([]*hlo.Literal{}, state...), batch...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out.Leaves()
}

// TestStepGradientsMatchFiniteDifferences assembles each model's step with plain
// SGD at learning rate 0, whose velocity outputs are the gradients, and checks
// elements of every parameter's gradient against central differences of the
// model's loss.
func TestStepGradientsMatchFiniteDifferences(t *testing.T) {
	for _, c := range testModels() {
		t.Run(c.model.Name, func(t *testing.T) {
			s, err := Build(c.model, SGD{})
			if err != nil {
				t.Fatal(err)
			}
			lossMod, err := c.model.LossModule()
			if err != nil {
				t.Fatal(err)
			}
			state := s.Init(7)
			out := run(t, s, state, c.batch)
			np := len(c.model.Params)
			loss := evalLoss(t, lossMod, state[:np], c.batch)
			if out[0].Float64(0) != loss {
				t.Fatalf("step loss %v, loss module %v", out[0].Float64(0), loss)
			}
			r := rand.New(rand.NewPCG(8, 9))
			for p := range np {
				grad := out[1+np+p] // the velocity of parameter p
				for range 4 {
					i := r.IntN(grad.NumElements())
					fd := centralDifference(t, lossMod, state[:np], c.batch, p, i)
					if g := grad.Float64(i); math.Abs(g-fd) > fdAtol+fdRtol*math.Abs(fd) {
						t.Fatalf("d loss / d %s[%d]: step %g, finite difference %g", c.model.Params[p].Name, i, g, fd)
					}
				}
			}
		})
	}
}

func evalLoss(t *testing.T, m *hlo.Module, params, batch []*hlo.Literal) float64 {
	t.Helper()
	out, err := cpuref.Eval(m, append(append([]*hlo.Literal{}, params...), batch...)...)
	if err != nil {
		t.Fatal(err)
	}
	return out.Float64(0)
}

func centralDifference(t *testing.T, m *hlo.Module, params, batch []*hlo.Literal, p, i int) float64 {
	at := func(delta float64) float64 {
		shifted := append([]*hlo.Literal{}, params...)
		shifted[p] = params[p].Clone()
		shifted[p].SetFloat64(i, params[p].Float64(i)+delta)
		return evalLoss(t, m, shifted, batch)
	}
	return (at(fdStep) - at(-fdStep)) / (2 * fdStep)
}

// TestMLPGradientByHand checks the MLP step's gradients against backpropagation
// written out by hand for x → relu(x·W0 + b0) → ·W1 + b1 → softmax cross-entropy:
// dlogits = (softmax − y)/B, dW1 = hᵀ·dlogits, db1 = Σ_rows dlogits,
// dh = dlogits·W1ᵀ ⊙ [pre > 0], dW0 = xᵀ·dh, db0 = Σ_rows dh.
func TestMLPGradientByHand(t *testing.T) {
	const batch, in, hidden, classes = 8, 3, 6, 4
	model := MLP("mlp", hlo.F64, batch, in, hidden, classes)
	s, err := Build(model, SGD{})
	if err != nil {
		t.Fatal(err)
	}
	x, y := Blobs(10, hlo.F64, batch, in, classes, 0.5)
	state := s.Init(11)
	out := run(t, s, state, []*hlo.Literal{x, y})
	w0, b0, w1, b1 := vals(state[0]), vals(state[1]), vals(state[2]), vals(state[3])
	xs, ys := vals(x), vals(y)
	pre := make([]float64, batch*hidden)
	h := make([]float64, batch*hidden)
	for r := range batch {
		for j := range hidden {
			v := b0[j]
			for k := range in {
				v += xs[r*in+k] * w0[k*hidden+j]
			}
			pre[r*hidden+j], h[r*hidden+j] = v, math.Max(v, 0)
		}
	}
	want := [][]float64{make([]float64, in*hidden), make([]float64, hidden), make([]float64, hidden*classes), make([]float64, classes)}
	dh := make([]float64, batch*hidden)
	for r := range batch {
		logits := make([]float64, classes)
		for c := range classes {
			logits[c] = b1[c]
			for j := range hidden {
				logits[c] += h[r*hidden+j] * w1[j*classes+c]
			}
		}
		p := softmax(logits)
		for c := range classes {
			dl := (p[c] - ys[r*classes+c]) / batch
			want[3][c] += dl
			for j := range hidden {
				want[2][j*classes+c] += h[r*hidden+j] * dl
				if pre[r*hidden+j] > 0 {
					dh[r*hidden+j] += dl * w1[j*classes+c]
				}
			}
		}
	}
	for r := range batch {
		for j := range hidden {
			want[1][j] += dh[r*hidden+j]
			for k := range in {
				want[0][k*hidden+j] += xs[r*in+k] * dh[r*hidden+j]
			}
		}
	}
	for p := range want {
		got := vals(out[1+4+p])
		for i := range got {
			if math.Abs(got[i]-want[p][i]) > 1e-12 {
				t.Fatalf("gradient of %s[%d] = %v, by hand %v", model.Params[p].Name, i, got[i], want[p][i])
			}
		}
	}
}

func vals(l *hlo.Literal) []float64 {
	v := make([]float64, l.NumElements())
	for i := range v {
		v[i] = l.Float64(i)
	}
	return v
}

func softmax(x []float64) []float64 {
	mx, sum := math.Inf(-1), 0.0
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// TestAdamStepLayout: an Adam step's outputs are (loss, params', m', v', t+1),
// each shaped like the input it replaces. At t = 1 from zero moments Adam's update
// is lr·g/(|g| + eps) (the bias corrections cancel 1−β), with g the gradient the
// SGD step gives.
func TestAdamStepLayout(t *testing.T) {
	model := MLP("mlp", hlo.F64, 6, 3, 5, 3)
	cfg := nn.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	adam, err := Build(model, Adam{cfg})
	if err != nil {
		t.Fatal(err)
	}
	sgd, err := Build(model, SGD{})
	if err != nil {
		t.Fatal(err)
	}
	x, y := Blobs(12, hlo.F64, 6, 3, 3, 0.5)
	batch := []*hlo.Literal{x, y}
	state := adam.Init(13)
	out := run(t, adam, state, batch)
	np := len(model.Params)
	if adam.Updated != np*3+1 || len(out) != adam.Updated+1 {
		t.Fatalf("Updated %d, %d outputs; want %d and %d", adam.Updated, len(out), np*3+1, np*3+2)
	}
	for k := range adam.Updated {
		if !out[k+1].Shape().Equal(state[k].Shape()) {
			t.Fatalf("output %d is %v, the input it replaces %v", k+1, out[k+1].Shape(), state[k].Shape())
		}
	}
	if got := out[adam.Updated].Float64(0); got != 2 {
		t.Fatalf("t+1 = %v, want 2", got)
	}
	grads := run(t, sgd, append(append([]*hlo.Literal{}, state[:np]...), sgd.Init(0)[np:]...), batch)[1+np:]
	for p := range np {
		for i := range state[p].NumElements() {
			g := grads[p].Float64(i)
			want := state[p].Float64(i) - cfg.LR*g/(math.Abs(g)+cfg.Eps)
			if got := out[1+p].Float64(i); math.Abs(got-want) > 1e-12 {
				t.Fatalf("%s[%d]' = %v, want %v", model.Params[p].Name, i, got, want)
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	_, err := Build(Model{Name: "empty"}, SGD{})
	if !errors.Is(err, ErrInvalidModel) {
		t.Fatalf("no parameters: %v, want ErrInvalidModel", err)
	}
	vector := MLP("vector", hlo.F64, 2, 2, 2)
	vector.Loss = func(b *hlo.Builder, ps, batch []nn.X) nn.X { return ps[1] }
	_, err = Build(vector, SGD{})
	if !errors.Is(err, ErrInvalidModel) {
		t.Fatalf("vector loss: %v, want ErrInvalidModel", err)
	}
}

// TestDonatingAliasesEveryUpdate: the donating module aliases output k+1 to input
// k for every updated input (parameters, state, t), must-alias, verifies, prints
// back the same, and leaves the step's own module alone.
func TestDonatingAliasesEveryUpdate(t *testing.T) {
	s, err := Build(MLP("mlp", hlo.F32, 4, 3, 5, 2), SGD{LR: 0.1, Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	m := s.Donating()
	// 2 layers × (weight, bias) = 4 parameters, 4 velocities, t.
	if s.Updated != 9 || len(m.InputOutputAlias) != 9 {
		t.Fatalf("Updated %d, %d aliases; want 9 and 9", s.Updated, len(m.InputOutputAlias))
	}
	leaves, err := hlo.ResolveAliases(m)
	if err != nil {
		t.Fatal(err)
	}
	for k, a := range leaves {
		if a.Output != k+1 || a.Param != k || a.ParamLeaf != 0 || a.Kind != hlo.MustAlias {
			t.Errorf("alias %d is %+v, want output %d over parameter %d, must-alias", k, a, k+1, k)
		}
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	again, err := hlo.ParseModule(hlo.Print(m))
	if err != nil || hlo.Print(again) != hlo.Print(m) {
		t.Fatalf("round trip: %v", err)
	}
	if s.Module.InputOutputAlias != nil {
		t.Error("Donating changed the step's own module")
	}
}
