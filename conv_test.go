package vkxla_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// convLayouts are the dim_labels the convolution tests cover: TensorFlow/JAX's
// NHWC × HWIO, PyTorch's NCHW × OIHW, NHWC × OHWI (filter input features minor)
// and a mixed NCHW input × HWIO filter → NHWC output.
var convLayouts = map[string]hlo.ConvDims{
	"b01f_01io->b01f": nhwc(),
	"bf01_oi01->bf01": hlo.DefaultConvDims(2),
	"b01f_o01i->b01f": {InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelOutput: 0, KernelInput: 3, KernelSpatial: []int64{1, 2},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}},
	"bf01_01io->b01f": {InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2, 3},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}},
}

// filterGradLayout is the dim_labels autodiff gives an NHWC convolution's filter
// gradient (f01b_i01o->01bf): the images' features are the batch (minor), their
// batch the features; the output's cotangent is the filter; the result HWIO.
var filterGradLayout = hlo.ConvDims{InputBatch: 3, InputFeature: 0, InputSpatial: []int64{1, 2},
	KernelInput: 0, KernelOutput: 3, KernelSpatial: []int64{1, 2},
	OutputBatch: 2, OutputFeature: 3, OutputSpatial: []int64{0, 1}}

// convCase is a 2-D convolution: n images of c features and h×w pixels, a
// filter of o output features and kh×kw taps, per spatial dim stride, padding
// (low, high; may be negative), lhs and rhs dilation, and feature groups or
// batch groups (n images in batchGroups groups, o output features likewise).
type convCase struct {
	layout         string
	dt             hlo.DType
	n, c, h, w, o  int64
	kh, kw         int64
	stride         [2]int64
	padLo, padHi   [2]int64
	lhsDil, rhsDil [2]int64
	groups         int64
	batchGroups    int64
	reverse        bool
}

func (cc convCase) String() string {
	return fmt.Sprintf("%s/%v/n%d_c%d_%dx%d_o%d_k%dx%d_s%v_p%v%v_ld%v_rd%v_g%d_bg%d_r%v", cc.layout, cc.dt, cc.n, cc.c, cc.h, cc.w, cc.o,
		cc.kh, cc.kw, cc.stride, cc.padLo, cc.padHi, cc.lhsDil, cc.rhsDil, cc.groups, cc.batchGroups, cc.reverse)
}

// shapes places the logical sizes in the layout's dims.
func (cc convCase) shapes() (in, k hlo.Shape, cd hlo.ConvDims) {
	cd = convLayouts[cc.layout]
	if cc.layout == "f01b_i01o->01bf" {
		cd = filterGradLayout
	}
	id := make([]int64, 4)
	id[cd.InputBatch], id[cd.InputFeature], id[cd.InputSpatial[0]], id[cd.InputSpatial[1]] = cc.n, cc.c, cc.h, cc.w
	kd := make([]int64, 4)
	kd[cd.KernelInput], kd[cd.KernelOutput], kd[cd.KernelSpatial[0]], kd[cd.KernelSpatial[1]] = cc.c/max(cc.groups, 1), cc.o, cc.kh, cc.kw
	return hlo.MakeShape(cc.dt, id...), hlo.MakeShape(cc.dt, kd...), cd
}

func (cc convCase) window() []hlo.WindowDim {
	w := hlo.MakeWindow([]int64{cc.kh, cc.kw}, nil)
	for i := range w {
		w[i].Stride = max(cc.stride[i], 1)
		w[i].PadLow, w[i].PadHigh = cc.padLo[i], cc.padHi[i]
		w[i].BaseDilation, w[i].WindowDilation = max(cc.lhsDil[i], 1), max(cc.rhsDil[i], 1)
		w[i].WindowReversal = cc.reverse && i == 1
	}
	return w
}

// module builds the convolution, or returns nil when its output would be empty.
func (cc convCase) module(t testing.TB) *hlo.Module {
	in, k, cd := cc.shapes()
	b := hlo.NewBuilder("conv")
	root := b.Conv(b.Parameter(in, "x"), b.Parameter(k, "k"), cc.window(), cd, max(cc.groups, 1), max(cc.batchGroups, 1))
	m, err := b.Build(root)
	if err != nil || m.Entry.Root.Shape.NumElements() == 0 {
		return nil
	}
	return m
}

