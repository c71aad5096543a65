package vkxla_test

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// nnProgram builds one hlo/nn model in f32 with every weight a parameter.
type nnProgram struct {
	name  string
	build func(b *hlo.Builder, param func(dims ...int64) nn.X) nn.X
}

var nnPrograms = []nnProgram{
	{"transformer block, causal", func(b *hlo.Builder, param func(...int64) nn.X) nn.X {
		p := nn.TransformerParams{LN1Scale: param(8), LN1Bias: param(8),
			Attention: nn.AttentionParams{Q: param(8, 8), K: param(8, 8), V: param(8, 8), O: param(8, 8)},
			LN2Scale:  param(8), LN2Bias: param(8), W1: param(8, 16), B1: param(16), W2: param(16, 8), B2: param(8)}
		return nn.TransformerBlock(b, param(2, 5, 8), p, 2, true)
	}},
	{"decode step with a KV cache", func(b *hlo.Builder, param func(...int64) nn.X) nn.X {
		p := nn.AttentionParams{Q: param(8, 8), K: param(8, 8), V: param(8, 8), O: param(8, 8)}
		pos := b.Parameter(hlo.Scalar(hlo.S32), "pos")
		out, cache := nn.DecodeAttention(b, param(1, 1, 8), p, nn.KVCache{K: param(1, 6, 2, 4), V: param(1, 6, 2, 4)}, pos)
		return b.Tuple(out, cache.K, cache.V)
	}},
	{"mobilenet block, stride 2", func(b *hlo.Builder, param func(...int64) nn.X) nn.X {
		norm := func(c int64) nn.BatchNorm {
			return nn.BatchNorm{Scale: param(c), Offset: param(c), Mean: param(c),
				Variance: b.Add(b.Abs(param(c)), b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), c))}
		}
		return nn.MobileNetBlock(b, param(1, 9, 9, 4), param(3, 3, 1, 4), norm(4), param(1, 1, 4, 6), norm(6), 2)
	}},
	{"mlp with cross-entropy and an adamw step", func(b *hlo.Builder, param func(...int64) nn.X) nn.X {
		w := param(6, 3)
		loss := nn.SoftmaxCrossEntropy(b, nn.Dense(b, nn.GELU(b, param(4, 6)), w, param(3)), nn.Softmax(b, param(4, 3)))
		cfg := nn.DefaultAdam
		cfg.WeightDecay = 0.01
		p, m, v := nn.Adam(b, w, param(6, 3), param(6, 3), b.Mul(param(6, 3), param(6, 3)), b.ScalarConstant(hlo.F32, 2), cfg)
		return b.Tuple(loss, p, m, v)
	}},
}

// TestNNPrograms: the model builders' programs on the device against cpuref.
func TestNNPrograms(t *testing.T) {
	rt := newRuntime(t)
	for _, prog := range nnPrograms {
		t.Run(prog.name, func(t *testing.T) {
			b := hlo.NewBuilder("nn")
			param := func(dims ...int64) nn.X { return b.Parameter(hlo.MakeShape(hlo.F32, dims...), "w") }
			m := mustBuild(t, b, prog.build(b, param))
			rng := rand.New(rand.NewPCG(21, 22))
			inputs := make([]*hlo.Literal, len(m.Entry.Params))
			for i, p := range m.Entry.Params {
				inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
				if p.Shape.DType == hlo.S32 {
					inputs[i] = hlo.ScalarLiteral(int32(3))
				}
			}
			checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, hlo.F32), inputs...)
		})
	}
}
