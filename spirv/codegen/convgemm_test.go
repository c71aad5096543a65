package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

// convTestCase is one convolution for the strategy tests: its layout, operand
// shapes, window and groups, and the kernels it must lower to (by name suffix).
type convTestCase struct {
	name    string
	cd      *hlo.ConvDims
	x, k    hlo.Shape
	w       []hlo.WindowDim
	groups  int64
	kernels string
}

func nchwDims() *hlo.ConvDims { d := hlo.DefaultConvDims(2); return &d }

func ohwiDims() *hlo.ConvDims {
	return &hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelOutput: 0, KernelInput: 3, KernelSpatial: []int64{1, 2},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
}

func win(size, stride, pad, rhsDil, lhsDil int64) []hlo.WindowDim {
	w := make([]hlo.WindowDim, 2)
	for i := range w {
		w[i] = hlo.WindowDim{Size: size, Stride: stride, PadLow: pad, PadHigh: pad, WindowDilation: rhsDil, BaseDilation: lhsDil}
	}
	return w
}

func convTestCases() []convTestCase {
	var cases []convTestCase
	for _, dt := range []hlo.DType{hlo.F32, hlo.F16, hlo.BF16} {
		cases = append(cases,
			convTestCase{fmt.Sprintf("nhwc-hwio-3x3/%v", dt), convDims2D(), s(dt, 2, 19, 19, 32), s(dt, 3, 3, 32, 64), win(3, 1, 1, 1, 1), 1, "conv_gemm"},
			convTestCase{fmt.Sprintf("nchw-oihw-3x3s2/%v", dt), nchwDims(), s(dt, 2, 16, 20, 20), s(dt, 24, 16, 3, 3), win(3, 2, 1, 1, 1), 1, "conv_gemm"},
			convTestCase{fmt.Sprintf("nhwc-ohwi-1x1/%v", dt), ohwiDims(), s(dt, 1, 14, 14, 64), s(dt, 48, 1, 1, 64), win(1, 1, 0, 1, 1), 1, "conv_gemm"},
			convTestCase{fmt.Sprintf("depthwise/%v", dt), convDims2D(), s(dt, 1, 20, 20, 32), s(dt, 3, 3, 1, 32), win(3, 2, 1, 1, 1), 32, "depthwise"},
			// A filter gradient's shape: few outputs, 400 taps.
			convTestCase{fmt.Sprintf("split/%v", dt), convDims2D(), s(dt, 8, 20, 20, 4), s(dt, 20, 20, 4, 8), win(20, 1, 0, 1, 1), 1,
				"conv_gemm_partial,conv_gemm_sum"},
		)
	}
	return append(cases,
		convTestCase{"dilated-lhs-rhs", convDims2D(), s(hlo.F32, 2, 9, 9, 8), s(hlo.F32, 3, 3, 8, 16), win(3, 1, 2, 2, 2), 1, "conv_gemm"},
		convTestCase{"groups", convDims2D(), s(hlo.F32, 2, 9, 9, 16), s(hlo.F32, 3, 3, 4, 24), win(3, 1, 1, 1, 1), 4, "conv_gemm"},
		convTestCase{"negative-padding", convDims2D(), s(hlo.F32, 2, 12, 12, 8), s(hlo.F32, 3, 3, 8, 16), win(3, 1, -1, 1, 1), 1, "conv_gemm"},
		convTestCase{"depthwise-nchw", nchwDims(), s(hlo.F32, 1, 32, 20, 20), s(hlo.F32, 32, 1, 3, 3), win(3, 1, 1, 1, 1), 32, "conv"},
		convTestCase{"depthwise-loop", convDims2D(), s(hlo.F32, 1, 30, 6, 8), s(hlo.F32, 27, 3, 1, 8),
			[]hlo.WindowDim{hlo.NewWindowDim(27), hlo.NewWindowDim(3)}, 8, "depthwise"},
		convTestCase{"1d-depthwise", &hlo.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1}, KernelInput: 1, KernelOutput: 2,
			KernelSpatial: []int64{0}, OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}},
			s(hlo.F32, 2, 30, 16), s(hlo.F32, 5, 1, 16), []hlo.WindowDim{{Size: 5, Stride: 1, PadLow: 2, PadHigh: 2, WindowDilation: 1, BaseDilation: 1}}, 16, "depthwise"},
		convTestCase{"no-spatial-dims", &hlo.ConvDims{InputBatch: 0, InputFeature: 1, KernelInput: 0, KernelOutput: 1, OutputBatch: 0, OutputFeature: 1},
			s(hlo.F32, 64, 48), s(hlo.F32, 48, 32), nil, 1, "conv_gemm"},
		convTestCase{"no-spatial-dims-depthwise", &hlo.ConvDims{InputBatch: 0, InputFeature: 1, KernelInput: 0, KernelOutput: 1, OutputBatch: 0, OutputFeature: 1},
			s(hlo.F32, 64, 48), s(hlo.F32, 1, 48), nil, 48, "conv"},
		convTestCase{"integer", convDims2D(), s(hlo.S32, 2, 9, 9, 8), s(hlo.S32, 3, 3, 8, 16), win(3, 1, 1, 1, 1), 1, "conv"},
	)
}

