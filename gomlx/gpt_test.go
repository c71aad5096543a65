package gomlx_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/graph"
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/core/tensors"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// The model suite's GPT-2 decode step (bench/models.go's gptDecode: two
// pre-layernorm blocks decoding one token at a position through a KV cache of
// maxLen positions per block, nn.DecodeBlock; a final layernorm and logits)
// written in GoMLX, and the same step built with hlo/nn. Outputs: the logits,
// then each block's updated key and value caches.

// gptSizes: width d, heads, MLP width f, cache length maxLen, vocabulary, the
// position decoded.
type gptSizes struct {
	d, heads, f, maxLen, vocab int
	at                         int32
}

// gptBlocks is the suite's block count.
const gptBlocks = 2

// gptSmall is the model suite's small step; gptMedium a step of GPT-2's cache
// length at a quarter of its width (GPT-2 small: 768 wide, 12 heads, 3072).
var (
	gptSmall  = gptSizes{16, 2, 32, 8, 11, 5}
	gptMedium = gptSizes{192, 3, 768, 512, 4096, 300}
)

// gptParams lists the token, the position, each block's caches and weights, the
// final layernorm and the unembedding, in the order both programs take them.
func gptParams(s gptSizes) []param {
	d, dh := s.d, s.d/s.heads
	at := s.at
	ps := []param{{name: "token", dims: []int{1, 1, d}}, {name: "pos", index: &at}}
	for k := range gptBlocks {
		for _, p := range []param{
			{name: "k_cache", dims: []int{1, s.maxLen, s.heads, dh}}, {name: "v_cache", dims: []int{1, s.maxLen, s.heads, dh}},
			{name: "ln1.scale", dims: []int{d}}, {name: "ln1.bias", dims: []int{d}},
			{name: "q", dims: []int{d, d}}, {name: "k", dims: []int{d, d}}, {name: "v", dims: []int{d, d}}, {name: "o", dims: []int{d, d}},
			{name: "ln2.scale", dims: []int{d}}, {name: "ln2.bias", dims: []int{d}},
			{name: "w1", dims: []int{d, s.f}}, {name: "b1", dims: []int{s.f}}, {name: "w2", dims: []int{s.f, d}}, {name: "b2", dims: []int{d}},
		} {
			p.name = fmt.Sprintf("block%d.%s", k, p.name)
			ps = append(ps, p)
		}
	}
	return append(ps, param{name: "lnf.scale", dims: []int{d}}, param{name: "lnf.bias", dims: []int{d}},
		param{name: "unembed", dims: []int{d, s.vocab}})
}

// gptBlockParams is the number of parameters of one block.
const gptBlockParams = 14

// gptGoMLX is the decode step in GoMLX: in holds gptParams' nodes.
func gptGoMLX(in []*graph.Node) []*graph.Node {
	x, pos := in[0], in[1]
	outs := []*graph.Node{nil}
	for k := range gptBlocks {
		w := in[2+k*gptBlockParams : 2+(k+1)*gptBlockParams]
		a, nk, nv := decodeAttention(layerNorm(x, w[2], w[3], 1e-5), w, pos)
		h := graph.Add(x, a)
		x = graph.Add(h, dense(gelu(dense(layerNorm(h, w[8], w[9], 1e-5), w[10], w[11])), w[12], w[13]))
		outs = append(outs, nk, nv)
	}
	n := len(in)
	x = layerNorm(x, in[n-3], in[n-2], 1e-5)
	outs[0] = graph.DotGeneral(x, []int{2}, nil, in[n-1], []int{0}, nil)
	return outs
}

