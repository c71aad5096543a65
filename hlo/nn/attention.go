package nn

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// AttentionParams are the projections of multi-head attention, each [D, D], and
// their biases, each [D]: nil for none, as in most decoder LLMs (BERT has them).
type AttentionParams struct {
	Q, K, V, O                 X
	QBias, KBias, VBias, OBias X
}

// splitHeads reshapes [B, S, D] to [B, S, heads, D/heads].
func splitHeads(b *hlo.Builder, x X, heads int64) X {
	d := x.Shape.Dims
	return b.Reshape(x, d[0], d[1], heads, d[2]/heads)
}

// MultiHeadAttention is self-attention over x [B, S, D] with the given number of
// heads: softmax(q·kᵀ/√dh + mask)·v, projected by O. causal masks every key
// after its query (a decoder).
func MultiHeadAttention(b *hlo.Builder, x X, p AttentionParams, heads int64, causal bool) X {
	q := splitHeads(b, Dense(b, x, p.Q, p.QBias), heads)
	k := splitHeads(b, Dense(b, x, p.K, p.KBias), heads)
	v := splitHeads(b, Dense(b, x, p.V, p.VBias), heads)
	var mask X
	if causal {
		seq := x.Shape.Dims[1]
		mask = keyAtOrBefore(b, b.Iota(hlo.MakeShape(hlo.S32, seq, seq), 0), seq)
	}
	return attend(b, q, k, v, mask, p)
}

// keyAtOrBefore is pred[S, keys]: key j is visible to the query whose position
// the [S, keys] s32 tensor pos holds (j ≤ pos).
func keyAtOrBefore(b *hlo.Builder, pos X, keys int64) X {
	key := b.Iota(hlo.MakeShape(hlo.S32, pos.Shape.Dims[0], keys), 1)
	return b.Compare(key, pos, hlo.CmpLE)
}

// attend computes the attention of q [B, S, h, dh] over k, v [B, T, h, dh] with
// an optional pred[S, T] mask, and projects the heads back with p's output
// projection.
func attend(b *hlo.Builder, q, k, v, mask X, p AttentionParams) X {
	dims, dh := q.Shape.Dims, float64(q.Shape.Dims[3])
	// [B, h, S, T]: batch dims first, then q's free dim, then k's.
	scores := b.DotGeneral(q, k, hlo.DotDims{LhsBatch: []int64{0, 2}, RhsBatch: []int64{0, 2},
		LhsContracting: []int64{3}, RhsContracting: []int64{3}})
	scores = b.Mul(scores, scalar(b, scores, 1/math.Sqrt(dh)))
	if mask != nil {
		wide := b.Broadcast(mask, scores.Shape.Dims, []int64{2, 3})
		scores = b.Select(wide, scores, scalar(b, scores, math.Inf(-1)))
	}
	probs := Softmax(b, scores)
	// [B, h, S, dh] → [B, S, h, dh] → [B, S, D].
	ctx := b.DotGeneral(probs, v, hlo.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 2},
		LhsContracting: []int64{3}, RhsContracting: []int64{1}})
	ctx = b.Reshape(b.Transpose(ctx, 0, 2, 1, 3), dims[0], dims[1], dims[2]*dims[3])
	return Dense(b, ctx, p.O, p.OBias)
}

// KVCache holds the keys and values of the positions decoded so far, each
// [B, T, heads, D/heads] for a maximum length T.
type KVCache struct{ K, V X }

// DecodeAttention is one decoding step of causal self-attention: x [B, 1, D] is
// the token at position pos (an s32 scalar); its key and value are written into
// the cache at pos, and it attends to positions 0…pos. It returns the attention
// output and the updated cache.
func DecodeAttention(b *hlo.Builder, x X, p AttentionParams, cache KVCache, pos X) (X, KVCache) {
	heads := cache.K.Shape.Dims[2]
	q := splitHeads(b, Dense(b, x, p.Q, p.QBias), heads)
	zero := b.ScalarConstant(hlo.S32, 0)
	at := []X{zero, pos, zero, zero}
	next := KVCache{
		K: b.DynamicUpdateSlice(cache.K, splitHeads(b, Dense(b, x, p.K, p.KBias), heads), at),
		V: b.DynamicUpdateSlice(cache.V, splitHeads(b, Dense(b, x, p.V, p.VBias), heads), at),
	}
	keys := cache.K.Shape.Dims[1]
	mask := keyAtOrBefore(b, b.BroadcastScalar(pos, 1, keys), keys)
	return attend(b, q, next.K, next.V, mask, p), next
}

// TransformerParams are one pre-layernorm transformer block's weights (GPT-2's
// layout): layernorms [D], attention projections [D, D], an MLP D → F → D.
type TransformerParams struct {
	LN1Scale, LN1Bias X
	Attention         AttentionParams
	LN2Scale, LN2Bias X
	W1, B1, W2, B2    X
}

// TransformerBlock is x + attention(LN(x)), then h + MLP(LN(h)) with a GELU MLP,
// over x [B, S, D].
func TransformerBlock(b *hlo.Builder, x X, p TransformerParams, heads int64, causal bool) X {
	h := b.Add(x, MultiHeadAttention(b, LayerNorm(b, x, p.LN1Scale, p.LN1Bias, 1e-5), p.Attention, heads, causal))
	return b.Add(h, mlp(b, LayerNorm(b, h, p.LN2Scale, p.LN2Bias, 1e-5), p))
}

func mlp(b *hlo.Builder, x X, p TransformerParams) X {
	return Dense(b, GELU(b, Dense(b, x, p.W1, p.B1)), p.W2, p.B2)
}

// EncoderLayer is BERT's post-layernorm encoder layer over x [B, S, D]:
// h = LN(x + attention(x)), then LN(h + MLP(h)) with a GELU MLP, attention
// unmasked (every token sees every other). BERT's layernorm epsilon is 1e-12.
func EncoderLayer(b *hlo.Builder, x X, p TransformerParams, heads int64) X {
	const eps = 1e-12
	h := LayerNorm(b, b.Add(x, MultiHeadAttention(b, x, p.Attention, heads, false)), p.LN1Scale, p.LN1Bias, eps)
	return LayerNorm(b, b.Add(h, mlp(b, h, p)), p.LN2Scale, p.LN2Bias, eps)
}

// DecodeBlock is one decoding step of TransformerBlock (causal, pre-layernorm)
// for the token x [B, 1, D] at position pos (an s32 scalar), attending through
// the KV cache (DecodeAttention). It returns the block's output and the updated
// cache.
func DecodeBlock(b *hlo.Builder, x X, p TransformerParams, cache KVCache, pos X) (X, KVCache) {
	a, next := DecodeAttention(b, LayerNorm(b, x, p.LN1Scale, p.LN1Bias, 1e-5), p.Attention, cache, pos)
	h := b.Add(x, a)
	return b.Add(h, mlp(b, LayerNorm(b, h, p.LN2Scale, p.LN2Bias, 1e-5), p)), next
}
