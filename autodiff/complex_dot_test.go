package autodiff

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// complexDotCase differentiates both parts of dot(complex(ar, ai), complex(br,
// bi)), times exp of the lhs's first entry so that the function is not bilinear,
// by finite differences in every real parameter (c128 inside).
func complexDotCase(name string, lhs, rhs []int64, dims hlo.DotDims, perm []int64) fdCase {
	return fdCase{name: name, params: []hlo.Shape{f64s(lhs...), f64s(lhs...), f64s(rhs...), f64s(rhs...)}, gen: complexGen,
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			a, c := b.Complex(ps[0], ps[1]), b.Complex(ps[2], ps[3])
			d := b.DotGeneral(a, c, dims)
			if perm != nil {
				d = b.Transpose(d, perm...)
			}
			zero := make([]int64, len(lhs))
			one := make([]int64, len(lhs))
			for i := range one {
				one[i] = 1
			}
			first := b.Reshape(b.Slice(a, zero, one, nil))
			d = b.Mul(d, b.Broadcast(b.Exp(first), d.Shape.Dims, nil))
			return complexParts(b, b.Reshape(d, d.Shape.NumElements()))
		}}
}

func TestComplexDotVJP(t *testing.T) {
	runFD(t, []fdCase{
		complexDotCase("c128 matmul", []int64{2, 3}, []int64{3, 2},
			hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}, nil),
		complexDotCase("c128 batched", []int64{2, 2, 3}, []int64{2, 3, 2},
			hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}, nil),
		complexDotCase("c128 fno bixy,ioxy->boxy", []int64{2, 3, 2, 2}, []int64{3, 2, 2, 2},
			hlo.DotDims{LhsBatch: []int64{2, 3}, RhsBatch: []int64{2, 3}, LhsContracting: []int64{1}, RhsContracting: []int64{0}},
			[]int64{2, 3, 0, 1}),
	})
}

// TestComplexConvolutionVJP: both parts of a padded, strided complex convolution
// (two feature groups), times a complex scalar of the input, by finite
// differences in the real and imaginary parts of input and kernel.
func TestComplexConvolutionVJP(t *testing.T) {
	x, k := []int64{1, 4, 5}, []int64{4, 2, 3}
	runFD(t, []fdCase{{name: "c128 convolution", params: []hlo.Shape{f64s(x...), f64s(x...), f64s(k...), f64s(k...)}, gen: complexGen,
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			in, ker := b.Complex(ps[0], ps[1]), b.Complex(ps[2], ps[3])
			win := []hlo.WindowDim{{Size: 3, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
			dims := hlo.ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2},
				KernelOutput: 0, KernelInput: 1, KernelSpatial: []int64{2}, OutputBatch: 0, OutputFeature: 1, OutputSpatial: []int64{2}}
			c := b.Conv(in, ker, win, dims, 2, 1)
			first := b.Reshape(b.Slice(in, []int64{0, 0, 0}, []int64{1, 1, 1}, nil))
			c = b.Mul(c, b.Broadcast(b.Exp(first), c.Shape.Dims, nil))
			return complexParts(b, b.Reshape(c, c.Shape.NumElements()))
		}}})
}