// smallTarget has the limits of a small real device: 16 KiB of shared memory,
// 128 invocations per workgroup, a grid of 64 workgroups per dimension and a
// loop bound of 4000, with 8×8 GEMM blocks.
func smallTarget() Target {
	t := LavapipeTarget()
	t.MaxSharedMemory, t.MaxWorkgroupInvocations = 16<<10, 128
	t.MaxWorkgroupSize = [3]uint32{128, 128, 64}
	t.MaxWorkgroupCount = [3]uint32{64, 64, 64}
	t.MaxLoopIterations = 4000
	t.GemmBlock = [2]uint32{8, 8}
	return t
}

// TestConvolutionStrategies: float convolutions lower to the implicit GEMM (split
// over taps for a filter gradient's shape), depthwise ones to their kernel, and
// integer or NCHW-output depthwise ones to the elemental kernel, for lavapipe and
// a small device; every kernel validates and Facts agree with Lower.
func TestConvolutionStrategies(t *testing.T) {
	for _, target := range []Target{LavapipeTarget(), smallTarget()} {
		for _, tc := range convTestCases() {
			t.Run(fmt.Sprintf("%s/%d", tc.name, target.MaxWorkgroupInvocations), func(t *testing.T) {
				c := tc.computation(t)
				p := lowerFor(t, c, target)
				var names []string
				for _, d := range p.Dispatches {
					names = append(names, strings.TrimPrefix(d.Kernel.Name, "conv_"))
				}
				require.Equal(t, tc.kernels, strings.Join(names, ","))
				checkFacts(t, tc.name, c, target)
			})
		}
	}
}

func (tc convTestCase) computation(t testing.TB) *hlo.Computation {
	b := newCB(t, "conv")
	x, k := b.param(tc.x), b.param(tc.k)
	attrs := hlo.Attributes{Conv: tc.cd, Window: tc.w, FeatureGroupCount: tc.groups, BatchGroupCount: 1}
	return b.build(b.op(hlo.OpConvolution, attrs, nil, x, k))
}

// TestConvolutionSplitForLoopBound: a contraction whose taps × input-feature
// quads exceed a quarter of the loop bound is split into enough tap ranges to
// fit it, even with many blocks.
func TestConvolutionSplitForLoopBound(t *testing.T) {
	target := LavapipeTarget()
	target.MaxLoopIterations = 400
	b := newCB(t, "conv")
	// 25 taps × (1 + 64/4) = 425 iterations: 5 parts of at most 5 taps.
	x, k := b.param(s(hlo.F32, 1, 64, 64, 64)), b.param(s(hlo.F32, 5, 5, 64, 64))
	c := b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: win(5, 1, 2, 1, 1)}, nil, x, k))
	p := lowerFor(t, c, target)
	require.Len(t, p.Dispatches, 2)
	require.Equal(t, []int64{5 * 64 * 64 * 64 * 4}, p.Scratch)
	checkFacts(t, "split-for-bound", c, target)
}

