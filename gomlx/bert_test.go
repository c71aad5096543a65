package gomlx_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// The model suite's BERT-base encoder layer (bench/models.go's bertLayer:
// nn.EncoderLayer, post-layernorm, unmasked attention with biases, a tanh-GELU
// MLP) written in GoMLX as a GoMLX user would write it, and the same layer built
// with hlo/nn, both taking their parameters in params' order.

// bertSizes are one encoder layer's dimensions: batch × seq tokens of width d,
// heads attention heads, an MLP of width f.
type bertSizes struct{ batch, seq, d, heads, f int }

// bertSmall is the model suite's small layer (bench/models.go); bertMedium a layer
// a lavapipe benchmark runs in tens of milliseconds (BERT-base is 1×128×768, 12
// heads, 3072).
var (
	bertSmall  = bertSizes{2, 8, 16, 2, 32}
	bertMedium = bertSizes{1, 128, 256, 4, 1024}
)

// param is one parameter of a model written both ways: its name and dimensions.
type param struct {
	name string
	dims []int
	// index makes the parameter an s32 scalar of this value (a decode step's
	// position) instead of f32 values; dims is then empty.
	index *int32
}

// shape is the parameter's vkxla shape.
func (p param) shape() hlo.Shape {
	dims := make([]int64, len(p.dims))
	for j, d := range p.dims {
		dims[j] = int64(d)
	}
	if p.index != nil {
		return hlo.Scalar(hlo.S32)
	}
	return hlo.MakeShape(hlo.F32, dims...)
}

// bertParams lists x and the layer's weights in the order both programs take them.
func bertParams(s bertSizes) []param {
	d, f := s.d, s.f
	return []param{
		{name: "x", dims: []int{s.batch, s.seq, d}},
		{name: "q", dims: []int{d, d}}, {name: "q.bias", dims: []int{d}}, {name: "k", dims: []int{d, d}}, {name: "k.bias", dims: []int{d}},
		{name: "v", dims: []int{d, d}}, {name: "v.bias", dims: []int{d}}, {name: "o", dims: []int{d, d}}, {name: "o.bias", dims: []int{d}},
		{name: "ln1.scale", dims: []int{d}}, {name: "ln1.bias", dims: []int{d}},
		{name: "w1", dims: []int{d, f}}, {name: "b1", dims: []int{f}}, {name: "w2", dims: []int{f, d}}, {name: "b2", dims: []int{d}},
		{name: "ln2.scale", dims: []int{d}}, {name: "ln2.bias", dims: []int{d}},
	}
}

// bertGradParams are bertParams and the cotangent dy of the layer's output.
func bertGradParams(s bertSizes) []param {
	return append(bertParams(s), param{name: "dy", dims: []int{s.batch, s.seq, s.d}})
}

// inputValues are deterministic values for the parameters ps, as bench/models.go's
// weightInputs draws them: He-uniform (±√(6/fan-in), fan-in every dimension but
// the last) for rank ≥ 2, uniform ±0.5 for vectors, 0.5–1.5 for variances.
func inputValues(ps []param, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x30de15))
	var out [][]float32
	for _, p := range ps {
		if p.index != nil {
			out = append(out, nil)
			continue
		}
		n, last := 1, p.dims[len(p.dims)-1]
		for _, d := range p.dims {
			n *= d
		}
		lo, hi := -0.5, 0.5
		switch {
		case strings.HasSuffix(p.name, "variance"):
			lo, hi = 0.5, 1.5
		case len(p.dims) >= 2:
			hi = math.Sqrt(6 / float64(n/last))
			lo = -hi
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*rng.Float64())
		}
		out = append(out, v)
	}
	return out
}

// gomlxTensors are the inputs as GoMLX tensors.
func gomlxTensors(ps []param, values [][]float32) []any {
	var out []any
	for i, p := range ps {
		if p.index != nil {
			out = append(out, tensors.FromValue(*p.index))
			continue
		}
		out = append(out, tensors.FromFlatDataAndDimensions(values[i], p.dims...))
	}
	return out
}

// bothPrograms runs the model written in GoMLX (fn, as graph.Exec takes it) on
// the vkxla backend and the model suite's program of it (module) on cpuref, on
// the same inputs (ps drawn with seed): the GoMLX outputs and cpuref's result.
func bothPrograms(t *testing.T, ps []param, seed uint64, fn any, module func() (*hlo.Module, error)) ([]*tensors.Tensor, *hlo.Literal) {
	t.Helper()
	values := inputValues(ps, seed)
	outs, err := graph.MustNewExecAny(openVK(t), fn).Exec(gomlxTensors(ps, values)...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := module()
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpuref.Eval(m, literals(ps, values)...)
	if err != nil {
		t.Fatal(err)
	}
	return outs, want
}

// literals are the inputs as vkxla literals.
func literals(ps []param, values [][]float32) []*hlo.Literal {
	var out []*hlo.Literal
	for i, p := range ps {
		if p.index != nil {
			out = append(out, hlo.ScalarLiteral(*p.index))
			continue
		}
		lit := hlo.NewLiteral(p.shape())
		for j, v := range values[i] {
			lit.SetFloat64(j, float64(v))
		}
		out = append(out, lit)
	}
	return out
}

// bertGoMLX is the encoder layer in GoMLX: in holds params' nodes.
func bertGoMLX(heads int) func(in []*graph.Node) *graph.Node {
	return func(in []*graph.Node) *graph.Node {
		x := in[0]
		h := layerNorm(graph.Add(x, attentionGoMLX(x, in[1:9], heads)), in[9], in[10], bertEps)
		m := dense(gelu(dense(h, in[11], in[12])), in[13], in[14])
		return layerNorm(graph.Add(h, m), in[15], in[16], bertEps)
	}
}

// attentionGoMLX is multi-head self-attention over x [B, S, D]; w holds q, its
// bias, k, v and o likewise.
func attentionGoMLX(x *graph.Node, w []*graph.Node, heads int) *graph.Node {
	dims := x.Shape().Dimensions
	split := func(y *graph.Node) *graph.Node { return graph.Reshape(y, dims[0], dims[1], heads, dims[2]/heads) }
	q, k, v := split(dense(x, w[0], w[1])), split(dense(x, w[2], w[3])), split(dense(x, w[4], w[5]))
	scores := graph.DotGeneral(q, []int{3}, []int{0, 2}, k, []int{3}, []int{0, 2}) // [B, h, S, T]
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(dims[2]/heads)))
	probs := graph.Softmax(scores, -1)
	ctx := graph.DotGeneral(probs, []int{3}, []int{0, 1}, v, []int{1}, []int{0, 2}) // [B, h, S, dh]
	ctx = graph.Reshape(graph.TransposeAllDims(ctx, 0, 2, 1, 3), dims...)
	return dense(ctx, w[6], w[7])
}