// kernelNames are the names of the dispatched kernels of m's entry lowered for
// the runtime's device (what strategy codegen chose).
func kernelNames(t testing.TB, rt *vkxla.Runtime, m *hlo.Module) string {
	p, err := codegen.Lower(m.Entry, vkxla.TargetFromCaps(rt.Device().Caps()))
	require.NoError(t, err)
	var names []string
	for _, d := range p.Dispatches {
		names = append(names, d.Kernel.Name)
	}
	return strings.Join(names, ",")
}

// checkConv compares the device's convolution with cpuref and, where want is not
// empty, checks that codegen chose that kernel (so that the case tests the path it
// was written for).
func checkConv(t *testing.T, rt *vkxla.Runtime, cc convCase, want string, seed uint64) {
	m := cc.module(t)
	require.NotNil(t, m, "%v has an empty or invalid output", cc)
	if want != "" {
		require.Contains(t, kernelNames(t, rt, m), want, "%v", cc)
	}
	in, k, _ := cc.shapes()
	rng := rnd(seed)
	checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpConvolution, cc.dt),
		randomLiteral(rng, in, unitDomain), randomLiteral(rng, k, unitDomain))
}

// TestConvolutionImplicitGEMM: dense float convolutions, run as an implicit GEMM,
// against cpuref over every layout and dtype, with strides, padding (negative
// included), lhs and rhs dilation, window reversal, feature groups, N > 1 and odd
// sizes.
// everyLayout is base in every layout of convLayouts and each of dts.
func everyLayout(base convCase, dts ...hlo.DType) []convCase {
	var cases []convCase
	for layout := range convLayouts {
		for _, dt := range dts {
			cc := base
			cc.layout, cc.dt = layout, dt
			cases = append(cases, cc)
		}
	}
	return cases
}

func TestConvolutionImplicitGEMM(t *testing.T) {
	rt := newRuntime(t)
	base := convCase{n: 2, c: 8, h: 9, w: 11, o: 12, kh: 3, kw: 3, stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	cases := everyLayout(base, hlo.F32, hlo.F16, hlo.BF16)
	awkward := []func(*convCase){
		func(c *convCase) { c.kh, c.kw, c.c, c.padLo, c.padHi = 1, 1, 32, [2]int64{}, [2]int64{} },        // 1×1: a plain GEMM
		func(c *convCase) { c.stride = [2]int64{2, 3} },                                                   // strides
		func(c *convCase) { c.kh, c.kw, c.h, c.w, c.stride = 2, 2, 25, 19, [2]int64{4, 3} },               // stride > kernel
		func(c *convCase) { c.rhsDil, c.padLo, c.padHi = [2]int64{2, 3}, [2]int64{2, 3}, [2]int64{0, 3} }, // dilation with padding
		func(c *convCase) { c.lhsDil, c.padLo = [2]int64{2, 2}, [2]int64{2, 0} },                          // lhs dilation (input gradients)
		func(c *convCase) { c.padLo, c.padHi = [2]int64{-1, 0}, [2]int64{0, -2} },                         // negative padding
		func(c *convCase) { c.c, c.o = 3, 7 },                                                             // odd features
		func(c *convCase) { c.c, c.o, c.groups = 8, 12, 2 },                                               // feature groups
		func(c *convCase) { c.reverse = true },                                                            // window reversal
		func(c *convCase) { c.n, c.h, c.w = 3, 5, 17 },                                                    // batch 3, odd sizes
	}
	for _, layout := range []string{"b01f_01io->b01f", "bf01_oi01->bf01", "b01f_o01i->b01f"} {
		for _, mod := range awkward {
			cc := base
			cc.layout, cc.dt = layout, hlo.F32
			mod(&cc)
			cases = append(cases, cc)
		}
	}
	for i, cc := range cases {
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "conv_gemm", uint64(100+i)) })
	}
}

