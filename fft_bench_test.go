package vkxla_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// fftBenchBatch and fftBenchN are BenchmarkFFT's transforms: 32 of 4096 points.
const fftBenchBatch, fftBenchN = 32, 4096

// dftDotModule is the O(n²) DFT of batch×n c64 values written as one f32 dot,
// as a program without an FFT would compute it: the rows of x's real parts and
// then its imaginary parts, [2·batch, n], times [C | S] ([n, 2n], C = cos 2πjk/n,
// S = sin 2πjk/n), and X = (re·C + im·S) + i·(im·C − re·S).
func dftDotModule(tb testing.TB, batch, n int64) *hlo.Module {
	text := fmt.Sprintf(`HloModule dft_dot
ENTRY main {
  x = f32[%[1]d,%[3]d] parameter(0)
  w = f32[%[3]d,%[4]d] parameter(1)
  p = f32[%[1]d,%[4]d] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  reC = f32[%[2]d,%[3]d] slice(p), slice={[0:%[2]d], [0:%[3]d]}
  reS = f32[%[2]d,%[3]d] slice(p), slice={[0:%[2]d], [%[3]d:%[4]d]}
  imC = f32[%[2]d,%[3]d] slice(p), slice={[%[2]d:%[1]d], [0:%[3]d]}
  imS = f32[%[2]d,%[3]d] slice(p), slice={[%[2]d:%[1]d], [%[3]d:%[4]d]}
  re = f32[%[2]d,%[3]d] add(reC, imS)
  im = f32[%[2]d,%[3]d] subtract(imC, reS)
  ROOT X = c64[%[2]d,%[3]d] complex(re, im)
}`, 2*batch, batch, n, 2*n)
	m, err := hlo.ParseModule(text)
	require.NoError(tb, err)
	return m
}

// dftDotInputs are dftDotModule's operands for the c64 values x: its parts as
// rows, and the cosine and sine matrix (angles reduced as jk mod n, exactly).
func dftDotInputs(x *hlo.Literal, batch, n int64) []*hlo.Literal {
	parts := hlo.NewLiteral(hlo.MakeShape(hlo.F32, 2*batch, n))
	for i := range int(batch * n) {
		z := x.Complex128(i)
		parts.SetFloat64(i, real(z))
		parts.SetFloat64(i+int(batch*n), imag(z))
	}
	w := make([]float32, n*2*n)
	for j := range n {
		for k := range n {
			s, c := math.Sincos(2 * math.Pi * float64(j*k%n) / float64(n))
			w[j*2*n+k], w[j*2*n+n+k] = float32(c), float32(s)
		}
	}
	return []*hlo.Literal{parts, hlo.MustFromSlice([]int64{n, 2 * n}, w)}
}

// BenchmarkFFT measures the GPU FFT (spirv/codegen/fft.go: 3 radix-16 passes for
// 4096 points) of 32 transforms of 4096 c64 points against, in the same process
// (best GPU time of the runs, by timestamps, interleaved):
//
//   - the same transform as the O(n²) DFT written as an f32 dot (c64 dot has no
//     GPU kernel; dftDotModule): x-dft is its time over the FFT's;
//   - an elementwise copy (negate) of as many f32 values as the batch has bytes
//     (vec4 loads and stores, lavapipe's streaming ceiling): pass-GB/s counts the
//     bytes the FFT's passes move (each reads and writes the batch once), x-copy
//     is the ratio of that to the copy's GB/s.
//
// GFLOP/s is the FFT convention, 5·n·log2(n) per transform. The two transforms'
// results are checked against each other once (relative L2 error below 1e-4: the
// dot's sums of 4096 products).
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench FFT -benchtime 5x .
func BenchmarkFFT(b *testing.B) {
	rt := newRuntime(b)
	batch, n := int64(fftBenchBatch), int64(fftBenchN)
	x := randomC64With(&gen{rng: rnd(81)}, nil, batch, n)
	fb := hlo.NewBuilder("fft_bench")
	fftMod := mustBuild(b, fb, fb.Fft(fb.Parameter(x.Shape(), "x"), hlo.FFT, n))
	dft, dftIn := dftDotModule(b, batch, n), dftDotInputs(x, batch, n)
	checkSameTransform(b, rt, fftMod, dft, x, dftIn)
	copyIn := lit(rnd(82), hlo.F32, unitDomain, batch, 2*n)
	times := bestInterleavedN(b, rt, []timedRun{{m: fftMod, in: []*hlo.Literal{x}}, {m: dft, in: dftIn}, {m: copyModule(b, copyIn.Shape()), in: []*hlo.Literal{copyIn}}})
	fft, dot, cp := times[0].Seconds(), times[1].Seconds(), times[2].Seconds()
	log2n := math.Log2(float64(n))
	passes := math.Ceil(log2n / 4) // radix 16, then 8, 4 or 2
	bytes := float64(x.Shape().ByteSize())
	b.ReportMetric(5*float64(n)*log2n*float64(batch)/fft/1e9, "GFLOP/s")
	b.ReportMetric(8*float64(batch*n*n)/dot/1e9, "dft-GFLOP/s")
	b.ReportMetric(dot/fft, "x-dft")
	b.ReportMetric(2*bytes*passes/fft/1e9, "pass-GB/s")
	b.ReportMetric(2*bytes/cp/1e9, "copy-GB/s")
	b.ReportMetric(passes*cp/fft, "x-copy")
	b.ReportMetric(fft*1e6/float64(batch), "µs/transform")
}

