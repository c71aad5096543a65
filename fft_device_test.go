package vkxla_test

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// fft on the GPU (spirv/codegen/fft.go) against cpuref, which is tested against
// the O(n²) definition in f64 (cpuref/fft_test.go).
//
// Tolerance: a radix-2 FFT computed in floating point with twiddles within μ of
// the true ones has ‖ŷ − y‖₂ ≤ L·η/(1 − L·η)·‖y‖₂, η = μ + γ₄(√2 + μ), for L =
// log2 n levels (Higham, Accuracy and Stability of Numerical Algorithms, §24.1);
// a radix-16 pass is four such levels. The twiddles are within μ ≈ 4ε
// (fftTwiddles: up to three products of polynomial values within 1 ulp), so η ≈
// 4ε + 5.7ε < 10ε per level; a multi-dimensional transform adds its axes' levels.
// Each transform of the batch (each leading index) is checked against
// ‖gpu − cpuref‖₂ ≤ (10·L + 1)·ε·‖cpuref‖₂ (the 1 for cpuref's own rounding to
// f32), ε = 2⁻²⁴. A length N that is not a power of two (Bluestein's chirp-z
// through three transforms of length m ≥ 2N−1, fftPasses) counts 3·log2 m + 2
// levels, as a chain of those transforms and two chirp products would. Measured:
// at most 2.7ε for powers of two (L = 12), 7.2ε for Bluestein (N = 50000, L =
// 53), logged by each case.
//
// c128 computes in f64 (twiddles by the same reduction, with f64 Taylor
// polynomials within half an ulp: μ ≈ 4ε again), ε = 2⁻⁵³; cpuref's own f64
// transform is no longer exact beside it: its twiddles from math.Sincos are within
// ε, so its η < 7ε per level, and the bound is (10·L + 7·L + 1)·ε.

func init() { opCases[hlo.OpFft] = fftOpCases }

// fftOpCases are the differential suite's small cases (per-element tolerance
// of the op table's; TestFFTAgainstCPU checks the norm bound over more sizes).
func fftOpCases(t testing.TB, g *gen) []opCase {
	return append(fftOpCasesOf(t, g, hlo.C64), fftOpCasesOf(t, g, hlo.C128)...)
}

func fftOpCasesOf(t testing.TB, g *gen, dt hlo.DType) []opCase {
	var cases []opCase
	for _, c := range []struct {
		t    hlo.FftType
		dims []int64
		n    []int64
	}{
		{hlo.FFT, []int64{3, 16}, []int64{16}},
		{hlo.IFFT, []int64{4, 8}, []int64{4, 8}},
		{hlo.RFFT, []int64{2, 4, 8}, []int64{2, 4, 8}},
		{hlo.IRFFT, []int64{5, 9}, []int64{16}},
		{hlo.FFT, []int64{3, 12}, []int64{12}}, // Bluestein
		{hlo.RFFT, []int64{6, 10}, []int64{6, 10}},
	} {
		x := fftInput(g.rng, dt, c.t, c.dims)
		b := hlo.NewBuilder("fft")
		root := b.Fft(b.Parameter(x.Shape(), "x"), c.t, c.n...)
		cases = append(cases, opCase{name: fmt.Sprintf("%v %v%v", dt, c.t, c.dims), module: mustBuild(t, b, root),
			inputs: []*hlo.Literal{x}, spec: vkxla.Tolerance(hlo.OpFft, dt)})
	}
	return cases
}

// fftInput is a random operand of a transform of type ft in complex type cdt:
// uniform in [−1, 1) in every part.
func fftInput(rng *rand.Rand, cdt hlo.DType, ft hlo.FftType, dims []int64) *hlo.Literal {
	dt := cdt
	if ft == hlo.RFFT {
		dt = cdt.ComplexPart()
	}
	l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i := range l.NumElements() {
		if !dt.IsComplex() {
			l.SetFloat64(i, rng.Float64()*2-1)
		} else {
			l.SetComplex128(i, complex(rng.Float64()*2-1, rng.Float64()*2-1))
		}
	}
	return l
}

