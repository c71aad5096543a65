package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// refConv is a 2-D NHWC/HWIO convolution by the definition: output (n, y, x, o)
// sums input (n, y·s + i − padTop, x·s + j − padLeft, c) · kernel (i, j, c', o)
// over the window, where c' is c within its group (groups = C / kernel's I).
func refConv(in, k tensor, stride int64, pad Padding) tensor {
	n, h, w, c := in.dims[0], in.dims[1], in.dims[2], in.dims[3]
	kh, kw, ki, ko := k.dims[0], k.dims[1], k.dims[2], k.dims[3]
	groups := c / ki
	oh, padT := outSize(h, kh, stride, pad)
	ow, padL := outSize(w, kw, stride, pad)
	out := newTensor(n, oh, ow, ko)
	for b := range n {
		for y := range oh {
			for x := range ow {
				for o := range ko {
					g := o / (ko / groups)
					sum := 0.0
					for i := range kh {
						for j := range kw {
							iy, ix := y*stride+i-padT, x*stride+j-padL
							if iy < 0 || iy >= h || ix < 0 || ix >= w {
								continue
							}
							for ci := range ki {
								sum += in.at(b, iy, ix, g*ki+ci) * k.at(i, j, ci, o)
							}
						}
					}
					out.set(sum, b, y, x, o)
				}
			}
		}
	}
	return out
}

// outSize is TensorFlow's rule: SAME gives ⌈in/stride⌉ positions with the odd pad
// at the end, VALID ⌊(in − k)/stride⌋ + 1.
func outSize(in, k, stride int64, pad Padding) (size, padLow int64) {
	if pad == Valid {
		return (in-k)/stride + 1, 0
	}
	size = (in + stride - 1) / stride
	return size, max((size-1)*stride+k-in, 0) / 2
}

func TestConv2D(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	in := randomTensor(rng, 2, 7, 6, 3)
	for _, tc := range []struct {
		name   string
		k      tensor
		stride int64
		pad    Padding
		depth  bool
	}{
		{"3x3 same", randomTensor(rng, 3, 3, 3, 4), 1, Same, false},
		{"3x3 same stride 2 (odd pad at the end)", randomTensor(rng, 3, 3, 3, 4), 2, Same, false},
		{"2x2 same stride 2", randomTensor(rng, 2, 2, 3, 5), 2, Same, false},
		{"3x3 valid", randomTensor(rng, 3, 3, 3, 2), 1, Valid, false},
		{"1x1", randomTensor(rng, 1, 1, 3, 4), 1, Same, false},
		{"depthwise 3x3", randomTensor(rng, 3, 3, 1, 3), 1, Same, true},
		{"depthwise 3x3 stride 2, multiplier 2", randomTensor(rng, 3, 3, 1, 6), 2, Same, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := hlo.NewBuilder("conv")
			x, k := in.param(b, "x"), tc.k.param(b, "k")
			conv := Conv2D
			if tc.depth {
				conv = DepthwiseConv2D
			}
			got := evaluate(t, b, conv(b, x, k, tc.stride, tc.pad), in, tc.k)
			assertClose(t, tc.name, got[0], refConv(in, tc.k, tc.stride, tc.pad), 1e-13)
		})
	}
}

func TestConvBlocksAreTheirParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	in := randomTensor(rng, 1, 5, 5, 4)
	norm := func(b *hlo.Builder, c int64) BatchNorm {
		v := randomTensor(rng, c)
		for i := range v.v {
			v.v[i] = v.v[i]*v.v[i] + 0.5
		}
		return BatchNorm{b.Constant(randomTensor(rng, c).literal()), b.Constant(randomTensor(rng, c).literal()),
			b.Constant(randomTensor(rng, c).literal()), b.Constant(v.literal())}
	}
	b := hlo.NewBuilder("blocks")
	x := in.param(b, "x")
	dw, pw := b.Constant(randomTensor(rng, 3, 3, 1, 4).literal()), b.Constant(randomTensor(rng, 1, 1, 4, 8).literal())
	n1, n2 := norm(b, 4), norm(b, 8)
	mobile := MobileNetBlock(b, x, dw, n1, pw, n2, 2)
	mobileByHand := ReLU6(b, n2.apply(b, Conv2D(b, ReLU6(b, n1.apply(b, DepthwiseConv2D(b, x, dw, 2, Same))), pw, 1, Same)))
	rp := ResNetParams{Reduce: b.Constant(randomTensor(rng, 1, 1, 4, 2).literal()), Spatial: b.Constant(randomTensor(rng, 3, 3, 2, 2).literal()),
		Expand: b.Constant(randomTensor(rng, 1, 1, 2, 4).literal()), ReduceNorm: norm(b, 2), SpatialNorm: norm(b, 2), ExpandN: norm(b, 4)}
	res := ResNetBlock(b, x, rp)
	h := ReLU(b, rp.ReduceNorm.apply(b, Conv2D(b, x, rp.Reduce, 1, Same)))
	h = ReLU(b, rp.SpatialNorm.apply(b, Conv2D(b, h, rp.Spatial, 1, Same)))
	resByHand := ReLU(b, b.Add(x, rp.ExpandN.apply(b, Conv2D(b, h, rp.Expand, 1, Same))))
	got := evaluate(t, b, b.Tuple(mobile, mobileByHand, res, resByHand), in)
	if got[0].dims[1] != 3 || got[0].dims[3] != 8 {
		t.Fatalf("mobilenet block output %v, want [1 3 3 8]", got[0].dims)
	}
	assertClose(t, "mobilenet block", got[0], got[1], 0)
	assertClose(t, "resnet block", got[2], got[3], 0)
}