// filterGradDims are the dims autodiff gives an NHWC convolution's filter
// gradient: the images (NHWC) with their features as the batch and their batch
// as the features, the output's cotangent (NHWC) as the filter, the result HWIO.
func filterGradDims() *hlo.ConvDims {
	return &hlo.ConvDims{InputBatch: 3, InputFeature: 0, InputSpatial: []int64{1, 2},
		KernelInput: 0, KernelOutput: 3, KernelSpatial: []int64{1, 2},
		OutputBatch: 2, OutputFeature: 3, OutputSpatial: []int64{0, 1}}
}

// TestConvolutionVec4Loads: the implicit GEMM reads both operands through vec4
// aliases for NHWC × HWIO, NHWC × OHWI and a filter gradient of NHWC images (rows
// ordered image-feature minor, four rows one vec4), and neither for NCHW × OIHW.
func TestConvolutionVec4Loads(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    convTestCase
		want bool
	}{
		{"nhwc-hwio", convTestCases()[0], true},
		{"nhwc-ohwi", convTestCases()[2], true},
		{"filter-gradient", convTestCase{cd: filterGradDims(), x: s(hlo.F32, 4, 12, 12, 8), k: s(hlo.F32, 4, 12, 12, 16),
			w: []hlo.WindowDim{{Size: 12, Stride: 1, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1},
				{Size: 12, Stride: 1, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}, groups: 1}, true},
		{"nchw-oihw", convTestCases()[1], false},
	} {
		p := lowerOK(t, tc.c.computation(t))
		text := disassemble(t, p.Dispatches[0].Kernel)
		for n := range 2 {
			require.Equal(t, tc.want, readsVec4(text, n), "%s: input %d", tc.name, n)
		}
	}
}

func disassemble(t *testing.T, k *Kernel) string {
	t.Helper()
	words, err := spirv.Words(k.SPIRV)
	require.NoError(t, err)
	text, err := tools.Disassemble(words)
	require.NoError(t, err)
	return text
}

func loopBound(n int64) Target {
	t := LavapipeTarget()
	t.MaxLoopIterations = n
	return t
}

// TestConvolutionBatchGroups: a convolution with batch groups (the filter
// gradient autodiff emits for a grouped convolution) lowers to the implicit GEMM,
// one GEMM per group, split over taps where its contraction is long, for lavapipe
// and a small device, reading the images a vec4 of four rows at a time; with one
// output feature per group (a depthwise convolution's filter gradient) it runs
// the depthwise filter-gradient kernel (four features a vec4), unless the
// features are not a multiple of 4 or its loop over the images would pass the
// loop bound. Every kernel validates and Facts agree with
// Lower.
func TestConvolutionBatchGroups(t *testing.T) {
	grad := func(n, h, c, o, groups int64) convTestCase {
		w := hlo.WindowDim{Size: h, Stride: 1, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}
		return convTestCase{cd: filterGradDims(), x: s(hlo.F32, n, h, h, c), k: s(hlo.F32, n, h, h, o),
			w: []hlo.WindowDim{w, w}, groups: groups}
	}
	for _, tc := range []struct {
		name    string
		c       convTestCase
		target  Target
		kernels string
	}{
		{"grouped", grad(2, 6, 16, 24, 4), LavapipeTarget(), "conv_gemm"},
		{"grouped-long", grad(2, 20, 16, 24, 4), LavapipeTarget(), "conv_gemm_partial,conv_gemm_sum"},
		{"grouped-small-device", grad(2, 20, 16, 24, 4), smallTarget(), "conv_gemm_partial,conv_gemm_sum"},
		{"depthwise", grad(2, 6, 16, 16, 16), LavapipeTarget(), "conv_dwgrad_partial,conv_gemm_sum"},
		{"depthwise-small-device", grad(2, 20, 16, 16, 16), smallTarget(), "conv_dwgrad_partial,conv_gemm_sum"},
		{"depthwise-6-features", grad(2, 6, 6, 6, 6), LavapipeTarget(), "conv"},
		// 16 images per gradient pixel: past a quarter of a 64-iteration bound.
		{"depthwise-loop-bound", grad(16, 6, 16, 16, 16), loopBound(64), "conv_partial,conv_sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "conv")
			x, k := b.param(tc.c.x), b.param(tc.c.k)
			attrs := hlo.Attributes{Conv: tc.c.cd, Window: tc.c.w, FeatureGroupCount: 1, BatchGroupCount: tc.c.groups}
			c := b.build(b.op(hlo.OpConvolution, attrs, nil, x, k))
			p := lowerFor(t, c, tc.target)
			var names []string
			for _, d := range p.Dispatches {
				names = append(names, strings.TrimPrefix(d.Kernel.Name, "conv_"))
			}
			require.Equal(t, tc.kernels, strings.Join(names, ","))
			direct := tc.kernels == "conv" || strings.HasPrefix(tc.kernels, "conv_partial")
			if !direct { // the images four at a time; the dwgrad kernel's gradient too
				text := disassemble(t, p.Dispatches[0].Kernel)
				require.True(t, readsVec4(text, 0))
				require.Equal(t, strings.HasPrefix(tc.kernels, "conv_dwgrad"), readsVec4(text, 1))
			}
			checkFacts(t, tc.name, c, tc.target)
		})
	}
}

