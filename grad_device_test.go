package vkxla_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
	"github.com/vkxla/vkxla/hlo/nn/train"
	"github.com/vkxla/vkxla/passes"
)

// gradPrograms are scalar functions whose derivative modules run on the device:
// together they put the rules of convolution, pooling (select-and-scatter), dot
// and a while loop (the stacking loop and its backward loop) on the GPU.
var gradPrograms = []struct {
	name   string
	params [][]int64
	build  func(b *hlo.Builder, p []nn.X) nn.X
}{
	{"conv, max pool, dense, cross-entropy", [][]int64{{2, 8, 8, 3}, {3, 3, 3, 4}, {4, 3}, {2, 3}},
		func(b *hlo.Builder, p []nn.X) nn.X {
			h := nn.ReLU(b, nn.Conv2D(b, p[0], p[1], 1, nn.Same))
			h = nn.GlobalAvgPool(b, nn.MaxPool2D(b, h, 3, 2, nn.Same))
			return nn.SoftmaxCrossEntropy(b, nn.Dense(b, h, p[2], nil), nn.Softmax(b, p[3]))
		}},
	{"strided depthwise conv and overlapping pool", [][]int64{{1, 9, 9, 4}, {3, 3, 1, 4}},
		func(b *hlo.Builder, p []nn.X) nn.X {
			h := nn.MaxPool2D(b, nn.DepthwiseConv2D(b, p[0], p[1], 2, nn.Same), 2, 1, nn.Valid)
			return gradSumAll(b, b.Mul(h, h))
		}},
	{"window- and base-dilated max pool", [][]int64{{2, 9, 8, 3}},
		func(b *hlo.Builder, p []nn.X) nn.X {
			w := []hlo.WindowDim{hlo.NewWindowDim(1), hlo.NewWindowDim(3), hlo.NewWindowDim(2), hlo.NewWindowDim(1)}
			w[1].Stride, w[1].WindowDilation, w[1].PadLow, w[1].PadHigh = 2, 2, 1, 1
			w[2].BaseDilation, w[2].WindowDilation = 2, 3
			h := b.ReduceWindow([]nn.X{p[0]}, []nn.X{b.ScalarConstant(hlo.F32, math.Inf(-1))}, b.Reducer(hlo.OpMaximum, hlo.F32), w)
			return gradSumAll(b, b.Mul(h, h))
		}},
	{"while loop of tanh(x·w), 4 iterations", [][]int64{{4, 6}, {6, 6}},
		func(b *hlo.Builder, p []nn.X) nn.X { return gradSumAll(b, gradTanhLoop(b, p[0], p[1], 4)) }},
}

func gradSumAll(b *hlo.Builder, x nn.X) nn.X {
	dims := make([]int64, x.Shape.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return b.Reduce([]nn.X{x}, []nn.X{b.ScalarConstant(x.Shape.DType, 0)}, b.Reducer(hlo.OpAdd, x.Shape.DType), dims)
}

// gradTanhLoop is a while loop that applies x ← tanh(x·w) n times.
func gradTanhLoop(b *hlo.Builder, x, w nn.X, n int32) nn.X {
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), x.Shape, w.Shape)
	bb := hlo.NewBuilder("body")
	p := bb.Parameter(state, "state")
	i, xs, ws := bb.GetTupleElement(p, 0), bb.GetTupleElement(p, 1), bb.GetTupleElement(p, 2)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), bb.Tanh(bb.Dot(xs, ws)), ws))
	if err != nil {
		panic(err) // a fixed, valid computation
	}
	cb := hlo.NewBuilder("cond")
	cp := cb.Parameter(state, "state")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(cp, 0), cb.ScalarConstant(hlo.S32, float64(n)), hlo.CmpLT))
	if err != nil {
		panic(err)
	}
	return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, w)), 1)
}

// TestGradModulesOnDevice runs Grad of each program (every parameter) on the GPU
// against cpuref, with the default passes and with fusion off.
func TestGradModulesOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, prog := range gradPrograms {
		t.Run(prog.name, func(t *testing.T) {
			b := hlo.NewBuilder("f")
			ps := make([]nn.X, len(prog.params))
			wrt := make([]int, len(ps))
			for i, dims := range prog.params {
				ps[i], wrt[i] = b.Parameter(f32(dims...), "p"), i
			}
			m := mustBuild(t, b, prog.build(b, ps))
			g, err := autodiff.ValueAndGrad(m, wrt, nil)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(31, uint64(len(prog.name))))
			inputs := make([]*hlo.Literal, len(ps))
			for i, p := range ps {
				inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
			}
			spec := vkxla.ProgramTolerance(g, hlo.F32)
			checkAgainstCPU(t, rt, g, spec, inputs...)
			checkCompiledAgainstCPU(t, rt, g, []vkxla.CompileOption{vkxla.WithoutPasses("fusion")}, spec, inputs...)
		})
	}
}

