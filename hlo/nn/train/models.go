package train

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// glorot is the uniform Glorot (Xavier) initialisation of a fanIn → fanOut kernel.
func glorot(fanIn, fanOut int64) Init {
	return Init{Scale: math.Sqrt(6 / float64(fanIn+fanOut))}
}

func tensor(name string, dt hlo.DType, init Init, dims ...int64) Tensor {
	return Tensor{Name: name, Shape: hlo.MakeShape(dt, dims...), Init: init}
}

// Remat makes a model's layers checkpointed regions (jax.checkpoint, see
// hlo.Builder.Checkpoint): each run of Every consecutive layers (the MLP's dense
// layers, the transformer's blocks) is one region under Policy, so that the
// gradient recomputes what Policy does not save. Every = 0 checkpoints nothing.
// Name, when set, names every layer's output (jax.ad_checkpoint.checkpoint_name),
// for the name policies: SaveAndOffloadOnlyTheseNames(nil, []string{Name}) keeps
// each layer's output in host memory.
type Remat struct {
	Every  int
	Policy hlo.CheckpointPolicy
	Name   string
}

// layers applies n layers to x in groups of r.Every, each group a checkpointed
// region over x and the group's parameters (all of them inline when r.Every is
// 0). layer adds layer k (numbered from 0 over all groups) to b, reading its
// parameters from ps, the group's own.
func (r Remat) layers(b *hlo.Builder, n int, x nn.X, params func(k int) []nn.X,
	layer func(b *hlo.Builder, k int, x nn.X, ps []nn.X) nn.X) nn.X {
	every := r.Every
	if every <= 0 {
		every = n
	}
	for first := 0; first < n; first += every {
		last := min(first+every, n)
		var args []nn.X
		for k := first; k < last; k++ {
			args = append(args, params(k)...)
		}
		group := func(b *hlo.Builder, a []nn.X) nn.X {
			x, ps := a[0], a[1:]
			for k := first; k < last; k++ {
				np := len(params(k))
				x, ps = layer(b, k, x, ps[:np]), ps[np:]
				if r.Name != "" {
					x = b.CheckpointName(x, r.Name)
				}
			}
			return x
		}
		if r.Every <= 0 {
			x = group(b, append([]nn.X{x}, args...))
		} else {
			x = b.Checkpoint(r.Policy, group, append([]nn.X{x}, args...)...)
		}
	}
	return x
}

// MLP is a classifier x [batch, sizes[0]] → logits [batch, sizes[last]] through
// dense layers with ReLU between them (none after the last), trained with
// softmax cross-entropy against labels [batch, classes] (one-hot). Parameters:
// w0, b0, w1, b1, … (kernels [in, out], biases [out]).
func MLP(name string, dt hlo.DType, batch int64, sizes ...int64) Model {
	return CheckpointedMLP(name, dt, batch, Remat{}, sizes...)
}

// CheckpointedMLP is MLP with its dense layers in checkpointed regions of
// r.Every layers.
func CheckpointedMLP(name string, dt hlo.DType, batch int64, r Remat, sizes ...int64) Model {
	m := Model{Name: name, Batch: []Tensor{
		tensor("x", dt, Init{}, batch, sizes[0]),
		tensor("labels", dt, Init{}, batch, sizes[len(sizes)-1]),
	}}
	for i := 0; i+1 < len(sizes); i++ {
		m.Params = append(m.Params,
			tensor(fmt.Sprintf("w%d", i), dt, glorot(sizes[i], sizes[i+1]), sizes[i], sizes[i+1]),
			tensor(fmt.Sprintf("b%d", i), dt, Init{}, sizes[i+1]))
	}
	m.Loss = func(b *hlo.Builder, ps, batch []nn.X) nn.X {
		return nn.SoftmaxCrossEntropy(b, mlpLogits(b, ps, batch[0], r), batch[1])
	}
	return m
}

// mlpLogits runs x through the dense layers (pairs of kernel and bias in ps).
func mlpLogits(b *hlo.Builder, ps []nn.X, x nn.X, r Remat) nn.X {
	n := len(ps) / 2
	return r.layers(b, n, x, func(k int) []nn.X { return ps[2*k : 2*k+2] },
		func(b *hlo.Builder, k int, x nn.X, p []nn.X) nn.X {
			x = nn.Dense(b, x, p[0], p[1])
			if k+1 < n {
				x = nn.ReLU(b, x)
			}
			return x
		})
}

// LMConfig sizes TransformerLM.
type LMConfig struct {
	Vocab, Seq, Dim, Heads, Hidden, Batch int64
	// Blocks is the number of transformer blocks (0 means 1).
	Blocks int
	// Remat checkpoints the blocks (the zero value: none).
	Remat Remat
}

