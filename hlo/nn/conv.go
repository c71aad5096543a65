package nn

import "github.com/vkxla/vkxla/hlo"

// Padding is how a convolution pads its input, as TensorFlow and Flax name it.
type Padding int

const (
	// Same pads so that the output has ⌈input/stride⌉ positions, the extra pad at
	// the end when the total is odd.
	Same Padding = iota
	// Valid does not pad: only windows that lie wholly inside the input.
	Valid
)

// nhwc are the dimension numbers of an NHWC input, HWIO kernel and NHWC output.
var nhwc = hlo.ConvDims{
	InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
	KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
	OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2},
}

// window is the spatial window of a kernel [KH, KW, …] over input [N, H, W, C].
func window(input, kernel X, stride int64, pad Padding) []hlo.WindowDim {
	return spatialWindow(input, kernel.Shape.Dims[:2], stride, pad)
}

// spatialWindow is the window of the given [height, width] over input [N, H, W, C].
func spatialWindow(input X, sizes []int64, stride int64, pad Padding) []hlo.WindowDim {
	w := make([]hlo.WindowDim, 2)
	for i := range w {
		in, size := input.Shape.Dims[1+i], sizes[i]
		w[i] = hlo.NewWindowDim(size)
		w[i].Stride = stride
		if pad == Same {
			out := (in + stride - 1) / stride
			total := max((out-1)*stride+size-in, 0)
			w[i].PadLow, w[i].PadHigh = total/2, total-total/2
		}
	}
	return w
}

// Conv2D convolves input [N, H, W, C] with kernel [KH, KW, C, O] (NHWC, HWIO),
// the same stride in both spatial dimensions.
func Conv2D(b *hlo.Builder, input, kernel X, stride int64, pad Padding) X {
	return b.Conv(input, kernel, window(input, kernel, stride, pad), nhwc, 1, 1)
}

// DepthwiseConv2D convolves each channel of input [N, H, W, C] with its own
// filters: kernel [KH, KW, 1, C·multiplier], one feature group per channel.
func DepthwiseConv2D(b *hlo.Builder, input, kernel X, stride int64, pad Padding) X {
	groups := input.Shape.Dims[3]
	return b.Conv(input, kernel, window(input, kernel, stride, pad), nhwc, groups, 1)
}

// BatchNorm are the inference-time statistics and affine parameters of a batch
// normalisation over channels, each [C].
type BatchNorm struct{ Scale, Offset, Mean, Variance X }

func (n BatchNorm) apply(b *hlo.Builder, x X) X {
	return BatchNormInference(b, x, n.Scale, n.Offset, n.Mean, n.Variance, 1e-3)
}

// MobileNetBlock is MobileNet v1's separable block: a 3×3 depthwise convolution
// (with the given stride), batch norm and ReLU6, then a 1×1 convolution to the
// kernel's output channels, batch norm and ReLU6.
func MobileNetBlock(b *hlo.Builder, x, depthwise X, dwNorm BatchNorm, pointwise X, pwNorm BatchNorm, stride int64) X {
	h := ReLU6(b, dwNorm.apply(b, DepthwiseConv2D(b, x, depthwise, stride, Same)))
	return ReLU6(b, pwNorm.apply(b, Conv2D(b, h, pointwise, 1, Same)))
}

// ResNetParams are a bottleneck block's three kernels (1×1 C→M, 3×3 M→M, 1×1 M→C)
// and their batch norms.
type ResNetParams struct {
	Reduce, Spatial, Expand          X
	ReduceNorm, SpatialNorm, ExpandN BatchNorm
}

// ResNetBlock is ResNet-50's bottleneck block with an identity shortcut:
// relu(x + BN(conv1×1(relu(BN(conv3×3(relu(BN(conv1×1(x))))))))).
func ResNetBlock(b *hlo.Builder, x X, p ResNetParams) X {
	h := ReLU(b, p.ReduceNorm.apply(b, Conv2D(b, x, p.Reduce, 1, Same)))
	h = ReLU(b, p.SpatialNorm.apply(b, Conv2D(b, h, p.Spatial, 1, Same)))
	return ReLU(b, b.Add(x, p.ExpandN.apply(b, Conv2D(b, h, p.Expand, 1, Same))))
}
