package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// refAttention is multi-head attention by the definition, for queries at
// positions qpos over keys/values kv (rows of [B, T, D]); key t is visible to the
// query at position p when visible(t, p).
func refAttention(q, k, v tensor, qpos []int64, heads int64, visible func(t, p int64) bool) tensor {
	batch, seq, d := q.dims[0], q.dims[1], q.dims[2]
	keys, dh := k.dims[1], d/heads
	ctx := newTensor(batch, seq, d)
	for bi := range batch {
		for h := range heads {
			for s := range seq {
				scores := make([]float64, keys)
				for tk := range keys {
					dot := 0.0
					for j := range dh {
						dot += q.at(bi, s, h*dh+j) * k.at(bi, tk, h*dh+j)
					}
					scores[tk] = dot / math.Sqrt(float64(dh))
					if !visible(tk, qpos[s]) {
						scores[tk] = math.Inf(-1)
					}
				}
				p := softmaxRow(scores)
				for j := range dh {
					sum := 0.0
					for tk := range keys {
						sum += p[tk] * v.at(bi, tk, h*dh+j)
					}
					ctx.set(sum, bi, s, h*dh+j)
				}
			}
		}
	}
	return ctx
}

func attentionParams(rng *rand.Rand, d int64) []tensor {
	ws := make([]tensor, 4)
	for i := range ws {
		ws[i] = randomTensor(rng, d, d)
	}
	return ws
}

func TestMultiHeadAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const heads = 2
	x := randomTensor(rng, 2, 4, 6)
	ws := attentionParams(rng, 6)
	for _, causal := range []bool{false, true} {
		b := hlo.NewBuilder("attention")
		px := x.param(b, "x")
		p := AttentionParams{Q: ws[0].param(b, "wq"), K: ws[1].param(b, "wk"), V: ws[2].param(b, "wv"), O: ws[3].param(b, "wo")}
		got := evaluate(t, b, MultiHeadAttention(b, px, p, heads, causal), x, ws[0], ws[1], ws[2], ws[3])
		visible := func(tk, p int64) bool { return !causal || tk <= p }
		ctx := refAttention(matmulLast(x, ws[0]), matmulLast(x, ws[1]), matmulLast(x, ws[2]), []int64{0, 1, 2, 3}, heads, visible)
		assertClose(t, "attention", got[0], matmulLast(ctx, ws[3]), 1e-13)
	}
}

func TestDecodeAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const heads, maxLen, pos = 2, 5, 2
	x := randomTensor(rng, 1, 1, 4)
	ws := attentionParams(rng, 4)
	// Positions after pos hold garbage that the mask must hide.
	kc, vc := randomTensor(rng, 1, maxLen, heads, 2), randomTensor(rng, 1, maxLen, heads, 2)
	b := hlo.NewBuilder("decode")
	px := x.param(b, "x")
	p := AttentionParams{Q: ws[0].param(b, "wq"), K: ws[1].param(b, "wk"), V: ws[2].param(b, "wv"), O: ws[3].param(b, "wo")}
	cache := KVCache{K: kc.param(b, "k_cache"), V: vc.param(b, "v_cache")}
	out, next := DecodeAttention(b, px, p, cache, b.Parameter(hlo.Scalar(hlo.S32), "pos"))
	got := evaluate(t, b, b.Tuple(out, next.K, next.V), x, ws[0], ws[1], ws[2], ws[3], kc, vc,
		literalInput{hlo.ScalarLiteral(int32(pos))})
	// The cache with this token's key and value written at pos, by the definition.
	wantK, wantV := tensor{dims: kc.dims, v: append([]float64{}, kc.v...)}, tensor{dims: vc.dims, v: append([]float64{}, vc.v...)}
	copy(wantK.v[pos*4:pos*4+4], matmulLast(x, ws[1]).v)
	copy(wantV.v[pos*4:pos*4+4], matmulLast(x, ws[2]).v)
	assertClose(t, "k cache", got[1], wantK, 0)
	assertClose(t, "v cache", got[2], wantV, 0)
	flat := func(c tensor) tensor { return tensor{dims: []int64{1, maxLen, 4}, v: c.v} }
	ctx := refAttention(matmulLast(x, ws[0]), flat(wantK), flat(wantV), []int64{pos}, heads,
		func(tk, p int64) bool { return tk <= p })
	assertClose(t, "decode attention", got[0], matmulLast(ctx, ws[3]), 1e-13)
}

