package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestQuantisedFilter: the implicit GEMM of a convolution whose filter is a
// dequantised s4/s8/f8 weight (times a per-output-channel scale) reads the
// filter as packed u32 words (an R32 texel buffer or a u32 view) in both filter
// layouts where its rows start on a word, and element by element where they do
// not (odd channel counts). Every kernel validates (lowerOK); the numerics are
// TestQuantisedConvolutionOnDevice's.
func TestQuantisedFilter(t *testing.T) {
	ohwi := &hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelOutput: 0, KernelInput: 3, KernelSpatial: []int64{1, 2},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
	for _, tc := range []struct {
		name   string
		wdt    hlo.DType
		c, o   int64
		cd     *hlo.ConvDims
		scaled bool
		words  bool
	}{
		{"s4 HWIO", hlo.S4, 16, 24, convDims2D(), false, true},
		{"s4 HWIO per channel", hlo.S4, 16, 24, convDims2D(), true, true},
		{"s8 OHWI per channel", hlo.S8, 16, 24, ohwi, true, true},
		{"s4 OHWI", hlo.S4, 16, 24, ohwi, false, true},
		{"f8 HWIO", hlo.F8E4M3FN, 16, 24, convDims2D(), true, true},
		{"s4 HWIO odd O", hlo.S4, 5, 13, convDims2D(), true, false},
		{"s4 OHWI odd I", hlo.S4, 5, 13, ohwi, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "qconv")
			x := b.param(s(hlo.F32, 1, 10, 10, tc.c))
			kd := []int64{3, 3, tc.c, tc.o}
			if tc.cd == ohwi {
				kd = []int64{tc.o, 3, 3, tc.c}
			}
			w := b.param(s(tc.wdt, kd...))
			filter := b.declared(hlo.OpConvert, s(hlo.F32, kd...), hlo.Attributes{}, w)
			if tc.scaled {
				sc := b.param(s(hlo.F32, tc.o))
				sb := b.declared(hlo.OpBroadcast, s(hlo.F32, kd...), hlo.Attributes{Dimensions: []int64{tc.cd.KernelOutput}}, sc)
				filter = b.simple(hlo.OpMultiply, filter, sb)
			}
			root := b.op(hlo.OpConvolution, hlo.Attributes{Conv: tc.cd, Window: win(3, 1, 1, 1, 1), FeatureGroupCount: 1, BatchGroupCount: 1}, nil, x, filter)
			p := lowerOK(t, b.build(root))
			require.True(t, strings.HasSuffix(p.Dispatches[0].Kernel.Name, "conv_gemm"), p.Dispatches[0].Kernel.Name)
			d := disassembly(t, p)
			words := strings.Contains(d, "in1_u32") || strings.Contains(d, fmt.Sprintf("in1_%s", TexelR32U))
			require.Equal(t, tc.words, words, "the filter read as packed words (a u32 view or an R32 texel buffer)")
		})
	}
}