// TestFFTAgainstCPU: every fft_type over 1, 2 and 3 dimensions, lengths 1, 2, 8,
// 64, 1024 and 4096 (passes of radix 16, then 8, 4 or 2: 128 is 16·8, 1024 is
// 16·16·4) and lengths that are not powers of two (3, 5, 12, 17, 1000, 50000 and
// mixed with powers of two in 2-D and 3-D), with and without batch dimensions,
// within the bound above, in c64 and c128.
func TestFFTAgainstCPU(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(21, 2))
	shapes := []struct{ batch, n []int64 }{
		{nil, []int64{1}}, {nil, []int64{2}}, {nil, []int64{8}}, {nil, []int64{64}}, {nil, []int64{1024}},
		{nil, []int64{4096}}, {[]int64{5}, []int64{64}}, {[]int64{2, 3}, []int64{8}}, {[]int64{3}, []int64{128}},
		{nil, []int64{16, 2}},
		{nil, []int64{3}}, {nil, []int64{5}}, {nil, []int64{12}}, {[]int64{2}, []int64{17}}, {nil, []int64{1000}},
		{nil, []int64{6, 10}}, {nil, []int64{8, 12}}, {[]int64{2}, []int64{12, 8}}, {nil, []int64{3, 5, 7}}, {nil, []int64{4, 1, 9}},
		{nil, []int64{50000}}, // k² above 2^31: the chirp in 64-bit integers
		{nil, []int64{8, 16}}, {[]int64{3}, []int64{32, 4}}, {nil, []int64{1, 8}}, {nil, []int64{8, 1}},
		{nil, []int64{4, 8, 16}}, {[]int64{2}, []int64{8, 8, 8}}, {nil, []int64{2, 1, 2}},
	}
	for _, dt := range hlo.ComplexDTypes {
		for _, ft := range []hlo.FftType{hlo.FFT, hlo.IFFT, hlo.RFFT, hlo.IRFFT} {
			for _, sh := range shapes {
				name := fmt.Sprintf("%v/%v/batch%v_n%v", dt, ft, sh.batch, sh.n)
				t.Run(name, func(t *testing.T) {
					dims := append(append([]int64(nil), sh.batch...), sh.n...)
					if ft == hlo.IRFFT {
						dims[len(dims)-1] = dims[len(dims)-1]/2 + 1
					}
					x := fftInput(rng, dt, ft, dims)
					b := hlo.NewBuilder("fft")
					m := mustBuild(t, b, b.Fft(b.Parameter(x.Shape(), "x"), ft, sh.n...))
					checkFFT(t, rt, m, len(sh.batch), fftPasses(sh.n), x)
				})
			}
		}
	}
}

// fftPasses is L, the radix-2 levels of the lengths (a radix-16 pass is 4); a
// length N that is not a power of two counts the levels of Bluestein's three
// transforms of length m (K̂'s, the forward and the inverse one) and two for the
// chirp products.
func fftPasses(n []int64) int {
	l := 0
	for _, v := range n {
		switch {
		case v <= 1:
		case v&(v-1) == 0:
			l += bits.Len64(uint64(v)) - 1
		default:
			m := uint64(1) << bits.Len64(uint64(2*v-2))
			l += 3*(bits.Len64(m)-1) + 2
		}
	}
	return l
}

// checkFFT runs m on the device and on cpuref and checks every transform of the
// batch (the first batchDims dimensions of the output) against fftBound.
func checkFFT(t *testing.T, rt *vkxla.Runtime, m *hlo.Module, batchDims, passes int, inputs ...*hlo.Literal) {
	t.Helper()
	want, err := cpuref.Eval(m, inputs...)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	got, err := exe.Run(context.Background(), inputs...)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.True(t, got[0].Shape().Equal(want.Shape()), "%v vs %v", got[0].Shape(), want.Shape())
	checkFFTBound(t, got[0], want, batchDims, passes)
}