// TestConvolutionRandomShapes: convolutions of random awkward shapes (every
// layout, strides up to 3, padding −1…2, dilations up to 2, groups, batch up to
// 3), whatever strategy codegen picks, against cpuref.
func TestConvolutionRandomShapes(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(12, 34))
	layouts := []string{"b01f_01io->b01f", "bf01_oi01->bf01", "b01f_o01i->b01f", "bf01_01io->b01f"}
	dts := []hlo.DType{hlo.F32, hlo.F32, hlo.F16, hlo.BF16}
	pick := func(xs ...int64) int64 { return xs[rng.IntN(len(xs))] }
	for i := 0; i < 24; {
		cc := convCase{layout: layouts[rng.IntN(len(layouts))], dt: dts[rng.IntN(len(dts))],
			n: pick(1, 2, 3), c: pick(1, 3, 4, 8), h: pick(3, 5, 8, 13), w: pick(4, 7, 12), o: pick(2, 4, 5, 8, 12),
			kh: pick(1, 2, 3, 5), kw: pick(1, 3, 4), groups: 1}
		for d := range 2 {
			cc.stride[d] = pick(1, 1, 2, 3)
			cc.padLo[d], cc.padHi[d] = pick(-1, 0, 1, 2), pick(-1, 0, 1, 2)
			cc.lhsDil[d], cc.rhsDil[d] = pick(1, 1, 2), pick(1, 1, 2)
		}
		if cc.c%2 == 0 && cc.o%2 == 0 && rng.IntN(3) == 0 {
			cc.groups = 2
		}
		if cc.module(t) == nil {
			continue
		}
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "", uint64(200+i)) })
		i++
	}
}

// TestConvolutionGradients: the input and filter gradients autodiff emits for
// strided, padded NHWC and NCHW convolutions (a convolution with lhs dilation and
// one contracting over batch × pixels), on the device against cpuref.
func TestConvolutionGradients(t *testing.T) {
	rt := newRuntime(t)
	for _, cc := range []convCase{
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 2, c: 8, h: 12, w: 12, o: 8, kh: 3, kw: 3,
			stride: [2]int64{2, 2}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "bf01_oi01->bf01", dt: hlo.F32, n: 3, c: 4, h: 10, w: 9, o: 8, kh: 3, kw: 2,
			stride: [2]int64{1, 2}, padLo: [2]int64{1, 0}, padHi: [2]int64{1, 1}},
		{layout: "b01f_01io->b01f", dt: hlo.BF16, n: 2, c: 8, h: 8, w: 8, o: 8, kh: 3, kw: 3,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		// The filter gradient sums 2·16·16 terms over 256 taps for 72×8 outputs:
		// split over taps.
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 2, c: 8, h: 16, w: 16, o: 8, kh: 3, kw: 3,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		// Batch 1, 32 image features: the filter gradient's blocks are 16 image
		// features of one pixel (one input position per tap for the block).
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 1, c: 32, h: 10, w: 11, o: 16, kh: 3, kw: 3,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		// Grouped: the filter gradient has batch groups (the implicit GEMM per
		// group), the input gradient feature groups.
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 2, c: 16, h: 11, w: 11, o: 24, kh: 3, kw: 3, groups: 4,
			stride: [2]int64{2, 2}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "bf01_oi01->bf01", dt: hlo.BF16, n: 3, c: 8, h: 9, w: 10, o: 8, kh: 3, kw: 2, groups: 2,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 0}, padHi: [2]int64{1, 1}},
		{layout: "b01f_01io->b01f", dt: hlo.BF16, n: 1, c: 64, h: 9, w: 9, o: 32, kh: 3, kw: 3, groups: 4,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		// Depthwise: the filter gradient has one output feature per batch group
		// (the dwgrad kernel).
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 1, c: 16, h: 12, w: 12, o: 16, kh: 3, kw: 3, groups: 16,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "b01f_01io->b01f", dt: hlo.BF16, n: 2, c: 8, h: 11, w: 13, o: 8, kh: 3, kw: 3, groups: 8,
			stride: [2]int64{2, 2}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
	} {
		t.Run(cc.String(), func(t *testing.T) {
			m := cc.module(t)
			g, err := autodiff.VJP(m, []int{0, 1}, nil)
			require.NoError(t, err)
			in, k, _ := cc.shapes()
			rng := rnd(300)
			checkAgainstCPU(t, rt, g, vkxla.ProgramTolerance(g, cc.dt), randomLiteral(rng, in, unitDomain),
				randomLiteral(rng, k, unitDomain), randomLiteral(rng, m.Entry.Root.Shape, unitDomain))
		})
	}
}

