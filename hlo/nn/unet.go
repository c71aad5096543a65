package nn

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// UNetConfig sizes a Stable-Diffusion-style denoising UNet (the SD v2 layout):
// Channels per resolution level, ResBlocks per level, spatial transformers (self-
// and cross-attention, GEGLU feed-forward) at the levels where Attention is set,
// HeadDim channels per attention head, a text context of ContextLen tokens of
// ContextDim, GroupNorm with Groups groups.
type UNetConfig struct {
	Size, InChannels       int64 // latent image: [1, Size, Size, InChannels]
	Channels               []int64
	Attention              []bool
	ResBlocks              int
	HeadDim, Groups        int64
	ContextLen, ContextDim int64
}

// SDUNet is the Stable Diffusion v2 UNet at a 64×64 latent (512×512 images).
var SDUNet = UNetConfig{Size: 64, InChannels: 4, Channels: []int64{320, 640, 1280, 1280},
	Attention: []bool{true, true, true, false}, ResBlocks: 2, HeadDim: 64, Groups: 32,
	ContextLen: 77, ContextDim: 1024}

// UNetStep is one denoising step: the noise predicted for latent x [1, S, S, C]
// at timestep embedding temb [1, 4·Channels[0]] given the text context [1, L, D].
// Weights are named by their place in the network.
func UNetStep(b *hlo.Builder, x, temb, context X, c UNetConfig, w Weights) X {
	u := unet{b: b, c: c, w: w, ctx: context}
	tdim := 4 * c.Channels[0]
	t := Dense(b, SiLU(b, Dense(b, temb, w("time.w1", tdim, tdim), w("time.b1", tdim))), w("time.w2", tdim, tdim), w("time.b2", tdim))
	u.temb = SiLU(b, t)
	h := u.conv("in", x, 3, c.InChannels, c.Channels[0], 1)
	skips := []X{h}
	for lvl, ch := range c.Channels {
		for i := range c.ResBlocks {
			h = u.block(fmt.Sprintf("down%d.%d", lvl, i), h, ch, c.Attention[lvl])
			skips = append(skips, h)
		}
		if lvl < len(c.Channels)-1 {
			h = u.conv(fmt.Sprintf("down%d.pool", lvl), h, 3, ch, ch, 2)
			skips = append(skips, h)
		}
	}
	last := c.Channels[len(c.Channels)-1]
	h = u.res("mid.res0", h, last)
	h = u.transformer("mid.attn", h)
	h = u.res("mid.res1", h, last)
	for lvl := len(c.Channels) - 1; lvl >= 0; lvl-- {
		ch := c.Channels[lvl]
		for i := range c.ResBlocks + 1 {
			skip := skips[len(skips)-1]
			skips = skips[:len(skips)-1]
			h = u.block(fmt.Sprintf("up%d.%d", lvl, i), b.Concatenate(3, h, skip), ch, c.Attention[lvl])
		}
		if lvl > 0 {
			h = u.conv(fmt.Sprintf("up%d.upsample", lvl), upsample2(b, h), 3, ch, ch, 1)
		}
	}
	h = SiLU(b, u.norm("out.norm", h))
	return u.conv("out", h, 3, c.Channels[0], c.InChannels, 1)
}

type unet struct {
	b         *hlo.Builder
	c         UNetConfig
	w         Weights
	ctx, temb X
}

// block is a residual block to ch channels, then a spatial transformer if attn.
func (u unet) block(name string, x X, ch int64, attn bool) X {
	h := u.res(name+".res", x, ch)
	if attn {
		h = u.transformer(name+".attn", h)
	}
	return h
}

func (u unet) conv(name string, x X, k, in, out, stride int64) X {
	y := Conv2D(u.b, x, u.w(name+".w", k, k, in, out), stride, Same)
	return u.b.Add(y, broadcastTrailing(u.b, u.w(name+".b", out), y))
}

func (u unet) norm(name string, x X) X {
	ch := x.Shape.Dims[3]
	return GroupNorm(u.b, x, u.w(name+".scale", ch), u.w(name+".offset", ch), u.c.Groups, 1e-5)
}

// res is GN → SiLU → conv, plus the projected time embedding, GN → SiLU → conv,
// added to x (through a 1×1 convolution where the channels change).
func (u unet) res(name string, x X, ch int64) X {
	b, in := u.b, x.Shape.Dims[3]
	h := u.conv(name+".conv1", SiLU(b, u.norm(name+".norm1", x)), 3, in, ch, 1)
	t := Dense(b, u.temb, u.w(name+".temb.w", u.temb.Shape.Dims[1], ch), u.w(name+".temb.b", ch))
	h = b.Add(h, b.Broadcast(t, h.Shape.Dims, []int64{0, 3}))
	h = u.conv(name+".conv2", SiLU(b, u.norm(name+".norm2", h)), 3, ch, ch, 1)
	if in != ch {
		x = u.conv(name+".skip", x, 1, in, ch, 1)
	}
	return b.Add(x, h)
}