// checkFFTBound compares got with want transform by transform.
func checkFFTBound(t *testing.T, got, want *hlo.Literal, batchDims, passes int) {
	t.Helper()
	lines := int64(1)
	for _, d := range want.Shape().Dims[:batchDims] {
		lines *= d
	}
	n := int64(want.NumElements())
	if n == 0 {
		return
	}
	per := n / lines
	eps, levels := math.Ldexp(1, -24), 10*float64(passes)+1
	if dt := want.DType(); dt == hlo.C128 || dt == hlo.F64 {
		eps, levels = math.Ldexp(1, -53), 17*float64(passes)+1 // and cpuref's own f64 error
	}
	worst := 0.0
	for l := range lines {
		var errSq, refSq float64
		for i := l * per; i < (l+1)*per; i++ {
			d := got.Complex128(int(i)) - want.Complex128(int(i))
			w := want.Complex128(int(i))
			errSq += real(d)*real(d) + imag(d)*imag(d)
			refSq += real(w)*real(w) + imag(w)*imag(w)
		}
		bound := levels * eps * math.Sqrt(refSq)
		require.LessOrEqual(t, math.Sqrt(errSq), bound, "transform %d of %d: ‖error‖₂ %g > bound %g", l, lines, math.Sqrt(errSq), bound)
		if refSq > 0 {
			worst = max(worst, math.Sqrt(errSq/refSq)/eps)
		}
	}
	t.Logf("L=%d radix-2 levels: worst ‖error‖/‖ref‖ = %.2f ε", passes, worst)
}

// TestFFTSpectralConv runs testdata/programs/spectral_conv.hlo (a JAX-style dump
// of rfft2 → × a c64 kernel → irfft2 → + x) on the device against cpuref: 20
// radix-2 passes and a product, within the bound of 21 passes per image. The
// executable's peak is the planner's (TestFFTPlanPeak).
func TestFFTSpectralConv(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/spectral_conv.hlo")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(21, 3))
	x := fftInput(rng, hlo.C64, hlo.RFFT, []int64{4, 32, 32})
	w := fftInput(rng, hlo.C64, hlo.FFT, []int64{32, 17})
	checkFFT(t, rt, m, 1, 21, x, w)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	require.Equal(t, int64(16384+17408+32768+17408), exe.MemoryStats().PeakBytes)
}

// TestFFTSpectralConvGrad runs the VJP of spectral_conv.hlo (autodiff's IRFFT
// rule, conj(RFFT(ct)) weighted per bin, and RFFT's, IRFFT of the conjugate
// weighted back) on the device against cpuref. The result and the input's
// cotangent are chains of 21 levels per image, as the forward pass; the weight's
// cotangent sums over the batch the products of two 10-level transforms (ct's and
// x's), counted as 2·(10 + 1) = 22 levels over the whole weight.
func TestFFTSpectralConvGrad(t *testing.T) {
	rt := newRuntime(t)
	_, g, in := spectralConvGrad(t, 4)
	want, err := cpuref.Eval(g, in...)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), g)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	got, err := exe.Run(context.Background(), in...)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, c := range []struct{ batchDims, passes int }{{1, 21}, {1, 21}, {0, 22}} {
		require.True(t, got[i].Shape().Equal(want.Elems()[i].Shape()), "output %d: %v vs %v", i, got[i].Shape(), want.Elems()[i].Shape())
		checkFFTBound(t, got[i], want.Elems()[i], c.batchDims, c.passes)
	}
}

// spectralConvGrad returns spectral_conv.hlo, its VJP in x and the weight, and
// random inputs of the VJP (x, w, the result's cotangent) drawn from seed.
func spectralConvGrad(t testing.TB, seed uint64) (m, vjp *hlo.Module, inputs []*hlo.Literal) {
	m, err := hlo.ParseModuleFile("testdata/programs/spectral_conv.hlo")
	require.NoError(t, err)
	vjp, err = autodiff.VJP(m, []int{0, 1}, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(21, seed))
	inputs = []*hlo.Literal{fftInput(rng, hlo.C64, hlo.RFFT, []int64{4, 32, 32}), fftInput(rng, hlo.C64, hlo.FFT, []int64{32, 17}),
		fftInput(rng, hlo.C64, hlo.RFFT, []int64{4, 32, 32})}
	return m, vjp, inputs
}