// TestConvolutionBatchGroups: convolutions with batch groups (what autodiff
// emits for a grouped convolution's filter gradient) run as the implicit GEMM,
// one per group, against cpuref: every layout, f32 and bf16, one and two
// batches per group, strides, and a long contraction split over taps.
func TestConvolutionBatchGroups(t *testing.T) {
	rt := newRuntime(t)
	base := convCase{dt: hlo.F32, n: 4, c: 6, h: 9, w: 11, o: 8, kh: 3, kw: 3, batchGroups: 2,
		stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	cases := everyLayout(base, base.dt)
	nhwc := base
	nhwc.layout = "b01f_01io->b01f"
	mods := []func(*convCase){
		func(c *convCase) { c.dt, c.stride, c.h, c.w = hlo.BF16, [2]int64{2, 3}, 17, 19 },
		func(c *convCase) { c.n, c.o, c.batchGroups = 4, 12, 4 }, // one batch per group
		func(c *convCase) { c.rhsDil, c.padHi = [2]int64{2, 1}, [2]int64{2, 0} },
	}
	for _, mod := range mods {
		cc := nhwc
		mod(&cc)
		cases = append(cases, cc)
	}
	for i, cc := range cases {
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "conv_gemm", uint64(800+i)) })
	}
	// A filter-gradient shape: a 16×16 window, 256 taps, few outputs: split.
	split := convCase{layout: "b01f_01io->b01f", dt: hlo.F32, n: 8, c: 4, h: 16, w: 16, o: 8, kh: 16, kw: 16, batchGroups: 2,
		padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	t.Run(split.String(), func(t *testing.T) { checkConv(t, rt, split, "conv_gemm_partial", 820) })
	// Depthwise filter gradients (one output feature per batch group): the
	// dwgrad kernel, four features a vec4, over ranges of gradient pixels.
	dw := convCase{layout: "f01b_i01o->01bf", dt: hlo.F32, n: 16, c: 2, h: 12, w: 12, o: 16, kh: 10, kw: 10, batchGroups: 16,
		stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	for i, mod := range []func(*convCase){
		func(c *convCase) {},
		func(c *convCase) { c.dt, c.c = hlo.BF16, 1 },
		func(c *convCase) { c.dt, c.reverse = hlo.F16, true },
		func(c *convCase) { c.rhsDil, c.kh, c.kw, c.h = [2]int64{2, 2}, 5, 6, 11 },                    // a stride-2 forward's
		func(c *convCase) { c.n, c.o, c.batchGroups, c.h, c.w, c.kh, c.kw = 8, 8, 8, 40, 40, 38, 38 }, // many ranges
	} {
		cc := dw
		mod(&cc)
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "conv_dwgrad_partial", uint64(830+i)) })
	}
}