// TestTrainingStepsOnDevice runs a few steps of every model's training step on the
// GPU; each step is compared with cpuref started from the same state (the GPU's
// state of that step), since free-running trajectories drift apart.
func TestTrainingStepsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	x, labels := train.Blobs(1, hlo.F32, 16, 4, 3, 0.5)
	tokens, targets := train.OneHotSequences(2, hlo.F32, 2, 6, 7)
	images := train.Uniform(3, f32(2, 8, 8, 3))
	_, imageLabels := train.Blobs(4, hlo.F32, 2, 1, 3, 0)
	cases := []struct {
		model train.Model
		opt   train.Optimizer
		batch []*hlo.Literal
	}{
		{train.MLP("mlp", hlo.F32, 16, 4, 16, 3), train.SGD{LR: 0.1, Momentum: 0.9}, []*hlo.Literal{x, labels}},
		{train.MLP("mlp", hlo.F32, 16, 4, 16, 3), train.Adam{AdamConfig: nn.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-3, WeightDecay: 0.01}}, []*hlo.Literal{x, labels}},
		{train.TransformerLM("lm", hlo.F32, train.LMConfig{Vocab: 7, Seq: 6, Dim: 8, Heads: 2, Hidden: 16, Batch: 2}),
			train.SGD{LR: 0.1, Momentum: 0.9}, []*hlo.Literal{tokens, targets}},
		{train.ConvNet("convnet", hlo.F32, train.ConvConfig{Batch: 2, Size: 8, Channels: 3, C1: 4, C2: 6, Classes: 3}),
			train.SGD{LR: 0.1, Momentum: 0.9}, []*hlo.Literal{images, imageLabels}},
	}
	for _, c := range cases {
		t.Run(c.model.Name, func(t *testing.T) {
			step, err := train.Build(c.model, c.opt)
			require.NoError(t, err)
			exe, err := rt.Compile(context.Background(), step.Module)
			require.NoError(t, err)
			defer func() { require.NoError(t, exe.Close()) }()
			spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
			state := step.Init(5)
			var first, last float64
			for i := range 4 {
				in := append(append([]*hlo.Literal{}, state...), c.batch...)
				got, err := exe.Run(context.Background(), in...)
				require.NoError(t, err)
				want, err := cpuref.Eval(step.Module, in...)
				require.NoError(t, err)
				for k, w := range want.Leaves() {
					require.NoError(t, hlo.LiteralsClose(got[k], w, spec.Abs, spec.Rel), "step %d, output %d", i+1, k)
				}
				if i == 0 {
					first = got[0].Float64(0)
				}
				last = got[0].Float64(0)
				state = got[1 : 1+step.Updated]
			}
			require.Less(t, last, first, "the loss after 3 updates")
		})
	}
}

// FuzzGradDifferential differentiates FuzzDifferential's random graphs (VJP with
// respect to both inputs, a random cotangent) and checks the derivative module on
// the GPU against cpuref with every pass on, with one pass off (chosen by the
// input), with all passes off, or under a budget of 80% of the unbudgeted plan.
// `go test` runs the seeds; `go test -fuzz FuzzGradDifferential .` explores.
func FuzzGradDifferential(f *testing.F) {
	for i, seed := range [][]byte{
		{3, 5, 0, 1, 2}, {0, 0, 1, 1, 6, 0, 7, 1, 0, 3}, {9, 9, 4, 4, 8, 2, 5, 5, 2, 0, 1},
		{6, 6, 7, 7, 0, 0, 0, 2, 1, 9, 3, 4, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	} {
		f.Add(uint8(2), uint8(3), uint8(i), seed)
		f.Add(uint8(5), uint8(131), uint8(i+5), seed)
	}
	rt := newRuntime(f)
	names := passes.OptionalNames()
	f.Fuzz(func(t *testing.T, rows, cols, mode uint8, ops []byte) {
		ops = ops[:min(len(ops), maxFuzzOps)]
		m, _ := fuzzGraph(t, rows, cols, ops)
		vjp, err := autodiff.VJP(m, []int{0, 1}, nil)
		require.NoError(t, err, "VJP of\n%s", hlo.Print(m))
		rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		inputs := make([]*hlo.Literal, len(vjp.Entry.Params))
		for i, p := range vjp.Entry.Params {
			inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
		}
		var opts []vkxla.CompileOption
		switch k := int(mode) % (len(names) + 2); {
		case k < len(names):
			opts = append(opts, vkxla.WithoutPasses(names[k]))
		case k == len(names):
			opts = append(opts, vkxla.WithoutPasses(names...))
		default:
			budget, ok := tightBudget(t, rt, vjp, nil)
			if !ok {
				return // no plan fits: ErrOverBudget was checked
			}
			opts = append(opts, budget)
		}
		checkCompiledAgainstCPU(t, rt, vjp, opts, vkxla.ProgramTolerance(vjp, hlo.F32), inputs...)
	})
}
