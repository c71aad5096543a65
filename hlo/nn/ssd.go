package nn

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Weights makes a model's weight tensors: called once per tensor, in a fixed
// order, with a name unique in the model and the tensor's dims (the caller picks
// parameters or constants, and the element type).
type Weights func(name string, dims ...int64) X

// SSDConfig sizes MobileNetSSD.
type SSDConfig struct {
	// Size is the input's height and width (300 for SSD300).
	Size int64
	// Classes counts the classes, background included (91 for COCO).
	Classes int64
	// Width is MobileNet's depth multiplier α: every layer's channels are scaled
	// by it (1 for the full network; 0 means 1).
	Width float64
}

// ssdBackbone is MobileNet v1 after its first convolution: each separable block's
// depthwise stride and pointwise output channels.
var ssdBackbone = []struct{ stride, out int64 }{
	{1, 64}, {2, 128}, {1, 128}, {2, 256}, {1, 256}, {2, 512},
	{1, 512}, {1, 512}, {1, 512}, {1, 512}, {1, 512}, {2, 1024}, {1, 1024},
}

// ssdFirstMap is the backbone block whose output is SSD's first feature map
// (MobileNet's conv11, 19×19×512 at 300×300).
const ssdFirstMap = 10

// ssdExtras are the extra feature layers after the backbone: a 1×1 convolution to
// mid channels, then a 3×3 stride-2 one to out channels, each a feature map.
var ssdExtras = []struct{ mid, out int64 }{{256, 512}, {128, 256}, {128, 256}, {64, 128}}

// MobileNetSSD is the SSD300 detector on MobileNet v1 as TensorFlow's object
// detection API exports it for inference (ssd_mobilenet_v1): batch norms folded
// into the convolutions' biases, ReLU6 after every backbone and extra layer, SAME
// padding. Over images [N, S, S, 3] (NHWC, any float type: bf16 storage makes
// every convolution bf16 with f32 accumulation, as frontends emit it) it runs a
// 3×3 stride-2 convolution to 32 channels and MobileNet's 13 separable blocks
// (a 3×3 depthwise and a 1×1 convolution each), then 4 extra layer pairs; six
// feature maps (blocks 11 and 13 and the extras) each get a 1×1 box and a 1×1
// class predictor for 3 anchors per position (the first map) or 6. That is 34
// dense and 13 depthwise convolutions: 2.47 GFLOP at 300×300 with α = 1. It
// returns the box encodings [N, anchors, 4] and class logits [N, anchors,
// classes] (1917 anchors at 300×300); decoding and non-maximum suppression are
// left to the host, as in the exported model.
func MobileNetSSD(b *hlo.Builder, images X, c SSDConfig, w Weights) (boxes, classes X) {
	width := c.Width
	if width == 0 {
		width = 1
	}
	ch := func(n int64) int64 { return max(int64(float64(n)*width), 1) }
	in := images.Shape.Dims[3]
	h := convBiasReLU6(b, images, w, "conv0", 3, in, ch(32), 2, false)
	var maps []X
	for i, blk := range ssdBackbone {
		h = SeparableBlock(b, h, w, fmt.Sprintf("block%d", i+1), blk.stride, ch(blk.out))
		if i == ssdFirstMap {
			maps = append(maps, h)
		}
	}
	maps = append(maps, h)
	for i, e := range ssdExtras {
		name := fmt.Sprintf("extra%d", i+1)
		h = convBiasReLU6(b, h, w, name+".reduce", 1, h.Shape.Dims[3], ch(e.mid), 1, false)
		h = convBiasReLU6(b, h, w, name+".conv", 3, h.Shape.Dims[3], ch(e.out), 2, false)
		maps = append(maps, h)
	}
	var boxParts, classParts []X
	for i, m := range maps {
		anchors := int64(6)
		if i == 0 {
			anchors = 3
		}
		name := fmt.Sprintf("head%d", i)
		boxParts = append(boxParts, predictor(b, m, w, name+".box", anchors, 4))
		classParts = append(classParts, predictor(b, m, w, name+".class", anchors, c.Classes))
	}
	return b.Concatenate(1, boxParts...), b.Concatenate(1, classParts...)
}

// SeparableBlock is MobileNet v1's block with its batch norms folded into biases,
// as an inference export has it: a 3×3 depthwise convolution of x [N, H, W, C]
// (with the given stride) + bias, ReLU6, then a 1×1 convolution to out channels
// + bias, ReLU6. Its weights are name+".depthwise" [3, 3, 1, C] and
// name+".pointwise" [1, 1, C, out], each with a ".bias".
func SeparableBlock(b *hlo.Builder, x X, w Weights, name string, stride, out int64) X {
	c := x.Shape.Dims[3]
	h := convBiasReLU6(b, x, w, name+".depthwise", 3, c, c, stride, true)
	return convBiasReLU6(b, h, w, name+".pointwise", 1, c, out, 1, false)
}

// convBiasReLU6 is a size×size convolution of x (depthwise: one filter per
// channel) to out channels with a bias, then ReLU6; its kernel is HWIO and its
// bias [out], named name and name+".bias".
func convBiasReLU6(b *hlo.Builder, x X, w Weights, name string, size, in, out, stride int64, depthwise bool) X {
	var y X
	if depthwise {
		y = DepthwiseConv2D(b, x, w(name, size, size, 1, out), stride, Same)
	} else {
		y = Conv2D(b, x, w(name, size, size, in, out), stride, Same)
	}
	return ReLU6(b, b.Add(y, broadcastTrailing(b, w(name+".bias", out), y)))
}

// predictor is an SSD head: a 1×1 convolution of the feature map m [N, H, W, C]
// to anchors·values channels plus a bias, reshaped to [N, H·W·anchors, values].
func predictor(b *hlo.Builder, m X, w Weights, name string, anchors, values int64) X {
	d := m.Shape.Dims
	y := Conv2D(b, m, w(name, 1, 1, d[3], anchors*values), 1, Same)
	y = b.Add(y, broadcastTrailing(b, w(name+".bias", anchors*values), y))
	return b.Reshape(y, d[0], d[1]*d[2]*anchors, values)
}
