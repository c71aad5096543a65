package autodiff

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func convCase(name string, x, k hlo.Shape, win []hlo.WindowDim, dims hlo.ConvDims, fgc, bgc int64) fdCase {
	return fdCase{name: name, params: []hlo.Shape{x, k},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Conv(ps[0], ps[1], win, dims, fgc, bgc)
		}}
}

func win(size, stride, lo, hi, wdil, bdil int64) hlo.WindowDim {
	return hlo.WindowDim{Size: size, Stride: stride, PadLow: lo, PadHigh: hi, WindowDilation: wdil, BaseDilation: bdil}
}

func convolutionCases(t *testing.T) []fdCase {
	nhwc := hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelSpatial: []int64{0, 1}, KernelInput: 2, KernelOutput: 3,
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
	// Feature and batch dims in unusual places: input f0b1 … (dim_labels 0fb1_1io0->f10b).
	odd := hlo.ConvDims{InputBatch: 2, InputFeature: 1, InputSpatial: []int64{0, 3},
		KernelInput: 1, KernelOutput: 2, KernelSpatial: []int64{3, 0},
		OutputBatch: 3, OutputFeature: 0, OutputSpatial: []int64{2, 1}}
	return []fdCase{
		convCase("1-d plain", f64s(2, 3, 6), f64s(4, 3, 3), []hlo.WindowDim{win(3, 1, 0, 0, 1, 1)}, hlo.DefaultConvDims(1), 1, 1),
		convCase("2-d strided padded", f64s(1, 2, 5, 6), f64s(3, 2, 2, 3),
			[]hlo.WindowDim{win(2, 2, 1, 0, 1, 1), win(3, 2, 1, 2, 1, 1)}, hlo.DefaultConvDims(2), 1, 1),
		convCase("2-d window dilation", f64s(2, 6, 7, 2), f64s(2, 3, 2, 3),
			[]hlo.WindowDim{win(2, 1, 0, 1, 2, 1), win(3, 2, 1, 1, 2, 1)}, nhwc, 1, 1),
		convCase("base dilation (transposed conv)", f64s(1, 2, 4), f64s(2, 2, 3),
			[]hlo.WindowDim{win(3, 1, 2, 2, 1, 2)}, hlo.DefaultConvDims(1), 1, 1),
		convCase("negative padding", f64s(1, 1, 8), f64s(2, 1, 3),
			[]hlo.WindowDim{win(3, 2, -1, -2, 1, 1)}, hlo.DefaultConvDims(1), 1, 1),
		convCase("feature groups", f64s(2, 4, 5), f64s(6, 2, 2),
			[]hlo.WindowDim{win(2, 1, 1, 0, 1, 1)}, hlo.DefaultConvDims(1), 2, 1),
		convCase("depthwise strided dilated", f64s(1, 3, 9), f64s(3, 1, 3),
			[]hlo.WindowDim{win(3, 2, 1, 1, 2, 1)}, hlo.DefaultConvDims(1), 3, 1),
		convCase("batch groups", f64s(4, 2, 5), f64s(4, 2, 3),
			[]hlo.WindowDim{win(3, 1, 1, 1, 1, 1)}, hlo.DefaultConvDims(1), 1, 2),
		convCase("window reversal in one dim", f64s(1, 2, 5, 4), f64s(2, 2, 3, 2),
			[]hlo.WindowDim{{Size: 3, Stride: 2, PadLow: 1, PadHigh: 0, WindowDilation: 1, BaseDilation: 1, WindowReversal: true},
				win(2, 1, 0, 1, 2, 1)}, hlo.DefaultConvDims(2), 1, 1),
		convCase("odd dim labels grouped", f64s(5, 4, 2, 4), f64s(2, 2, 4, 2),
			[]hlo.WindowDim{win(2, 2, 0, 1, 1, 1), win(2, 1, 1, 0, 1, 2)}, odd, 2, 1),
	}
}

func TestConvolutionVJP(t *testing.T) { runFD(t, convolutionCases(t)) }
