package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// ModelProgram is one program of the model suite (issue 12): a whole model built
// with hlo/nn, every weight a parameter. The suite times it at its full size; the
// tests (and the suite, before timing) check its small size against cpuref. The
// peer module (bench/peer) runs the same modules on GoMLX.
type ModelProgram struct {
	Name string
	// Build returns the module at its full size, or its small variant, and its
	// inputs (deterministic).
	Build func(small bool) (*hlo.Module, []*hlo.Literal, error)
}

// ModelPrograms are the suite's programs: a MobileNet-SSD detector, a ResNet-50
// bottleneck block, a BERT-base encoder layer forward and forward+backward, a
// GPT-2-sized decode step with a KV cache, and an MLP training step with Adam.
func ModelPrograms() []ModelProgram {
	return []ModelProgram{
		{"MobileNet-SSD 300×300 bf16", mobileNetSSD},
		{"ResNet-50 block 56×56×256", resNetBlock},
		{"BERT-base layer, forward", func(small bool) (*hlo.Module, []*hlo.Literal, error) { return bertLayer(small, false) }},
		{"BERT-base layer, forward+backward", func(small bool) (*hlo.Module, []*hlo.Literal, error) { return bertLayer(small, true) }},
		{"GPT-2 decode step, KV cache 512", gptDecode},
		{"MLP training step (Adam)", mlpTrainStep},
	}
}

// FLOPs counts the floating-point operations of a module's products: 2 per
// multiply-add of every dot and convolution (the work GFLOP/s figures count;
// elementwise work is left out, as in the usual model FLOP counts).
func FLOPs(m *hlo.Module) float64 {
	total := 0.0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			switch in.Op {
			case hlo.OpDot:
				k := int64(1)
				for _, d := range in.Attrs.Dot.LhsContracting {
					k *= in.Operands[0].Shape.Dims[d]
				}
				total += 2 * float64(in.Shape.NumElements()) * float64(k)
			case hlo.OpConvolution:
				kernel, cd := in.Operands[1].Shape.Dims, in.Attrs.Conv
				k := kernel[cd.KernelInput]
				for _, d := range cd.KernelSpatial {
					k *= kernel[d]
				}
				total += 2 * float64(in.Shape.NumElements()) * float64(k)
			}
		}
	}
	return total
}

// weightInputs are deterministic inputs for a module's parameters: He-uniform
// weights (±√(6/fan-in), fan-in = every dim but the last) for parameters of rank
// ≥ 2, so activations keep their scale through deep ReLU stacks; uniform ±0.5
// for vectors (biases, norm scales), 0.5–1.5 for parameters named "…variance";
// set, if non-nil, replaces the literal of the parameters it names.
func weightInputs(m *hlo.Module, seed uint64, set map[string]*hlo.Literal) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 0x30de15))
	ins := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		if lit, ok := set[p.Name]; ok {
			ins[i] = lit
			continue
		}
		lit := hlo.NewLiteral(p.Shape)
		dims := p.Shape.Dims
		lo, hi := -0.5, 0.5
		switch {
		case strings.HasSuffix(p.Name, "variance"):
			lo, hi = 0.5, 1.5
		case len(dims) >= 2:
			fanIn := float64(p.Shape.NumElements() / dims[len(dims)-1])
			hi = math.Sqrt(6 / fanIn)
			lo = -hi
		}
		for j := range lit.NumElements() {
			lit.SetFloat64(j, lo+(hi-lo)*rng.Float64())
		}
		ins[i] = lit
	}
	return ins
}

// paramWeights makes weights as parameters of type dt.
func paramWeights(b *hlo.Builder, dt hlo.DType) nn.Weights {
	return func(name string, dims ...int64) nn.X { return b.Parameter(hlo.MakeShape(dt, dims...), name) }
}

func built(b *hlo.Builder, root *hlo.Instruction, seed uint64, set map[string]*hlo.Literal) (*hlo.Module, []*hlo.Literal, error) {
	m, err := b.Build(root)
	if err != nil {
		return nil, nil, err
	}
	return m, weightInputs(m, seed, set), nil
}

// mobileNetSSD is SSD300 on MobileNet v1 in bf16 (small: 33×33, α = 1/8, 5
// classes).
func mobileNetSSD(small bool) (*hlo.Module, []*hlo.Literal, error) {
	cfg := nn.SSDConfig{Size: 300, Classes: 91}
	if small {
		cfg = nn.SSDConfig{Size: 33, Classes: 5, Width: 1.0 / 8}
	}
	b := hlo.NewBuilder("mobilenet_ssd")
	images := b.Parameter(hlo.MakeShape(hlo.BF16, 1, cfg.Size, cfg.Size, 3), "images")
	boxes, classes := nn.MobileNetSSD(b, images, cfg, paramWeights(b, hlo.BF16))
	return built(b, b.Tuple(boxes, classes), 1, nil)
}

// resNetBlock is ResNet-50's conv2_x bottleneck (256 → 64 → 64 → 256 over
// 56×56) with inference batch norms (small: 8×8, 16 → 4 → 16).
func resNetBlock(small bool) (*hlo.Module, []*hlo.Literal, error) {
	size, c, mid := int64(56), int64(256), int64(64)
	if small {
		size, c, mid = 8, 16, 4
	}
	b := hlo.NewBuilder("resnet_block")
	w := paramWeights(b, hlo.F32)
	x := w("x", 1, size, size, c)
	norm := func(name string, n int64) nn.BatchNorm {
		return nn.BatchNorm{Scale: w(name+".scale", n), Offset: w(name+".offset", n), Mean: w(name+".mean", n), Variance: w(name+".variance", n)}
	}
	p := nn.ResNetParams{
		Reduce: w("reduce", 1, 1, c, mid), Spatial: w("spatial", 3, 3, mid, mid), Expand: w("expand", 1, 1, mid, c),
		ReduceNorm: norm("reduce_bn", mid), SpatialNorm: norm("spatial_bn", mid), ExpandN: norm("expand_bn", c),
	}
	return built(b, nn.ResNetBlock(b, x, p), 2, nil)
}