func TestTransformerBlockIsItsParts(t *testing.T) {
	// The block equals its definition written out with the already tested parts.
	rng := rand.New(rand.NewPCG(9, 10))
	x := randomTensor(rng, 1, 3, 4)
	vals := []tensor{randomTensor(rng, 4), randomTensor(rng, 4)}
	vals = append(vals, attentionParams(rng, 4)...)
	vals = append(vals, randomTensor(rng, 4), randomTensor(rng, 4), randomTensor(rng, 4, 8), randomTensor(rng, 8),
		randomTensor(rng, 8, 4), randomTensor(rng, 4))
	b := hlo.NewBuilder("block")
	px := x.param(b, "x")
	ps := make([]X, len(vals))
	for i, v := range vals {
		ps[i] = v.param(b, "p")
	}
	p := TransformerParams{LN1Scale: ps[0], LN1Bias: ps[1], Attention: AttentionParams{Q: ps[2], K: ps[3], V: ps[4], O: ps[5]},
		LN2Scale: ps[6], LN2Bias: ps[7], W1: ps[8], B1: ps[9], W2: ps[10], B2: ps[11]}
	h := b.Add(px, MultiHeadAttention(b, LayerNorm(b, px, ps[0], ps[1], 1e-5), p.Attention, 2, true))
	byHand := b.Add(h, Dense(b, GELU(b, Dense(b, LayerNorm(b, h, ps[6], ps[7], 1e-5), ps[8], ps[9])), ps[10], ps[11]))
	inputs := append([]input{x}, inputsOf(vals)...)
	got := evaluate(t, b, b.Tuple(TransformerBlock(b, px, p, 2, true), byHand), inputs...)
	assertClose(t, "block", got[0], got[1], 0)
}

func inputsOf(ts []tensor) []input {
	ins := make([]input, len(ts))
	for i, t := range ts {
		ins[i] = t
	}
	return ins
}

// addBias is x [..., n] + bias [n] by the definition.
func addBias(x, bias tensor) tensor {
	return rowsOf(x, func(row []float64) []float64 {
		out := make([]float64, len(row))
		for i, v := range row {
			out[i] = v + bias.v[i]
		}
		return out
	})
}

func TestAttentionBiases(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := randomTensor(rng, 1, 3, 4)
	ws := attentionParams(rng, 4)
	bs := []tensor{randomTensor(rng, 4), randomTensor(rng, 4), randomTensor(rng, 4), randomTensor(rng, 4)}
	b := hlo.NewBuilder("attention")
	px := x.param(b, "x")
	p := AttentionParams{Q: ws[0].param(b, "wq"), K: ws[1].param(b, "wk"), V: ws[2].param(b, "wv"), O: ws[3].param(b, "wo"),
		QBias: bs[0].param(b, "bq"), KBias: bs[1].param(b, "bk"), VBias: bs[2].param(b, "bv"), OBias: bs[3].param(b, "bo")}
	got := evaluate(t, b, MultiHeadAttention(b, px, p, 2, false), append([]input{x}, inputsOf(append(ws, bs...))...)...)
	proj := func(i int) tensor { return addBias(matmulLast(x, ws[i]), bs[i]) }
	ctx := refAttention(proj(0), proj(1), proj(2), []int64{0, 1, 2}, 2, func(int64, int64) bool { return true })
	assertClose(t, "attention with biases", got[0], addBias(matmulLast(ctx, ws[3]), bs[3]), 1e-13)
}

