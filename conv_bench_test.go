package vkxla_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
)

// nhwc are TensorFlow's and JAX's default convolution dims for images,
// dim_labels b01f_01io->b01f: input NHWC, filter HWIO, output NHWC.
func nhwc() hlo.ConvDims {
	return hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
}

// convBench is one convolution of the benchmark: an NHWC image of n×h×w×c, a
// size×size filter to o features, stride and padding per spatial dim, groups
// feature groups (c for depthwise).
type convBench struct {
	name                   string
	backward               bool // the value and both gradients (autodiff's VJP)
	epilogue               bool // + a bias per feature and ReLU6 (MobileNet's layer)
	dt                     hlo.DType
	n, h, w, c, o          int64
	size, stride, pad, grp int64
}

func (cb convBench) module(tb testing.TB) *hlo.Module {
	b := hlo.NewBuilder("conv_" + sanitize(cb.name))
	x := b.Parameter(hlo.MakeShape(cb.dt, cb.n, cb.h, cb.w, cb.c), "x")
	k := b.Parameter(hlo.MakeShape(cb.dt, cb.size, cb.size, cb.c/cb.grp, cb.o), "k")
	win := hlo.MakeWindow([]int64{cb.size, cb.size}, []int64{cb.stride, cb.stride})
	for i := range win {
		win[i].PadLow, win[i].PadHigh = cb.pad, cb.pad
	}
	conv := b.Conv(x, k, win, nhwc(), cb.grp, 1)
	if !cb.epilogue {
		return mustBuild(tb, b, conv)
	}
	bias := b.Broadcast(b.Parameter(hlo.MakeShape(cb.dt, cb.o), "b"), conv.Shape.Dims, []int64{3})
	lo, hi := b.ScalarConstant(cb.dt, 0), b.ScalarConstant(cb.dt, 6)
	return mustBuild(tb, b, b.Clamp(lo, b.Binary(hlo.OpAdd, conv, bias), hi))
}

// gemm is the convolution's im2col GEMM: M = output pixels, N = output features
// (per group), K = filter taps × input features (per group).
func (cb convBench) gemm(out hlo.Shape) (m, n, k int64) {
	return out.Dims[0] * out.Dims[1] * out.Dims[2], cb.o / cb.grp, cb.size * cb.size * cb.c / cb.grp
}