// TransformerLM is a decoder language model: tokens [batch, seq, vocab]
// (one-hot) are embedded (a dense [vocab, dim] table plus a learned position
// embedding [seq, dim]), go through c.Blocks pre-layernorm transformer blocks with
// causal multi-head attention and a GELU MLP (nn.TransformerBlock), a final
// layernorm and an unembedding [dim, vocab]; the loss is the softmax
// cross-entropy against targets [batch, seq, vocab] (one-hot next tokens), the
// mean over every position. Tokens come one-hot so that the embedding is a dot
// (its gradient a dot too) rather than a gather. Block k's parameters are named
// "block<k>.q" and so on. c.Remat puts the blocks in checkpointed regions.
func TransformerLM(name string, dt hlo.DType, c LMConfig) Model {
	d, blocks := c.Dim, max(c.Blocks, 1)
	ones := Init{Const: 1}
	m := Model{Name: name,
		Params: []Tensor{tensor("embed", dt, Init{Scale: 0.5}, c.Vocab, d), tensor("pos", dt, Init{Scale: 0.1}, c.Seq, d)},
		Batch: []Tensor{
			tensor("tokens", dt, Init{}, c.Batch, c.Seq, c.Vocab),
			tensor("targets", dt, Init{}, c.Batch, c.Seq, c.Vocab),
		},
	}
	for k := range blocks {
		m.Params = append(m.Params, blockParams(fmt.Sprintf("block%d.", k), dt, d, c.Hidden)...)
	}
	m.Params = append(m.Params, tensor("lnf.scale", dt, ones, d), tensor("lnf.bias", dt, Init{}, d),
		tensor("unembed", dt, glorot(d, c.Vocab), d, c.Vocab))
	m.Loss = func(b *hlo.Builder, p, batch []nn.X) nn.X {
		x := b.Add(nn.Dense(b, batch[0], p[0], nil), b.Broadcast(p[1], []int64{c.Batch, c.Seq, d}, []int64{1, 2}))
		x = c.Remat.layers(b, blocks, x, func(k int) []nn.X { return p[2+k*blockTensors : 2+(k+1)*blockTensors] },
			func(b *hlo.Builder, _ int, x nn.X, q []nn.X) nn.X {
				return nn.TransformerBlock(b, x, nn.TransformerParams{
					LN1Scale: q[0], LN1Bias: q[1],
					Attention: nn.AttentionParams{Q: q[2], K: q[3], V: q[4], O: q[5]},
					LN2Scale:  q[6], LN2Bias: q[7], W1: q[8], B1: q[9], W2: q[10], B2: q[11],
				}, c.Heads, true)
			})
		f := p[2+blocks*blockTensors:]
		logits := nn.Dense(b, nn.LayerNorm(b, x, f[0], f[1], 1e-5), f[2], nil)
		rows := c.Batch * c.Seq
		return nn.SoftmaxCrossEntropy(b, b.Reshape(logits, rows, c.Vocab), b.Reshape(batch[1], rows, c.Vocab))
	}
	return m
}

// blockTensors is the number of parameters of one transformer block.
const blockTensors = 12

// blockParams are one block's parameters (nn.TransformerParams' order).
func blockParams(prefix string, dt hlo.DType, d, f int64) []Tensor {
	ones := Init{Const: 1}
	return []Tensor{
		tensor(prefix+"ln1.scale", dt, ones, d), tensor(prefix+"ln1.bias", dt, Init{}, d),
		tensor(prefix+"q", dt, glorot(d, d), d, d), tensor(prefix+"k", dt, glorot(d, d), d, d),
		tensor(prefix+"v", dt, glorot(d, d), d, d), tensor(prefix+"o", dt, glorot(d, d), d, d),
		tensor(prefix+"ln2.scale", dt, ones, d), tensor(prefix+"ln2.bias", dt, Init{}, d),
		tensor(prefix+"w1", dt, glorot(d, f), d, f), tensor(prefix+"b1", dt, Init{}, f),
		tensor(prefix+"w2", dt, glorot(f, d), f, d), tensor(prefix+"b2", dt, Init{}, d),
	}
}

// ConvConfig sizes ConvNet: images [Batch, Size, Size, Channels], two 3×3
// convolutions to C1 and C2 channels, Classes outputs.
type ConvConfig struct {
	Batch, Size, Channels, C1, C2, Classes int64
}

// ConvNet is a small image classifier: conv 3×3 (Same) + bias, ReLU, 2×2 max
// pool (stride 2), conv 3×3 + bias, ReLU, global average pool, dense to the
// classes; softmax cross-entropy against one-hot labels [batch, classes].
func ConvNet(name string, dt hlo.DType, c ConvConfig) Model {
	m := Model{Name: name,
		Params: []Tensor{
			tensor("conv1", dt, glorot(9*c.Channels, 9*c.C1), 3, 3, c.Channels, c.C1), tensor("conv1.bias", dt, Init{}, c.C1),
			tensor("conv2", dt, glorot(9*c.C1, 9*c.C2), 3, 3, c.C1, c.C2), tensor("conv2.bias", dt, Init{}, c.C2),
			tensor("dense", dt, glorot(c.C2, c.Classes), c.C2, c.Classes), tensor("dense.bias", dt, Init{}, c.Classes),
		},
		Batch: []Tensor{
			tensor("images", dt, Init{}, c.Batch, c.Size, c.Size, c.Channels),
			tensor("labels", dt, Init{}, c.Batch, c.Classes),
		},
	}
	m.Loss = func(b *hlo.Builder, p, batch []nn.X) nn.X {
		h := convReLU(b, batch[0], p[0], p[1])
		h = convReLU(b, nn.MaxPool2D(b, h, 2, 2, nn.Valid), p[2], p[3])
		logits := nn.Dense(b, nn.GlobalAvgPool(b, h), p[4], p[5])
		return nn.SoftmaxCrossEntropy(b, logits, batch[1])
	}
	return m
}

func convReLU(b *hlo.Builder, x, kernel, bias nn.X) nn.X {
	y := nn.Conv2D(b, x, kernel, 1, nn.Same)
	return nn.ReLU(b, b.Add(y, b.Broadcast(bias, y.Shape.Dims, []int64{3})))
}