// blockParams makes a block's parameters on b from vals (TransformerParams'
// order, attention biases after the projections when there are 16 values).
func blockParams(b *hlo.Builder, vals []tensor) TransformerParams {
	ps := make([]X, len(vals))
	for i, v := range vals {
		ps[i] = v.param(b, "p")
	}
	p := TransformerParams{LN1Scale: ps[0], LN1Bias: ps[1], Attention: AttentionParams{Q: ps[2], K: ps[3], V: ps[4], O: ps[5]},
		LN2Scale: ps[6], LN2Bias: ps[7], W1: ps[8], B1: ps[9], W2: ps[10], B2: ps[11]}
	if len(ps) == 16 {
		p.Attention.QBias, p.Attention.KBias, p.Attention.VBias, p.Attention.OBias = ps[12], ps[13], ps[14], ps[15]
	}
	return p
}

func randomBlock(rng *rand.Rand, d, f int64, biases bool) []tensor {
	vals := []tensor{randomTensor(rng, d), randomTensor(rng, d)}
	vals = append(vals, attentionParams(rng, d)...)
	vals = append(vals, randomTensor(rng, d), randomTensor(rng, d), randomTensor(rng, d, f), randomTensor(rng, f),
		randomTensor(rng, f, d), randomTensor(rng, d))
	if biases {
		vals = append(vals, randomTensor(rng, d), randomTensor(rng, d), randomTensor(rng, d), randomTensor(rng, d))
	}
	return vals
}

func TestEncoderLayerIsItsParts(t *testing.T) {
	// BERT's post-layernorm layer written out with the already tested parts.
	rng := rand.New(rand.NewPCG(13, 14))
	x := randomTensor(rng, 2, 3, 4)
	vals := randomBlock(rng, 4, 8, true)
	b := hlo.NewBuilder("encoder")
	px := x.param(b, "x")
	p := blockParams(b, vals)
	h := LayerNorm(b, b.Add(px, MultiHeadAttention(b, px, p.Attention, 2, false)), p.LN1Scale, p.LN1Bias, 1e-12)
	byHand := LayerNorm(b, b.Add(h, Dense(b, GELU(b, Dense(b, h, p.W1, p.B1)), p.W2, p.B2)), p.LN2Scale, p.LN2Bias, 1e-12)
	got := evaluate(t, b, b.Tuple(EncoderLayer(b, px, p, 2), byHand), append([]input{x}, inputsOf(vals)...)...)
	assertClose(t, "encoder layer", got[0], got[1], 0)
}

func TestDecodeBlockIsItsParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	x := randomTensor(rng, 1, 1, 4)
	vals := randomBlock(rng, 4, 8, false)
	kc, vc := randomTensor(rng, 1, 5, 2, 2), randomTensor(rng, 1, 5, 2, 2)
	b := hlo.NewBuilder("decode_block")
	px := x.param(b, "x")
	p := blockParams(b, vals)
	cache := KVCache{K: kc.param(b, "k_cache"), V: vc.param(b, "v_cache")}
	pos := b.Parameter(hlo.Scalar(hlo.S32), "pos")
	out, next := DecodeBlock(b, px, p, cache, pos)
	a, byHandCache := DecodeAttention(b, LayerNorm(b, px, p.LN1Scale, p.LN1Bias, 1e-5), p.Attention, cache, pos)
	h := b.Add(px, a)
	byHand := b.Add(h, Dense(b, GELU(b, Dense(b, LayerNorm(b, h, p.LN2Scale, p.LN2Bias, 1e-5), p.W1, p.B1)), p.W2, p.B2))
	inputs := append(append([]input{x}, inputsOf(vals)...), kc, vc, literalInput{hlo.ScalarLiteral(int32(3))})
	got := evaluate(t, b, b.Tuple(out, byHand, next.K, byHandCache.K, next.V, byHandCache.V), inputs...)
	assertClose(t, "decode block", got[0], got[1], 0)
	assertClose(t, "k cache", got[2], got[3], 0)
	assertClose(t, "v cache", got[4], got[5], 0)
}
