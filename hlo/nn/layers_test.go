package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestDenseAndActivations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x, w, bias := randomTensor(rng, 2, 3, 4), randomTensor(rng, 4, 5), randomTensor(rng, 5)
	b := hlo.NewBuilder("dense")
	y := Dense(b, x.param(b, "x"), w.param(b, "w"), bias.param(b, "b"))
	got := evaluate(t, b, b.Tuple(y, ReLU(b, y), ReLU6(b, b.Mul(y, scalar(b, y, 8))), GELU(b, y)), x, w, bias)
	want := matmulLast(x, w)
	for i := range want.v {
		want.v[i] += bias.v[i%5]
	}
	assertClose(t, "dense", got[0], want, 1e-14)
	relu, relu6, gelu := newTensor(want.dims...), newTensor(want.dims...), newTensor(want.dims...)
	for i, v := range want.v {
		relu.v[i] = math.Max(v, 0)
		relu6.v[i] = math.Min(math.Max(8*v, 0), 6)
		gelu.v[i] = 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
	}
	assertClose(t, "relu", got[1], relu, 0)
	assertClose(t, "relu6", got[2], relu6, 0)
	assertClose(t, "gelu", got[3], gelu, 1e-14)
}

func TestSoftmaxFamily(t *testing.T) {
	// Rows far from zero: a softmax without the max shift would overflow exp.
	x := tensor{dims: []int64{2, 3}, v: []float64{1000, 1001, 1002, -3, 0, 3}}
	b := hlo.NewBuilder("softmax")
	p := x.param(b, "x")
	got := evaluate(t, b, b.Tuple(Softmax(b, p), LogSoftmax(b, p)), x)
	want := rowsOf(x, softmaxRow)
	assertClose(t, "softmax", got[0], want, 1e-15)
	logs := newTensor(2, 3)
	for i, v := range want.v {
		logs.v[i] = math.Log(v)
	}
	assertClose(t, "log-softmax", got[1], logs, 1e-14)
	// By definition: the first row is softmax(0, 1, 2), whatever the offset.
	e := []float64{1, math.E, math.E * math.E}
	s := e[0] + e[1] + e[2]
	assertClose(t, "softmax(0,1,2)", tensor{v: got[0].v[:3]}, tensor{v: []float64{1 / s, e[1] / s, e[2] / s}}, 1e-15)
}

func TestLayerNormAndBatchNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, gamma, beta := randomTensor(rng, 3, 6), randomTensor(rng, 6), randomTensor(rng, 6)
	mean, variance := randomTensor(rng, 6), randomTensor(rng, 6)
	for i := range variance.v {
		variance.v[i] = math.Abs(variance.v[i]) + 0.1
	}
	b := hlo.NewBuilder("norms")
	px, pg, pb := x.param(b, "x"), gamma.param(b, "gamma"), beta.param(b, "beta")
	pm, pv := mean.param(b, "mean"), variance.param(b, "var")
	got := evaluate(t, b, b.Tuple(LayerNorm(b, px, pg, pb, 1e-5), BatchNormInference(b, px, pg, pb, pm, pv, 1e-3)),
		x, gamma, beta, mean, variance)
	ln := rowsOf(x, func(row []float64) []float64 {
		mu, sq := 0.0, 0.0
		for _, v := range row {
			mu += v / 6
		}
		for _, v := range row {
			sq += (v - mu) * (v - mu) / 6
		}
		out := make([]float64, 6)
		for i, v := range row {
			out[i] = (v-mu)/math.Sqrt(sq+1e-5)*gamma.v[i] + beta.v[i]
		}
		return out
	})
	assertClose(t, "layernorm", got[0], ln, 1e-13)
	bn := newTensor(3, 6)
	for i, v := range x.v {
		c := i % 6
		bn.v[i] = (v-mean.v[c])/math.Sqrt(variance.v[c]+1e-3)*gamma.v[c] + beta.v[c]
	}
	assertClose(t, "batchnorm", got[1], bn, 1e-13)
}