// decodeAttention writes x's key and value into the block's caches (w[0], w[1])
// at pos and attends over positions 0…pos; w[4:8] are q, k, v, o.
func decodeAttention(x *graph.Node, w []*graph.Node, pos *graph.Node) (out, nextK, nextV *graph.Node) {
	cache := w[0].Shape().Dimensions // [1, T, h, dh]
	split := func(y *graph.Node) *graph.Node { return graph.Reshape(y, 1, 1, cache[2], cache[3]) }
	proj := func(p *graph.Node) *graph.Node { return graph.DotGeneral(x, []int{2}, nil, p, []int{0}, nil) }
	zero := graph.ScalarZero(x.Graph(), dtypes.Int32)
	at := []*graph.Node{zero, pos, zero, zero}
	nextK = graph.DynamicUpdateSlice(w[0], split(proj(w[5])), at)
	nextV = graph.DynamicUpdateSlice(w[1], split(proj(w[6])), at)
	q := split(proj(w[4]))
	scores := graph.DotGeneral(q, []int{3}, []int{0, 2}, nextK, []int{3}, []int{0, 2}) // [1, h, 1, T]
	scores = graph.MulScalar(scores, 1/math.Sqrt(float64(cache[3])))
	keys := graph.Iota(x.Graph(), shapes.Make(dtypes.Int32, 1, cache[2], 1, cache[1]), 3)
	visible := graph.LessOrEqual(keys, graph.BroadcastToDims(pos, 1, cache[2], 1, cache[1]))
	scores = graph.Where(visible, scores, graph.BroadcastToDims(graph.Infinity(x.Graph(), dtypes.Float32, -1), scores.Shape().Dimensions...))
	ctx := graph.DotGeneral(graph.Softmax(scores, -1), []int{3}, []int{0, 1}, nextV, []int{1}, []int{0, 2}) // [1, h, 1, dh]
	ctx = graph.Reshape(graph.TransposeAllDims(ctx, 0, 2, 1, 3), 1, 1, cache[2]*cache[3])
	return graph.DotGeneral(ctx, []int{2}, nil, w[7], []int{0}, nil), nextK, nextV
}

// gptModule is the same step built with hlo/nn, its parameters in gptParams'
// order.
func gptModule(s gptSizes) (*hlo.Module, error) {
	b := hlo.NewBuilder("gpt_decode")
	ps := map[string]*hlo.Instruction{}
	for _, p := range gptParams(s) {
		ps[p.name] = b.Parameter(p.shape(), p.name)
	}
	x := ps["token"]
	outs := []*hlo.Instruction{nil}
	for k := range gptBlocks {
		w := func(name string) *hlo.Instruction { return ps[fmt.Sprintf("block%d.%s", k, name)] }
		tp := nn.TransformerParams{LN1Scale: w("ln1.scale"), LN1Bias: w("ln1.bias"),
			Attention: nn.AttentionParams{Q: w("q"), K: w("k"), V: w("v"), O: w("o")},
			LN2Scale:  w("ln2.scale"), LN2Bias: w("ln2.bias"), W1: w("w1"), B1: w("b1"), W2: w("w2"), B2: w("b2")}
		var next nn.KVCache
		x, next = nn.DecodeBlock(b, x, tp, nn.KVCache{K: w("k_cache"), V: w("v_cache")}, ps["pos"])
		outs = append(outs, next.K, next.V)
	}
	outs[0] = nn.Dense(b, nn.LayerNorm(b, x, ps["lnf.scale"], ps["lnf.bias"], 1e-5), ps["unembed"], nil)
	return b.Build(b.Tuple(outs...))
}

// TestGPTDecodeAgreesWithModelSuite: the decode step written in GoMLX, on the
// vkxla backend, gives the model suite's step on cpuref: the logits within 1e-4
// of their largest magnitude, the caches (copies with the position's key and
// value written) within 1e-5.
func TestGPTDecodeAgreesWithModelSuite(t *testing.T) {
	s := gptSmall
	ps := gptParams(s)
	outs, want := bothPrograms(t, ps, 4, gptGoMLX, func() (*hlo.Module, error) { return gptModule(s) })
	if len(outs) != len(want.Elems()) {
		t.Fatalf("%d outputs, want %d", len(outs), len(want.Elems()))
	}
	for i, w := range want.Elems() {
		tol := 1e-5
		if i == 0 {
			tol = 1e-4 * maxAbs(w)
		}
		if err := agree(tensors.MustCopyFlatData[float32](outs[i]), w, tol); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

// BenchmarkGPTDecode: one decode step at gptMedium's sizes; see benchModelSuite.
// Not on simplego: GoMLX v0.26.0's simplego has no DynamicUpdateSlice (the cache
// update).
func BenchmarkGPTDecode(b *testing.B) {
	benchModelSuite(b, gptParams(gptMedium), gptGoMLX, func() (*hlo.Module, error) { return gptModule(gptMedium) }, false)
}