// TestConvolutionPhases: lhs-dilated convolutions (strided convolutions' input
// gradients), whose implicit GEMM steps each block's taps over one sub-pixel
// phase, against cpuref: every layout, f32/f16/bf16, dilation 2 and 3 (and
// different per dim), batch 1 and 3, outputs not a multiple of the dilation,
// padding (negative too), a stride, window reversal, rhs dilation in the
// undilated dim, and the kernels generated for small devices (8×8 and 4×12
// blocks); then the input gradients of stride-2 and stride-3 convolutions.
func TestConvolutionPhases(t *testing.T) {
	rt := newRuntime(t)
	base := convCase{n: 2, c: 8, h: 9, w: 11, o: 12, kh: 3, kw: 3, lhsDil: [2]int64{2, 2},
		stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	cases := everyLayout(base, hlo.F32, hlo.F16, hlo.BF16)
	mods := []func(*convCase){
		func(c *convCase) { c.lhsDil, c.padLo, c.padHi = [2]int64{3, 3}, [2]int64{2, 2}, [2]int64{2, 2} },
		func(c *convCase) { c.lhsDil, c.n = [2]int64{2, 3}, 1 },
		func(c *convCase) { c.n, c.h, c.w, c.padHi = 3, 6, 7, [2]int64{0, 2} },
		func(c *convCase) { c.padLo, c.padHi = [2]int64{-1, 2}, [2]int64{1, -1} },
		func(c *convCase) { c.stride = [2]int64{2, 1} },
		func(c *convCase) { c.reverse, c.kh, c.kw, c.padLo = true, 4, 5, [2]int64{3, 2} },
		func(c *convCase) { c.lhsDil, c.rhsDil = [2]int64{2, 1}, [2]int64{1, 2} },
	}
	for _, mod := range mods {
		cc := base
		cc.layout, cc.dt = "b01f_01io->b01f", hlo.F32
		mod(&cc)
		cases = append(cases, cc)
	}
	for i, cc := range cases {
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "conv_gemm", uint64(900+i)) })
	}
	for ti, block := range [][2]uint32{{8, 8}, {4, 12}} {
		tg := vkxla.TargetFromCaps(rt.Device().Caps())
		tg.GemmBlock = block
		cc := base
		cc.layout, cc.dt, cc.lhsDil = "bf01_oi01->bf01", hlo.F32, [2]int64{3, 2}
		t.Run(fmt.Sprintf("block%v/%v", block, cc), func(t *testing.T) {
			m := cc.module(t)
			in, k, _ := cc.shapes()
			rng := rnd(uint64(950 + ti))
			inputs := []*hlo.Literal{randomLiteral(rng, in, unitDomain), randomLiteral(rng, k, unitDomain)}
			want, err := cpuref.EvalComputation(m.Entry, inputs...)
			require.NoError(t, err)
			got := runProgramFor(t, rt, m.Entry, inputs, tg)
			require.NoError(t, vkxla.Tolerance(hlo.OpConvolution, cc.dt).Check(got[0], want))
		})
	}
	for i, cc := range []convCase{
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 1, c: 16, h: 13, w: 14, o: 16, kh: 3, kw: 3,
			stride: [2]int64{3, 3}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "bf01_oi01->bf01", dt: hlo.BF16, n: 2, c: 8, h: 12, w: 11, o: 12, kh: 3, kw: 3,
			stride: [2]int64{2, 2}, padLo: [2]int64{1, 1}, padHi: [2]int64{0, 1}},
	} {
		t.Run("input-gradient/"+cc.String(), func(t *testing.T) {
			m := cc.module(t)
			g, err := autodiff.VJP(m, []int{0}, nil)
			require.NoError(t, err)
			in, k, _ := cc.shapes()
			rng := rnd(uint64(960 + i))
			checkAgainstCPU(t, rt, g, vkxla.ProgramTolerance(g, cc.dt), randomLiteral(rng, in, unitDomain),
				randomLiteral(rng, k, unitDomain), randomLiteral(rng, m.Entry.Root.Shape, unitDomain))
		})
	}
}