// TestConvolutionPhases: an lhs-dilated convolution (a strided convolution's
// input gradient) orders its implicit GEMM's rows phase-major, each phase's rows
// padded to whole blocks, where that keeps padding rows under half the work;
// not with rhs dilation in a dilated dim, nor for a long contraction split over
// taps. Every kernel validates and Facts agree with Lower.
func TestConvolutionPhases(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        convTestCase
		rows     int64 // phase-major rows; 0: not phased
		perPhase int64
	}{
		// 2×2 phases of 2·10·10 pixel slots (a 19×19 output), rounded up to 208 rows.
		{"stride2", convTestCase{cd: convDims2D(), x: s(hlo.F32, 2, 10, 10, 16), k: s(hlo.F32, 3, 3, 16, 8), w: win(3, 1, 1, 1, 2)}, 4 * 208, 208},
		{"stride3-nchw", convTestCase{cd: nchwDims(), x: s(hlo.F32, 1, 8, 7, 7), k: s(hlo.F32, 8, 8, 3, 3), w: win(3, 1, 2, 1, 3)}, 9 * 64, 64},
		{"rhs-dilated", convTestCase{cd: convDims2D(), x: s(hlo.F32, 2, 10, 10, 16), k: s(hlo.F32, 3, 3, 16, 8), w: win(3, 1, 2, 2, 2)}, 0, 0},
		{"undilated", convTestCase{cd: convDims2D(), x: s(hlo.F32, 2, 10, 10, 16), k: s(hlo.F32, 3, 3, 16, 8), w: win(3, 1, 1, 1, 1)}, 0, 0},
		{"long", convTestCase{cd: convDims2D(), x: s(hlo.F32, 2, 10, 10, 4), k: s(hlo.F32, 12, 12, 4, 8), w: win(12, 1, 6, 1, 2)}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.groups = 1
			c := tc.c.computation(t)
			cg, ok := groupedGEMMView(c.Root)
			require.True(t, ok)
			cg = cg.withPhases(LavapipeTarget())
			if tc.rows == 0 {
				require.Nil(t, cg.phases)
			} else {
				require.NotNil(t, cg.phases)
				require.Equal(t, tc.rows, cg.m)
				require.Equal(t, tc.perPhase, cg.phases.per)
			}
			lowerFor(t, c, LavapipeTarget())
			lowerFor(t, c, smallTarget())
			checkFacts(t, tc.name, c, LavapipeTarget())
		})
	}
}
