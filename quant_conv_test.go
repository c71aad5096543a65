package vkxla_test

// Quantised convolutions (issue 21): a filter stored as s4, u4, s8, u8 or an
// 8-bit (or 4-bit) float, widened to f32 and optionally scaled per output
// channel, then convolved; the convert and the scale join the convolution's
// kernel (passes/fusion_operand_convert.go), which reads the filter at its stored
// width. GPU against cpuref (the dequantised filter exactly, then the
// convolution in f32) within the convolution's tolerance. Odd channel counts make
// a packed filter's rows (one tap and input feature, the output features) start
// mid-byte.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// quantConv is y = conv(x, dequant(W)) (+ bias, ReLU when epilogue): x f32 NHWC
// [1, h, h, c], W wdt in layout (HWIO "01io" or OHWI "o01i") of a kh×kh window,
// o output features, groups feature groups (c for depthwise), padding kh/2.
type quantConv struct {
	wdt      hlo.DType
	h, c, o  int64
	kh       int64
	groups   int64
	layout   string
	scale    quantScale // noScale or channelScale
	epilogue bool
	kernel   string // the dispatch codegen is expected to choose ("" = any)
}

func (q quantConv) name() string {
	return fmt.Sprintf("%v/%dx%dx%d→%d/%dx%d/%s/g%d/%v/epi=%v", q.wdt, q.h, q.h, q.c, q.o, q.kh, q.kh, q.layout, q.groups, q.scale, q.epilogue)
}

// filterDims is W's shape in its layout.
func (q quantConv) filterDims() []int64 {
	in := q.c / q.groups
	if q.layout == "o01i" {
		return []int64{q.o, q.kh, q.kh, in}
	}
	return []int64{q.kh, q.kh, in, q.o}
}

// text is the layer in HLO text, as a front end writes it.
func (q quantConv) text() string {
	wd := q.filterDims()
	w := hlo.MakeShape(hlo.F32, wd...)
	out := hlo.MakeShape(hlo.F32, 1, q.h, q.h, q.o)
	oDim := 3
	if q.layout == "o01i" {
		oDim = 0
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HloModule quant_conv\nENTRY main {\n  x = %v parameter(0)\n  w = %v parameter(1)\n  wc = %v convert(w)\n",
		hlo.MakeShape(hlo.F32, 1, q.h, q.h, q.c), hlo.MakeShape(q.wdt, wd...), w)
	filter, next := "wc", 2
	if q.scale == channelScale {
		fmt.Fprintf(&b, "  s = f32[%d] parameter(%d)\n  sb = %v broadcast(s), dimensions={%d}\n  ws = %v multiply(wc, sb)\n", q.o, next, w, oDim, w)
		filter, next = "ws", next+1
	}
	pad := q.kh / 2
	conv := fmt.Sprintf("convolution(x, %s), window={size=%dx%d pad=%d_%dx%d_%d}, dim_labels=b01f_%s->b01f, feature_group_count=%d",
		filter, q.kh, q.kh, pad, pad, pad, pad, q.layout, q.groups)
	if !q.epilogue {
		fmt.Fprintf(&b, "  ROOT y = %v %s\n}\n", out, conv)
		return b.String()
	}
	fmt.Fprintf(&b, "  c = %v %s\n  bias = f32[%d] parameter(%d)\n  bb = %v broadcast(bias), dimensions={3}\n  a = %v add(c, bb)\n  zero = f32[] constant(0)\n  z = %v broadcast(zero), dimensions={}\n  ROOT y = %v maximum(a, z)\n}\n",
		out, conv, q.o, next, out, out, out, out)
	return b.String()
}

// inputs are x on the grid k/16 in [-1, 1], W across its type's values, scales
// powers of two in [1/64, 1/8] and biases in [-1, 1] (on the same grid): with
// integer filters every product and partial sum is then exact in f32 whatever
// the order of the sum (at most 2^23 grid steps), so an output that cancels to
// near zero is not lost to the reordering the implicit GEMM does (taps, then
// input features).
func (q quantConv) inputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rnd(seed)
	ps := m.Entry.Params
	in := []*hlo.Literal{dyadic(rng, ps[0].Shape, func() float64 { return float64(rng.IntN(33)-16) / 16 }), quantWeights(rng, ps[1].Shape)}
	for _, p := range ps[2:] {
		v := func() float64 { return float64(rng.IntN(33)-16) / 16 }
		if p.Name == "s" {
			v = func() float64 { return 1 / float64(int(8)<<rng.IntN(4)) }
		}
		in = append(in, dyadic(rng, p.Shape, v))
	}
	return in
}

// dyadic is a literal of shape s with values drawn by v.
func dyadic(_ *rand.Rand, s hlo.Shape, v func() float64) *hlo.Literal {
	l := hlo.NewLiteral(s)
	for i := range l.NumElements() {
		l.SetFloat64(i, v())
	}
	return l
}

// fusedKernelNames are the dispatches codegen gives the one fusion of an
// optimised module (what strategy it chose).
func fusedKernelNames(t *testing.T, rt *vkxla.Runtime, m *hlo.Module) string {
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpFusion {
			return kernelNames(t, rt, &hlo.Module{Name: m.Name, Entry: in.Called[0]})
		}
	}
	t.Fatalf("no fusion in\n%s", hlo.Print(m))
	return ""
}