// TestConvolutionDepthwise: depthwise convolutions (feature groups = features)
// against cpuref: the vec4 kernel for NHWC outputs with HWIO filters (vec4
// filter reads) and with OIHW-ordered filters (element reads), f32/f16/bf16,
// strides, dilation, padding, batch 2, a 7×7 window and a 27×2 one (27 rows of
// taps: a loop, not unrolled); NCHW goes
// to the elemental kernel.
func TestConvolutionDepthwise(t *testing.T) {
	rt := newRuntime(t)
	base := convCase{layout: "b01f_01io->b01f", dt: hlo.F32, n: 2, c: 12, h: 9, w: 10, o: 12, kh: 3, kw: 3, groups: 12,
		stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}
	mods := []func(*convCase){
		func(c *convCase) {},
		func(c *convCase) { c.dt = hlo.F16 },
		func(c *convCase) { c.dt = hlo.BF16 },
		func(c *convCase) { c.stride = [2]int64{2, 3} },
		func(c *convCase) { c.rhsDil, c.padLo = [2]int64{2, 2}, [2]int64{2, 0} },
		func(c *convCase) { c.lhsDil, c.padHi = [2]int64{2, 1}, [2]int64{-1, 0} },
		func(c *convCase) { c.kh, c.kw, c.padLo, c.padHi, c.h = 7, 7, [2]int64{3, 3}, [2]int64{3, 3}, 12 },
		func(c *convCase) { c.reverse = true },
		func(c *convCase) { c.layout = "b01f_o01i->b01f" },
		func(c *convCase) { c.kh, c.kw, c.padLo, c.padHi = 27, 2, [2]int64{13, 0}, [2]int64{13, 1} }, // looped taps
	}
	for i, mod := range mods {
		cc := base
		mod(&cc)
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "depthwise", uint64(400+i)) })
	}
	nchw := base
	nchw.layout = "bf01_oi01->bf01"
	t.Run(nchw.String(), func(t *testing.T) { checkConv(t, rt, nchw, "", 420) })
}

// TestConvolutionSplitGEMM: a filter-gradient-shaped convolution (a 16×16 window
// over a 18×18 padded image: few outputs, 256 taps each) runs as an implicit
// GEMM split over taps (partial sums in a scratch buffer, then their sum), for
// f32 and bf16, NHWC and NCHW, against cpuref.
func TestConvolutionSplitGEMM(t *testing.T) {
	rt := newRuntime(t)
	for i, cc := range []convCase{
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 8, c: 2, h: 16, w: 16, o: 8, kh: 16, kw: 16,
			padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "b01f_01io->b01f", dt: hlo.BF16, n: 8, c: 4, h: 16, w: 16, o: 12, kh: 16, kw: 16,
			padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "bf01_oi01->bf01", dt: hlo.F32, n: 6, c: 3, h: 17, w: 15, o: 5, kh: 15, kw: 14, rhsDil: [2]int64{1, 1},
			padLo: [2]int64{0, 1}, padHi: [2]int64{1, 0}},
	} {
		t.Run(cc.String(), func(t *testing.T) { checkConv(t, rt, cc, "conv_gemm_partial", uint64(500+i)) })
	}
}