// transformer is SD's spatial transformer: GN, a projection to tokens, self-
// attention, cross-attention to the context, a GEGLU feed-forward (each pre-LN
// and residual), a projection back, added to x.
func (u unet) transformer(name string, x X) X {
	b, d := u.b, x.Shape.Dims
	ch, heads := d[3], d[3]/u.c.HeadDim
	w := func(n string, dims ...int64) X { return u.w(name+"."+n, dims...) }
	h := Dense(b, b.Reshape(u.norm(name+".norm", x), d[0], d[1]*d[2], ch), w("proj_in.w", ch, ch), w("proj_in.b", ch))
	ln := func(n string, x X) X { return LayerNorm(b, x, w(n+".scale", ch), w(n+".offset", ch), 1e-5) }
	self := AttentionParams{Q: w("attn1.q", ch, ch), K: w("attn1.k", ch, ch), V: w("attn1.v", ch, ch), O: w("attn1.o", ch, ch), OBias: w("attn1.o.b", ch)}
	h = b.Add(h, MultiHeadAttention(b, ln("ln1", h), self, heads, false))
	cross := AttentionParams{Q: w("attn2.q", ch, ch), K: w("attn2.k", u.c.ContextDim, ch), V: w("attn2.v", u.c.ContextDim, ch),
		O: w("attn2.o", ch, ch), OBias: w("attn2.o.b", ch)}
	q := splitHeads(b, Dense(b, ln("ln2", h), cross.Q, nil), heads)
	k := splitHeads(b, Dense(b, u.ctx, cross.K, nil), heads)
	v := splitHeads(b, Dense(b, u.ctx, cross.V, nil), heads)
	h = b.Add(h, attend(b, q, k, v, nil, cross))
	// GEGLU: (x·W + b) split in halves a, g: a · gelu(g), then back to ch.
	f := 4 * ch
	proj := Dense(b, ln("ln3", h), w("ff.w1", ch, 2*f), w("ff.b1", 2*f))
	pd := proj.Shape.Dims
	a := b.Slice(proj, []int64{0, 0, 0}, []int64{pd[0], pd[1], f}, nil)
	g := b.Slice(proj, []int64{0, 0, f}, []int64{pd[0], pd[1], 2 * f}, nil)
	h = b.Add(h, Dense(b, b.Mul(a, GELU(b, g)), w("ff.w2", f, ch), w("ff.b2", ch)))
	h = Dense(b, h, w("proj_out.w", ch, ch), w("proj_out.b", ch))
	return b.Add(x, b.Reshape(h, d...))
}

// SiLU is x · logistic(x).
func SiLU(b *hlo.Builder, x X) X { return b.Mul(x, b.Logistic(x)) }

// GroupNorm normalises NHWC x over (H, W, C/groups) per group and applies the
// per-channel scale and offset ([C]), with the biased variance.
func GroupNorm(b *hlo.Builder, x, scale, offset X, groups int64, eps float64) X {
	d := x.Shape.Dims
	g := b.Reshape(x, d[0], d[1]*d[2], groups, d[3]/groups)
	n := float64(d[1] * d[2] * (d[3] / groups))
	mean := func(v X) X {
		dt := v.Shape.DType
		s := b.Reduce([]X{v}, []X{b.ScalarConstant(dt, 0)}, b.Reducer(hlo.OpAdd, dt), []int64{1, 3})
		return b.Broadcast(b.Div(s, b.BroadcastScalar(b.ScalarConstant(dt, n), s.Shape.Dims...)), v.Shape.Dims, []int64{0, 2})
	}
	centred := b.Sub(g, mean(g))
	normed := b.Mul(centred, b.Rsqrt(b.Add(mean(b.Mul(centred, centred)), scalar(b, centred, eps))))
	y := b.Reshape(normed, d...)
	return b.Add(b.Mul(y, broadcastTrailing(b, scale, y)), broadcastTrailing(b, offset, y))
}

// upsample2 doubles the height and width of NHWC x by repeating each pixel.
func upsample2(b *hlo.Builder, x X) X {
	d := x.Shape.Dims
	wide := b.Broadcast(x, []int64{d[0], d[1], 2, d[2], 2, d[3]}, []int64{0, 1, 3, 5})
	return b.Reshape(wide, d[0], 2*d[1], 2*d[2], d[3])
}