// dense is x·w + b over x's last axis.
func dense(x, w, b *graph.Node) *graph.Node {
	y := graph.DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{0}, nil)
	return graph.Add(y, trailing(b, y.Rank()))
}

// trailing reshapes the vector v to rank dimensions, the last its own and the
// others 1, so that it broadcasts over the last axis of an operand of that rank.
func trailing(v *graph.Node, rank int) *graph.Node {
	dims := make([]int, rank)
	for i := range dims {
		dims[i] = 1
	}
	dims[rank-1] = v.Shape().Dimensions[0]
	return graph.Reshape(v, dims...)
}

// bertEps is BERT's layernorm epsilon.
const bertEps = 1e-12

// layerNorm normalises over the last axis with the biased variance and epsilon
// eps, then scales and shifts.
func layerNorm(x, gamma, beta *graph.Node, eps float64) *graph.Node {
	last := x.Rank() - 1
	centred := graph.Sub(x, graph.ReduceAndKeep(x, graph.ReduceMean, last))
	variance := graph.ReduceAndKeep(graph.Mul(centred, centred), graph.ReduceMean, last)
	// Divided by the root, as GoMLX's layers write it: GoMLX has no gradient of Rsqrt.
	normed := graph.Div(centred, graph.Sqrt(graph.AddScalar(variance, eps)))
	return graph.Add(graph.Mul(normed, trailing(gamma, x.Rank())), trailing(beta, x.Rank()))
}

// gelu is the tanh approximation (jax.nn.gelu's default, nn.GELU).
func gelu(x *graph.Node) *graph.Node {
	cube := graph.Mul(graph.Mul(x, x), x)
	inner := graph.MulScalar(graph.Add(x, graph.MulScalar(cube, 0.044715)), math.Sqrt(2/math.Pi))
	return graph.Mul(graph.MulScalar(x, 0.5), graph.AddScalar(graph.Tanh(inner), 1))
}

// bertGradGoMLX is the layer's forward and backward pass in GoMLX: in holds
// bertParams' nodes and then the cotangent dy; it returns the layer's output and
// the gradient of Σ output·dy with respect to each of params.
func bertGradGoMLX(heads int) func(in []*graph.Node) []*graph.Node {
	return func(in []*graph.Node) []*graph.Node {
		params, dy := in[:len(in)-1], in[len(in)-1]
		y := bertGoMLX(heads)(params)
		return append([]*graph.Node{y}, graph.Gradient(graph.ReduceAllSum(graph.Mul(y, dy)), params...)...)
	}
}

// bertModule is the same layer built with hlo/nn (the model suite's program),
// its parameters in params' order.
func bertModule(s bertSizes) (*hlo.Module, error) {
	b := hlo.NewBuilder("bert_layer")
	ps := map[string]*hlo.Instruction{}
	for _, p := range bertParams(s) {
		dims := make([]int64, len(p.dims))
		for j, d := range p.dims {
			dims[j] = int64(d)
		}
		ps[p.name] = b.Parameter(hlo.MakeShape(hlo.F32, dims...), p.name)
	}
	tp := nn.TransformerParams{
		LN1Scale: ps["ln1.scale"], LN1Bias: ps["ln1.bias"],
		Attention: nn.AttentionParams{Q: ps["q"], K: ps["k"], V: ps["v"], O: ps["o"],
			QBias: ps["q.bias"], KBias: ps["k.bias"], VBias: ps["v.bias"], OBias: ps["o.bias"]},
		LN2Scale: ps["ln2.scale"], LN2Bias: ps["ln2.bias"],
		W1: ps["w1"], B1: ps["b1"], W2: ps["w2"], B2: ps["b2"],
	}
	return b.Build(nn.EncoderLayer(b, ps["x"], tp, int64(s.heads)))
}

// bertVJPModule is bertModule's value and vector-Jacobian product by
// autodiff.VJP: it takes params and the cotangent dy and returns the output
// and one gradient per parameter, as bertGradGoMLX does.
func bertVJPModule(s bertSizes) (*hlo.Module, error) {
	m, err := bertModule(s)
	if err != nil {
		return nil, err
	}
	wrt := make([]int, len(bertParams(s)))
	for i := range wrt {
		wrt[i] = i
	}
	return autodiff.VJP(m, wrt, nil)
}