// transformerParams makes one block's weights: dim d, MLP width f, attention
// biases if biases.
func transformerParams(w nn.Weights, d, f int64, biases bool) nn.TransformerParams {
	p := nn.TransformerParams{
		LN1Scale: w("ln1.scale", d), LN1Bias: w("ln1.bias", d),
		Attention: nn.AttentionParams{Q: w("q", d, d), K: w("k", d, d), V: w("v", d, d), O: w("o", d, d)},
		LN2Scale:  w("ln2.scale", d), LN2Bias: w("ln2.bias", d),
		W1: w("w1", d, f), B1: w("b1", f), W2: w("w2", f, d), B2: w("b2", d),
	}
	if biases {
		a := &p.Attention
		a.QBias, a.KBias, a.VBias, a.OBias = w("q.bias", d), w("k.bias", d), w("v.bias", d), w("o.bias", d)
	}
	return p
}

// bertLayer is one BERT-base encoder layer (768 wide, 12 heads, MLP 3072) over
// a sequence of 128 tokens (small: 2 sequences of 8, 16 wide, 2 heads, MLP 32).
// With backward, the module is the gradient of Σ layer(x)·dy (dy a parameter:
// the cotangent a backward pass receives) with respect to x and every weight,
// made by autodiff.Grad.
func bertLayer(small, backward bool) (*hlo.Module, []*hlo.Literal, error) {
	batch, seq, d, heads, f := int64(1), int64(128), int64(768), int64(12), int64(3072)
	if small {
		batch, seq, d, heads, f = 2, 8, 16, 2, 32
	}
	b := hlo.NewBuilder("bert_layer")
	w := paramWeights(b, hlo.F32)
	x := w("x", batch, seq, d)
	y := nn.EncoderLayer(b, x, transformerParams(w, d, f, true), heads)
	if !backward {
		return built(b, y, 3, nil)
	}
	dy := w("dy", batch, seq, d)
	loss := b.Reduce([]*hlo.Instruction{b.Mul(y, dy)}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)},
		b.Reducer(hlo.OpAdd, hlo.F32), []int64{0, 1, 2})
	fwd, err := b.Build(loss)
	if err != nil {
		return nil, nil, err
	}
	wrt := make([]int, len(fwd.Entry.Params)-1) // all but dy, the last
	for i := range wrt {
		wrt[i] = i
	}
	grad, err := autodiff.Grad(fwd, wrt, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("bert backward: %w", err)
	}
	return grad, weightInputs(grad, 3, nil), nil
}

// gptDecode is one decoding step of a 2-block GPT-2-small-sized decoder (768
// wide, 12 heads, MLP 3072) with a KV cache of 512 positions per block, at
// position 300: the embedded token [1, 1, 768] through the blocks, a final
// layernorm and logits over a vocabulary of 8192; outputs the logits and every
// updated cache (small: 16 wide, 2 heads, MLP 32, cache 8 at position 5,
// vocabulary 11).
func gptDecode(small bool) (*hlo.Module, []*hlo.Literal, error) {
	const blocks = 2
	d, heads, f, maxLen, vocab, at := int64(768), int64(12), int64(3072), int64(512), int64(8192), int32(300)
	if small {
		d, heads, f, maxLen, vocab, at = 16, 2, 32, 8, 11, 5
	}
	b := hlo.NewBuilder("gpt_decode")
	w := paramWeights(b, hlo.F32)
	x := w("token", 1, 1, d)
	pos := b.Parameter(hlo.Scalar(hlo.S32), "pos")
	outs := []*hlo.Instruction{nil}
	for k := range blocks {
		pw := func(name string, dims ...int64) nn.X { return w(fmt.Sprintf("block%d.%s", k, name), dims...) }
		cache := nn.KVCache{K: pw("k_cache", 1, maxLen, heads, d/heads), V: pw("v_cache", 1, maxLen, heads, d/heads)}
		var next nn.KVCache
		x, next = nn.DecodeBlock(b, x, transformerParams(pw, d, f, false), cache, pos)
		outs = append(outs, next.K, next.V)
	}
	outs[0] = nn.Dense(b, nn.LayerNorm(b, x, w("lnf.scale", d), w("lnf.bias", d), 1e-5), w("unembed", d, vocab), nil)
	return built(b, b.Tuple(outs...), 4, map[string]*hlo.Literal{"pos": hlo.ScalarLiteral(at)})
}

// mlpTrainStep is one Adam step of an MNIST-shaped MLP (784 → 1024 → 1024 → 10,
// ReLU, softmax cross-entropy, batch 256) assembled by hlo/nn/train: forward,
// autodiff.ValueAndGrad and the update in one module (small: 12 → 16 → 16 → 5,
// batch 8).
func mlpTrainStep(small bool) (*hlo.Module, []*hlo.Literal, error) {
	batch, sizes := int64(256), []int64{784, 1024, 1024, 10}
	if small {
		batch, sizes = 8, []int64{12, 16, 16, 5}
	}
	model := train.MLP("mlp", hlo.F32, batch, sizes...)
	step, err := train.Build(model, train.Adam{AdamConfig: nn.DefaultAdam})
	if err != nil {
		return nil, nil, err
	}
	x, labels := train.Blobs(5, hlo.F32, batch, sizes[0], sizes[len(sizes)-1], 0.5)
	return step.Module, append(step.Init(6), x, labels), nil
}