// checkSameTransform runs both programs once and compares their c64 results.
func checkSameTransform(b *testing.B, rt *vkxla.Runtime, fftMod, dft *hlo.Module, x *hlo.Literal, dftIn []*hlo.Literal) {
	run := func(m *hlo.Module, in []*hlo.Literal) *hlo.Literal {
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(b, err)
		defer func() { require.NoError(b, exe.Close()) }()
		out, err := exe.Run(context.Background(), in...)
		require.NoError(b, err)
		return out[0]
	}
	got, want := run(fftMod, []*hlo.Literal{x}), run(dft, dftIn)
	var errSq, refSq float64
	for i := range want.NumElements() {
		d, w := got.Complex128(i)-want.Complex128(i), want.Complex128(i)
		errSq += real(d)*real(d) + imag(d)*imag(d)
		refSq += real(w)*real(w) + imag(w)*imag(w)
	}
	require.Less(b, math.Sqrt(errSq/refSq), 1e-4, "the FFT and the DFT as a dot disagree")
}

// BenchmarkFFTBluestein measures 32 transforms of 4095 c64 points (not a power
// of two: Bluestein's chirp-z, three transforms of 8192 points of which K̂'s is
// computed once per run) against 32 of 4096 in the same process: x-pow2 is the
// 4096-point time over the 4095-point one. GFLOP/s counts 5·n·log2(n) per
// transform, as for powers of two.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench FFTBluestein -benchtime 5x .
func BenchmarkFFTBluestein(b *testing.B) {
	rt := newRuntime(b)
	module := func(n int64) (*hlo.Module, *hlo.Literal) {
		x := randomC64With(&gen{rng: rnd(83)}, nil, fftBenchBatch, n)
		fb := hlo.NewBuilder("fft_bench")
		return mustBuild(b, fb, fb.Fft(fb.Parameter(x.Shape(), "x"), hlo.FFT, n)), x
	}
	odd, oddIn := module(fftBenchN - 1)
	pow2, pow2In := module(fftBenchN)
	times := bestInterleavedN(b, rt, []timedRun{{m: odd, in: []*hlo.Literal{oddIn}}, {m: pow2, in: []*hlo.Literal{pow2In}}})
	n := float64(fftBenchN - 1)
	b.ReportMetric(5*n*math.Log2(n)*fftBenchBatch/times[0].Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(times[0].Seconds()*1e6/fftBenchBatch, "µs/transform")
	b.ReportMetric(times[1].Seconds()/times[0].Seconds(), "x-pow2")
}

// BenchmarkSpectralConvGrad times the VJP of testdata/programs/spectral_conv.hlo
// (in x and the c64 weight) against its forward pass, interleaved in one process,
// best device time of each; it reports both planned peaks too.
func BenchmarkSpectralConvGrad(b *testing.B) {
	rt := newRuntime(b)
	m, g, in := spectralConvGrad(b, 5)
	peak := func(m *hlo.Module) float64 {
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(b, err)
		defer func() { require.NoError(b, exe.Close()) }()
		return float64(exe.MemoryStats().PeakBytes)
	}
	fwdPeak, vjpPeak := peak(m), peak(g)
	times := bestInterleavedN(b, rt, []timedRun{{m: m, in: in[:2]}, {m: g, in: in}})
	b.ReportMetric(times[0].Seconds()*1e6, "fwd-µs")
	b.ReportMetric(times[1].Seconds()*1e6, "vjp-µs")
	b.ReportMetric(times[1].Seconds()/times[0].Seconds(), "x-forward")
	b.ReportMetric(fwdPeak, "fwd-peak-B")
	b.ReportMetric(vjpPeak, "vjp-peak-B")
}

// BenchmarkFFTC128 measures 32 transforms of 4096 c128 points (the same 3
// radix-16 passes in f64) against 32 of 4096 c64 points in the same process:
// x-c64 is the c128 time over the c64 one, pass-GB/s the bytes c128's passes
// move (twice c64's per point).
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench FFTC128 -benchtime 5x .
func BenchmarkFFTC128(b *testing.B) {
	rt := newRuntime(b)
	module := func(dt hlo.DType) (*hlo.Module, *hlo.Literal) {
		x := randomComplexWith(&gen{rng: rnd(84)}, dt, nil, fftBenchBatch, fftBenchN)
		fb := hlo.NewBuilder("fft_bench_" + dt.String())
		return mustBuild(b, fb, fb.Fft(fb.Parameter(x.Shape(), "x"), hlo.FFT, fftBenchN)), x
	}
	wide, wideIn := module(hlo.C128)
	narrow, narrowIn := module(hlo.C64)
	times := bestInterleavedN(b, rt, []timedRun{{m: wide, in: []*hlo.Literal{wideIn}}, {m: narrow, in: []*hlo.Literal{narrowIn}}})
	n := float64(fftBenchN)
	passes := math.Ceil(math.Log2(n) / 4)
	b.ReportMetric(5*n*math.Log2(n)*fftBenchBatch/times[0].Seconds()/1e9, "GFLOP/s")
	b.ReportMetric(times[0].Seconds()*1e6/fftBenchBatch, "µs/transform")
	b.ReportMetric(2*float64(wideIn.Shape().ByteSize())*passes/times[0].Seconds()/1e9, "pass-GB/s")
	b.ReportMetric(times[0].Seconds()/times[1].Seconds(), "x-c64")
}
