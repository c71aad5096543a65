package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla/hlo"
)

// Contractions, convolution, batch normalisation and random bits.

// Dot is XLA's Dot (ranks 1 and 2).
func (b *Builder) Dot(lhs, rhs backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Dot", lhs, rhs)
	if err != nil {
		return nil, err
	}
	return b.wrap("Dot", b.hb.Dot(ns[0].in, ns[1].in))
}

// DotGeneral contracts and batches the given axes: the result is batch axes,
// lhs free axes, rhs free axes.
func (b *Builder) DotGeneral(lhs backends.Op, lhsContracting, lhsBatch []int,
	rhs backends.Op, rhsContracting, rhsBatch []int) (backends.Op, error) {
	ns, err := b.nodes("DotGeneral", lhs, rhs)
	if err != nil {
		return nil, err
	}
	dims := hlo.DotDims{
		LhsBatch: int64s(lhsBatch), RhsBatch: int64s(rhsBatch),
		LhsContracting: int64s(lhsContracting), RhsContracting: int64s(rhsContracting),
	}
	return b.wrap("DotGeneral", b.hb.DotGeneral(ns[0].in, ns[1].in, dims))
}

// ConvGeneral is XLA's convolution with GoMLX's axes; empty strides and
// dilations mean 1, empty paddings 0.
func (b *Builder) ConvGeneral(input, kernel backends.Op, axes backends.ConvolveAxesConfig,
	strides []int, pads [][2]int, inputDil, kernelDil []int, channelGroups, batchGroups int) (backends.Op, error) {
	ns, err := b.nodes("ConvGeneral", input, kernel)
	if err != nil {
		return nil, err
	}
	n := len(axes.KernelSpatial)
	sizes := make([]int, n)
	for i, a := range axes.KernelSpatial {
		if a < 0 || a >= ns[1].shape.Rank() {
			return nil, fmt.Errorf("vkxla backend: ConvGeneral: kernel spatial axis %d of %s", a, ns[1].shape)
		}
		sizes[i] = ns[1].shape.Dimensions[a]
	}
	ones := make([]int, n)
	for i := range ones {
		ones[i] = 1
	}
	if len(strides) == 0 {
		strides = ones
	}
	w, err := window(n, sizes, strides, inputDil, kernelDil, pads)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: ConvGeneral: %w", err)
	}
	dims := hlo.ConvDims{
		InputBatch: int64(axes.InputBatch), InputFeature: int64(axes.InputChannels), InputSpatial: int64s(axes.InputSpatial),
		KernelInput: int64(axes.KernelInputChannels), KernelOutput: int64(axes.KernelOutputChannels), KernelSpatial: int64s(axes.KernelSpatial),
		OutputBatch: int64(axes.OutputBatch), OutputFeature: int64(axes.OutputChannels), OutputSpatial: int64s(axes.OutputSpatial),
	}
	return b.wrap("ConvGeneral", b.hb.Conv(ns[0].in, ns[1].in, w, dims, int64(channelGroups), int64(batchGroups)))
}

func (b *Builder) BatchNormForInference(operand, scale, offset, mean, variance backends.Op, epsilon float32, axis int) (backends.Op, error) {
	ns, err := b.nodes("BatchNormForInference", operand, scale, offset, mean, variance)
	if err != nil {
		return nil, err
	}
	in := b.hb.BatchNormInference(ns[0].in, ns[1].in, ns[2].in, ns[3].in, ns[4].in, epsilon, int64(axis))
	return b.wrap("BatchNormForInference", in)
}

// elements wraps the n elements of the tuple in.
func (b *Builder) elements(what string, in *hlo.Instruction, n int) ([]backends.Op, error) {
	out := make([]backends.Op, n)
	for i := range out {
		var get *hlo.Instruction
		if in != nil {
			get = b.hb.GetTupleElement(in, int64(i))
		}
		node, err := b.wrap(what, get)
		if err != nil {
			return nil, err
		}
		out[i] = node
	}
	return out, nil
}

func (b *Builder) BatchNormForTraining(operand, scale, offset backends.Op, epsilon float32, axis int) (backends.Op, backends.Op, backends.Op, error) {
	ns, err := b.nodes("BatchNormForTraining", operand, scale, offset)
	if err != nil {
		return nil, nil, nil, err
	}
	in := b.hb.BatchNormTraining(ns[0].in, ns[1].in, ns[2].in, epsilon, int64(axis))
	els, err := b.elements("BatchNormForTraining", in, 3)
	if err != nil {
		return nil, nil, nil, err
	}
	return els[0], els[1], els[2], nil
}

func (b *Builder) BatchNormGradient(operand, scale, mean, variance, gradOutput backends.Op, epsilon float32, axis int) (backends.Op, backends.Op, backends.Op, error) {
	ns, err := b.nodes("BatchNormGradient", operand, scale, mean, variance, gradOutput)
	if err != nil {
		return nil, nil, nil, err
	}
	in := b.hb.BatchNormGrad(ns[0].in, ns[1].in, ns[2].in, ns[3].in, ns[4].in, epsilon, int64(axis))
	els, err := b.elements("BatchNormGradient", in, 3)
	if err != nil {
		return nil, nil, nil, err
	}
	return els[0], els[1], els[2], nil
}

// RNGBitGenerator is XLA's rng-bit-generator with Philox, GoMLX's algorithm
// (its state is u64[3]).
func (b *Builder) RNGBitGenerator(state backends.Op, shape shapes.Shape) (backends.Op, backends.Op, error) {
	ns, err := b.nodes("RNGBitGenerator", state)
	if err != nil {
		return nil, nil, err
	}
	hs, err := hloShape(shape)
	if err != nil {
		return nil, nil, err
	}
	in := b.hb.RngBitGenerator(ns[0].in, hlo.RngPhilox, hs)
	els, err := b.elements("RNGBitGenerator", in, 2)
	if err != nil {
		return nil, nil, err
	}
	return els[0], els[1], nil
}
