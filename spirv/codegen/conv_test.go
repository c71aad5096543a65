package codegen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestConvolutionSplitK: an integer convolution whose output elements sum 66564
// terms (a 258×258 window over one feature, past lavapipe's loop bound) lowers
// to two dispatches sharing one scratch buffer of a partial sum per element and
// chunk (17 chunks of 4096), each valid SPIR-V within the bound; a float one is
// an implicit GEMM split over taps (128 parts, to fill the device: 2×3 outputs
// are one block) with f32 partials for bf16 too; a short one stays one kernel.
func TestConvolutionSplitK(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.BF16, hlo.S32} {
		b := newCB(t, "conv")
		x, k := b.param(s(dt, 2, 258, 258, 1)), b.param(s(dt, 258, 258, 1, 3))
		w := []hlo.WindowDim{hlo.NewWindowDim(258), hlo.NewWindowDim(258)}
		p := lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil, x, k)))
		require.Len(t, p.Dispatches, 2, dt.String())
		if dt == hlo.S32 {
			require.Equal(t, []int64{2 * 3 * 17 * 4}, p.Scratch, dt.String())
			continue
		}
		require.Equal(t, "conv_gemm_partial", p.Dispatches[0].Kernel.Name[len("conv_"):], dt.String())
		require.Equal(t, []int64{128 * 2 * 3 * 4}, p.Scratch, dt.String())
	}
	b := newCB(t, "conv")
	x, k := b.param(s(hlo.F32, 2, 8, 8, 4)), b.param(s(hlo.F32, 3, 3, 4, 3))
	w := []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(3)}
	p := lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil, x, k)))
	require.Len(t, p.Dispatches, 1)
	require.Empty(t, p.Scratch)
	// A smaller loop bound shrinks the chunks: 66564 terms in chunks of 250.
	target := LavapipeTarget()
	target.MaxLoopIterations = 1000
	b = newCB(t, "conv")
	x, k = b.param(s(hlo.F32, 1, 258, 258, 1)), b.param(s(hlo.F32, 258, 258, 1, 1))
	w = []hlo.WindowDim{hlo.NewWindowDim(258), hlo.NewWindowDim(258)}
	p = lowerFor(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil, x, k)), target)
	require.Equal(t, []int64{(66564 + 249) / 250 * 4}, p.Scratch)
}

// TestSelectAndScatterDilated: window- and base-dilated select-and-scatter lowers
// to valid SPIR-V (the device tests compare it with cpuref).
func TestSelectAndScatterDilated(t *testing.T) {
	w := []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(2)}
	w[0].Stride, w[0].WindowDilation, w[0].PadLow, w[0].PadHigh = 2, 2, 1, 1
	w[1].BaseDilation, w[1].WindowDilation = 2, 3
	b := newCB(t, "sas")
	// Rows: 9+2 padded, extent 5, stride 2 → 4; columns: 7 dilated to 13, extent 4 → 10.
	x, src := b.param(s(hlo.F32, 9, 7)), b.param(s(hlo.F32, 4, 10))
	init := b.constant(hlo.ScalarLiteral(float32(0)))
	lowerOK(t, b.build(b.op(hlo.OpSelectAndScatter, hlo.Attributes{Window: w},
		[]*hlo.Computation{compareComp(t, hlo.CmpGE, hlo.F32), scalarComp(t, hlo.OpAdd, hlo.F32)}, x, src, init)))
}