func TestQuantisedConvolutionOnDevice(t *testing.T) {
	rt := newRuntime(t)
	var cases []quantConv
	for _, wdt := range []hlo.DType{hlo.S4, hlo.U4, hlo.S8, hlo.U8, hlo.F8E4M3FN, hlo.F8E5M2, hlo.F4E2M1FN} {
		for _, s := range []quantScale{noScale, channelScale} {
			base := quantConv{wdt: wdt, scale: s, groups: 1}
			cases = append(cases,
				// The implicit GEMM, both filter layouts, odd channel counts.
				with(base, func(q *quantConv) { q.h, q.c, q.o, q.kh, q.layout, q.kernel = 10, 5, 13, 3, "01io", "conv_gemm" }),
				with(base, func(q *quantConv) { q.h, q.c, q.o, q.kh, q.layout, q.kernel = 10, 5, 13, 3, "o01i", "conv_gemm" }),
				// With channel counts a multiple of 8 (rows start on a word), and
				// a bias + ReLU epilogue.
				with(base, func(q *quantConv) {
					q.h, q.c, q.o, q.kh, q.layout, q.epilogue, q.kernel = 8, 16, 24, 3, "01io", true, "conv_gemm"
				}),
				with(base, func(q *quantConv) {
					q.h, q.c, q.o, q.kh, q.layout, q.epilogue, q.kernel = 8, 16, 24, 3, "o01i", true, "conv_gemm"
				}),
				// Too small for the GEMM: element by element.
				with(base, func(q *quantConv) { q.h, q.c, q.o, q.kh, q.layout = 4, 3, 5, 3, "01io" }),
				// Depthwise (MobileNet's), with its epilogue.
				with(base, func(q *quantConv) {
					q.h, q.c, q.o, q.kh, q.layout, q.groups, q.epilogue, q.kernel = 8, 12, 12, 3, "01io", 12, true, "depthwise"
				}),
			)
		}
	}
	for i, q := range cases {
		t.Run(q.name(), func(t *testing.T) {
			m, err := hlo.ParseModule(q.text())
			require.NoError(t, err, q.text())
			exe, err := rt.Compile(t.Context(), m)
			require.NoError(t, err)
			opt := exe.OptimizedModule()
			require.NoError(t, exe.Close())
			require.Equal(t, 1, kernelCount(opt), "the convert and the scale join the convolution's kernel:\n%s", hlo.Print(opt))
			if q.kernel != "" {
				require.Contains(t, fusedKernelNames(t, rt, opt), q.kernel)
			}
			checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpConvolution, hlo.F32), q.inputs(m, uint64(300+i))...)
		})
	}
}

func with(q quantConv, set func(*quantConv)) quantConv {
	set(&q)
	return q
}

// TestNarrowOperandConvolutionOnDevice: convolutions of two f8, bf16 or s8
// operands accumulated wider (preferred_element_type f32 / s32): the operand
// upcaster's converts are exact, so the GPU matches cpuref (exactly for s32).
// The f8 (bf16) filter's convert joins the convolution (2 kernels: the input's
// convert, the convolution); integer converts are not dequantisations and stay
// kernels (3).
func TestNarrowOperandConvolutionOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for i, tc := range []struct {
		in, out hlo.DType
		kernels int
	}{{hlo.F8E4M3FN, hlo.F32, 2}, {hlo.F8E5M2, hlo.F32, 2}, {hlo.BF16, hlo.F32, 2}, {hlo.S8, hlo.S32, 3}} {
		t.Run(fmt.Sprintf("%v→%v", tc.in, tc.out), func(t *testing.T) {
			text := fmt.Sprintf(`HloModule narrow_conv
ENTRY main {
  x = %[1]v[1,9,9,5] parameter(0)
  w = %[1]v[3,3,5,11] parameter(1)
  ROOT y = %[2]v[1,9,9,11] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
`, tc.in, tc.out)
			m, err := hlo.ParseModule(text)
			require.NoError(t, err, text)
			exe, err := rt.Compile(t.Context(), m)
			require.NoError(t, err)
			opt := exe.OptimizedModule()
			require.NoError(t, exe.Close())
			require.Equal(t, tc.kernels, kernelCount(opt), "%s", hlo.Print(opt))
			rng := rnd(uint64(400 + i))
			ps := m.Entry.Params
			checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpConvolution, tc.out), quantWeights(rng, ps[0].Shape), quantWeights(rng, ps[1].Shape))
		})
	}
}

// TestQuantisedConvolutionPeak: the fused quantised convolution holds no f32
// copy of its filter: its peak is its inputs and output (x f32[1,8,8,16] 4096
// B, W s4[3,3,16,24] 1728 B, scales f32[24] 96 B, y f32[1,8,8,24] 6144 B), the
// lower bound (a filter converted by a kernel of its own is a 13824 B f32
// temporary, live beside all of them: the parameters live throughout).
func TestQuantisedConvolutionPeak(t *testing.T) {
	rt := newRuntime(t)
	q := quantConv{wdt: hlo.S4, h: 8, c: 16, o: 24, kh: 3, groups: 1, layout: "01io", scale: channelScale}
	m, err := hlo.ParseModule(q.text())
	require.NoError(t, err)
	exe, err := rt.Compile(t.Context(), m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	st := exe.MemoryStats()
	require.Equal(t, st.LowerBoundBytes, st.PeakBytes, st.String())
	require.Equal(t, int64(4096+1728+96+6144), st.PeakBytes, st.String())
}