// BenchmarkConvolution measures convolutions of MobileNet/ResNet shapes against
// baselines measured in the same process (best GPU time of the runs, by
// timestamps): a dense convolution against a dot of the same M, N, K (its im2col
// GEMM) in the same dtype, reporting GFLOP/s and x-gemm (the convolution's
// GFLOP/s ÷ the GEMM's; the target is ≥ 0.5); a depthwise one against
// elementwise copies of its input (benchDepthwise: x-copy, the target ≥ 0.5, and
// x-copy-out); a backward pass (value, input and filter
// gradients) against three such GEMMs.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench Convolution -benchtime 3x .
func BenchmarkConvolution(b *testing.B) {
	rt := newRuntime(b)
	cases := []convBench{
		{name: "dense3x3-38x38x256-256", dt: hlo.F32, n: 1, h: 38, w: 38, c: 256, o: 256, size: 3, stride: 1, pad: 1, grp: 1},
		{name: "dense1x1-38x38x256-256", dt: hlo.F32, n: 1, h: 38, w: 38, c: 256, o: 256, size: 1, stride: 1, grp: 1},
		{name: "dense3x3-56x56x64-64", dt: hlo.F32, n: 1, h: 56, w: 56, c: 64, o: 64, size: 3, stride: 1, pad: 1, grp: 1},
		{name: "dense3x3s2-38x38x128-256", dt: hlo.F32, n: 2, h: 38, w: 38, c: 128, o: 256, size: 3, stride: 2, pad: 1, grp: 1},
		{name: "dense1x1-bf16-38x38x256-256", dt: hlo.BF16, n: 1, h: 38, w: 38, c: 256, o: 256, size: 1, stride: 1, grp: 1},
		{name: "dense3x3-bf16-19x19x512-512", dt: hlo.BF16, n: 1, h: 19, w: 19, c: 512, o: 512, size: 3, stride: 1, pad: 1, grp: 1},
		// MobileNet-SSD's costliest 1×1 layer: few input features, a large image.
		{name: "dense1x1-bf16-150x150x32-64", dt: hlo.BF16, n: 1, h: 150, w: 150, c: 32, o: 64, size: 1, stride: 1, grp: 1},
		{name: "dense1x1-bf16-150x150x32-64+bias+relu6", epilogue: true, dt: hlo.BF16, n: 1, h: 150, w: 150, c: 32, o: 64, size: 1, stride: 1, grp: 1},
		{name: "backward-3x3-38x38x128-128", backward: true, dt: hlo.F32, n: 1, h: 38, w: 38, c: 128, o: 128, size: 3, stride: 1, pad: 1, grp: 1},
		{name: "backward-3x3-16x16x64-64-batch16", backward: true, dt: hlo.F32, n: 16, h: 16, w: 16, c: 64, o: 64, size: 3, stride: 1, pad: 1, grp: 1},
		{name: "backward-3x3s2-38x38x128-128", backward: true, dt: hlo.F32, n: 1, h: 38, w: 38, c: 128, o: 128, size: 3, stride: 2, pad: 1, grp: 1},
		{name: "backward-3x3-38x38x128-128-groups4", backward: true, dt: hlo.F32, n: 1, h: 38, w: 38, c: 128, o: 128, size: 3, stride: 1, pad: 1, grp: 4},
		{name: "backward-depthwise3x3-38x38x128", backward: true, dt: hlo.F32, n: 1, h: 38, w: 38, c: 128, o: 128, size: 3, stride: 1, pad: 1, grp: 128},
		{name: "depthwise3x3-38x38x256", dt: hlo.F32, n: 1, h: 38, w: 38, c: 256, o: 256, size: 3, stride: 1, pad: 1, grp: 256},
		{name: "depthwise3x3s2-76x76x128", dt: hlo.F32, n: 1, h: 76, w: 76, c: 128, o: 128, size: 3, stride: 2, pad: 1, grp: 128},
		{name: "depthwise3x3-bf16-38x38x256", dt: hlo.BF16, n: 1, h: 38, w: 38, c: 256, o: 256, size: 3, stride: 1, pad: 1, grp: 256},
		{name: "depthwise3x3-38x38x256+bias+relu6", epilogue: true, dt: hlo.F32, n: 1, h: 38, w: 38, c: 256, o: 256, size: 3, stride: 1, pad: 1, grp: 256},
		{name: "depthwise3x3-bf16-38x38x256+bias+relu6", epilogue: true, dt: hlo.BF16, n: 1, h: 38, w: 38, c: 256, o: 256, size: 3, stride: 1, pad: 1, grp: 256},
	}
	for _, cb := range cases {
		b.Run(cb.name, func(b *testing.B) {
			if cb.backward {
				benchConvBackward(b, rt, cb)
				return
			}
			m := cb.module(b)
			var inputs []*hlo.Literal
			for i, p := range m.Entry.Params {
				inputs = append(inputs, lit(rnd(61+uint64(i)), cb.dt, unitDomain, p.Shape.Dims...))
			}
			out := m.Entry.Root.Shape
			if cb.grp == cb.c && cb.grp > 1 {
				benchDepthwise(b, rt, m, inputs)
				return
			}
			mm, nn, kk := cb.gemm(out)
			gemm := gemmModule(b, cb.dt, mm, nn, kk)
			conv, base := bestInterleaved(b, rt, m, inputs, gemm,
				[]*hlo.Literal{lit(rnd(63), cb.dt, unitDomain, mm, kk), lit(rnd(64), cb.dt, unitDomain, kk, nn)})
			flop := float64(2 * mm * nn * kk * cb.grp)
			b.ReportMetric(flop/conv.Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(flop/float64(cb.grp)/base.Seconds()/1e9, "gemm-GFLOP/s")
			b.ReportMetric(float64(base)*float64(cb.grp)/float64(conv), "x-gemm")
		})
	}
}

// benchDepthwise times a depthwise convolution against two elementwise copies
// (negate) of its input: the one the suite compares with, whose output the plan
// writes over its input's buffer (in place), and one whose input is borrowed, so
// that its output is another buffer, as a convolution's always is (measured 1.7×
// slower than in place on lavapipe). It reports GB/s counting every input and the
// output once, x-copy against the in-place copy (the target ≥ 0.5) and
// x-copy-out against the other.
func benchDepthwise(b *testing.B, rt *vkxla.Runtime, m *hlo.Module, inputs []*hlo.Literal) {
	in := inputs[0].Shape()
	cp := copyModule(b, in)
	best := bestInterleavedN(b, rt, []timedRun{{m: m, in: inputs}, {m: cp, in: inputs[:1]},
		{m: cp, in: inputs[:1], opts: []vkxla.CompileOption{vkxla.WithBorrowedInputs(0)}}})
	bytes := float64(m.Entry.Root.Shape.ByteSize())
	for _, x := range inputs {
		bytes += float64(x.Shape().ByteSize())
	}
	rate, copyBytes := bytes/best[0].Seconds(), float64(2*in.ByteSize())
	b.ReportMetric(rate/1e9, "GB/s")
	b.ReportMetric(copyBytes/best[1].Seconds()/1e9, "copy-GB/s")
	b.ReportMetric(rate/(copyBytes/best[1].Seconds()), "x-copy")
	b.ReportMetric(rate/(copyBytes/best[2].Seconds()), "x-copy-out")
}

// benchConvBackward times the convolution's VJP (its value, the input gradient
// and the filter gradient: three convolutions of the forward's useful FLOPs)
// against three GEMMs of the forward's M, N, K per group (a grouped
// convolution's filter gradient has batch groups); a depthwise one against three
// elementwise copies of its input (x-copy: each of the three convolutions reads
// and writes about what a copy does).
func benchConvBackward(b *testing.B, rt *vkxla.Runtime, cb convBench) {
	m := cb.module(b)
	vjp, err := autodiff.VJP(m, []int{0, 1}, nil)
	require.NoError(b, err)
	out := m.Entry.Root.Shape
	inputs := []*hlo.Literal{lit(rnd(61), cb.dt, unitDomain, m.Entry.Params[0].Shape.Dims...),
		lit(rnd(62), cb.dt, unitDomain, m.Entry.Params[1].Shape.Dims...), lit(rnd(65), cb.dt, unitDomain, out.Dims...)}
	if cb.grp == cb.c && cb.grp > 1 { // depthwise: three memory-bound convolutions against three copies
		conv, base := bestInterleaved(b, rt, vjp, inputs, copyModule(b, inputs[0].Shape()), inputs[:1])
		b.ReportMetric(3*float64(base)/float64(conv), "x-copy")
		return
	}
	mm, nn, kk := cb.gemm(out)
	conv, base := bestInterleaved(b, rt, vjp, inputs, gemmModule(b, cb.dt, mm, nn, kk),
		[]*hlo.Literal{lit(rnd(63), cb.dt, unitDomain, mm, kk), lit(rnd(64), cb.dt, unitDomain, kk, nn)})
	flop := float64(3 * 2 * mm * nn * kk * cb.grp)
	b.ReportMetric(flop/conv.Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(flop/3/float64(cb.grp)/base.Seconds()/1e9, "gemm-GFLOP/s")
	b.ReportMetric(3*float64(cb.grp)*float64(base)/float64(conv), "x-gemm")
}

// bestInterleaved runs m and its baseline alternately for the benchmark's
// iterations and returns each one's best GPU time (timestamps).
func bestInterleaved(b *testing.B, rt *vkxla.Runtime, m *hlo.Module, in []*hlo.Literal, base *hlo.Module, baseIn []*hlo.Literal) (best, baseBest time.Duration) {
	t := bestInterleavedN(b, rt, []timedRun{{m: m, in: in}, {m: base, in: baseIn}})
	return t[0], t[1]
}

// timedRun is a module to time, its inputs and compile options.
type timedRun struct {
	m    *hlo.Module
	in   []*hlo.Literal
	opts []vkxla.CompileOption
}

// bestInterleavedN runs the modules in turn for the benchmark's iterations and
// returns each one's best GPU time (timestamps).
func bestInterleavedN(b *testing.B, rt *vkxla.Runtime, runs []timedRun) []time.Duration {
	ctx := context.Background()
	exes := make([]*vkxla.Executable, len(runs))
	for i, r := range runs {
		exe, err := rt.Compile(ctx, r.m, append(r.opts, vkxla.WithProfiling(true))...)
		require.NoError(b, err)
		b.Cleanup(func() { require.NoError(b, exe.Close()) })
		exes[i] = exe
	}
	best := make([]time.Duration, len(runs))
	for b.Loop() {
		for i, exe := range exes {
			_, err := exe.Run(ctx, runs[i].in...)
			require.NoError(b, err)
			p, err := exe.Profile()
			require.NoError(b, err)
			if d := p.Total(); best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	return best
}

// gemmModule is a plain M×K · K×N dot of dt.
func gemmModule(tb testing.TB, dt hlo.DType, m, n, k int64) *hlo.Module {
	b := hlo.NewBuilder(fmt.Sprintf("gemm_%d_%d_%d", m, n, k))
	std := hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	return mustBuild(tb, b, b.DotGeneral(b.Parameter(hlo.MakeShape(dt, m, k), "a"), b.Parameter(hlo.MakeShape(dt, k, n), "b"), std))
}

// copyModule is an elementwise copy (negate: one load, one store) of s.
func copyModule(tb testing.TB, s hlo.Shape) *hlo.Module {
	b := hlo.NewBuilder("copy")
	return mustBuild(tb, b, b.Unary(hlo.OpNegate, b.Parameter(s, "x")))
}