// TestConvolutionUnderSmallTargets runs the convolution kernels generated for
// smaller devices than lavapipe on lavapipe, against cpuref: 128 or 256
// invocations per workgroup, 16 KiB of shared memory, a grid of 16 or 64
// workgroups per dimension (invocations loop over blocks and elements), loop
// bounds of 2000 or 4000 (more tap ranges) and 8×8 or 4×12 GEMM blocks; and
// devices with no texel buffers, or room for one per kernel (docs/codegen.md,
// "Texel reads").
func TestConvolutionUnderSmallTargets(t *testing.T) {
	rt := newRuntime(t)
	small := func(inv, groups uint32, loops int64, block [2]uint32) codegen.Target {
		tg := vkxla.TargetFromCaps(rt.Device().Caps())
		tg.MaxSharedMemory, tg.MaxWorkgroupInvocations = 16<<10, inv
		tg.MaxWorkgroupSize = [3]uint32{inv, inv, 64}
		tg.MaxWorkgroupCount = [3]uint32{groups, groups, groups}
		tg.MaxLoopIterations, tg.GemmBlock = loops, block
		return tg
	}
	noTexels := small(256, 64, 4000, [2]uint32{16, 8})
	noTexels.MaxTexelBufferElements = 0 // every operand through its storage buffer's vec4 view
	oneTexel := small(128, 16, 2000, [2]uint32{16, 8})
	oneTexel.MaxTexelBuffers = 1 // one operand through a texel buffer, the other its storage buffer
	targets := []codegen.Target{small(128, 16, 2000, [2]uint32{8, 8}), small(256, 64, 4000, [2]uint32{4, 12}), noTexels, oneTexel}
	cases := []convCase{
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 2, c: 16, h: 13, w: 11, o: 20, kh: 3, kw: 3,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}},
		{layout: "bf01_oi01->bf01", dt: hlo.BF16, n: 2, c: 8, h: 12, w: 12, o: 12, kh: 3, kw: 3,
			stride: [2]int64{2, 2}, padLo: [2]int64{1, 1}, padHi: [2]int64{0, 0}},
		{layout: "b01f_01io->b01f", dt: hlo.F32, n: 6, c: 2, h: 12, w: 12, o: 8, kh: 12, kw: 12,
			padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}, // split over taps
		{layout: "b01f_01io->b01f", dt: hlo.F16, n: 2, c: 16, h: 14, w: 13, o: 16, kh: 3, kw: 3, groups: 16,
			stride: [2]int64{1, 1}, padLo: [2]int64{1, 1}, padHi: [2]int64{1, 1}}, // depthwise
	}
	for ti, target := range targets {
		for i, cc := range cases {
			t.Run(fmt.Sprintf("%d/%v", ti, cc), func(t *testing.T) {
				m := cc.module(t)
				in, k, _ := cc.shapes()
				rng := rnd(uint64(600 + i))
				inputs := []*hlo.Literal{randomLiteral(rng, in, unitDomain), randomLiteral(rng, k, unitDomain)}
				want, err := cpuref.EvalComputation(m.Entry, inputs...)
				require.NoError(t, err)
				got := runProgramFor(t, rt, m.Entry, inputs, target)
				require.NoError(t, vkxla.Tolerance(hlo.OpConvolution, cc.dt).Check(got[0], want))
			})
		}
	}
}

// TestConvolutionOtherRanks: a 1-D depthwise convolution (NWC) and convolutions
// with no spatial dims (a dense one, a matrix product, and a depthwise one, a
// per-feature scale) on the device against cpuref. A depthwise convolution with
// no spatial dims once panicked in code generation (no last spatial dim to walk).
func TestConvolutionOtherRanks(t *testing.T) {
	rt := newRuntime(t)
	nwc := hlo.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1}, KernelInput: 1, KernelOutput: 2,
		KernelSpatial: []int64{0}, OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}}
	flat := hlo.ConvDims{InputBatch: 0, InputFeature: 1, KernelInput: 0, KernelOutput: 1, OutputBatch: 0, OutputFeature: 1}
	w1 := hlo.MakeWindow([]int64{5}, []int64{2})
	w1[0].PadLow, w1[0].PadHigh = 2, 1
	for i, c := range []struct {
		name   string
		x, k   hlo.Shape
		w      []hlo.WindowDim
		cd     hlo.ConvDims
		groups int64
	}{
		{"1d-depthwise", hlo.MakeShape(hlo.F32, 2, 30, 16), hlo.MakeShape(hlo.F32, 5, 1, 16), w1, nwc, 16},
		{"1d-dense", hlo.MakeShape(hlo.BF16, 2, 30, 16), hlo.MakeShape(hlo.BF16, 5, 16, 24), w1, nwc, 1},
		{"flat-dense", hlo.MakeShape(hlo.F32, 64, 48), hlo.MakeShape(hlo.F32, 48, 32), nil, flat, 1},
		{"flat-depthwise", hlo.MakeShape(hlo.F32, 64, 48), hlo.MakeShape(hlo.F32, 1, 48), nil, flat, 48},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := hlo.NewBuilder("conv")
			m := mustBuild(t, b, b.Conv(b.Parameter(c.x, "x"), b.Parameter(c.k, "k"), c.w, c.cd, c.groups, 1))
			rng := rnd(uint64(700 + i))
			checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpConvolution, c.x.DType),
				randomLiteral(rng, c.x, unitDomain), randomLiteral(rng, c.k, unitDomain))
		})
	}
}
