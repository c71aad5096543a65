package cpuref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// The expected transforms are the O(n²) definition, summed in the test in f64:
// X[k] = Σ_j x[j]·e^{∓2πi·jk/n}, over each transformed dimension in turn, with 1/n
// for the inverse.

// dft1 is the direct transform of one line.
func dft1(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	out := make([]complex128, n)
	for k := range out {
		var sum complex128
		for j, v := range x {
			s, c := math.Sincos(sign * 2 * math.Pi * float64(j*k%n) / float64(n))
			sum += v * complex(c, s)
		}
		if inverse {
			sum /= complex(float64(n), 0)
		}
		out[k] = sum
	}
	return out
}

// dftAxes applies dft1 along each of the last len(n) axes of data (row-major dims).
func dftAxes(data []complex128, dims []int64, axes int, inverse bool) []complex128 {
	out := append([]complex128(nil), data...)
	for a := len(dims) - axes; a < len(dims); a++ {
		n, inner, outer := lineGeometry(dims, a)
		for l := 0; l < outer*inner; l++ {
			base := (l/inner)*n*inner + l%inner
			line := make([]complex128, n)
			for k := range line {
				line[k] = out[base+k*inner]
			}
			for k, v := range dft1(line, inverse) {
				out[base+k*inner] = v
			}
		}
	}
	return out
}

func randomComplex(rng *rand.Rand, n int) []complex128 {
	out := make([]complex128, n)
	for i := range out {
		out[i] = complex(rng.Float64()*2-1, rng.Float64()*2-1)
	}
	return out
}

func evalFftOp(t *testing.T, x *hlo.Literal, typ hlo.FftType, n ...int64) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Fft(xs[0], typ, n...) }, x)
}

func c128Lit(dims []int64, v []complex128) *hlo.Literal { return mat(dims, v...) }

// TestFftMatchesDFT: FFT and IFFT of c128 against the definition, for power-of-two
// lengths (radix-2) and others (Bluestein), 1-D, 2-D and 3-D, with a batch
// dimension in front.
func TestFftMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shapes := [][]int64{}
	for _, n := range []int64{1, 2, 3, 5, 8, 12, 16, 17, 64} {
		shapes = append(shapes, []int64{3, n})
	}
	shapes = append(shapes, []int64{2, 4, 6}, []int64{5, 8}, []int64{3, 4, 5}, []int64{2, 3, 8, 7})
	for _, dims := range shapes {
		axes := min(len(dims)-1, 3)
		if len(dims) == 2 {
			axes = 1
		}
		lengths := dims[len(dims)-axes:]
		x := randomComplex(rng, int(hlo.MakeShape(hlo.C128, dims...).NumElements()))
		for _, typ := range []hlo.FftType{hlo.FFT, hlo.IFFT} {
			got := evalFftOp(t, c128Lit(dims, x), typ, lengths...)
			want := c128Lit(dims, dftAxes(x, dims, axes, typ == hlo.IFFT))
			assert.NoError(t, hlo.LiteralsClose(got, want, 1e-13, 1e-13), "%v of %v over %v", typ, dims, lengths)
		}
	}
}

// TestFftKnownTransforms are transforms worked out by hand.
func TestFftKnownTransforms(t *testing.T) {
	ones := func(n int, v complex128) []complex128 {
		out := make([]complex128, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	for _, n := range []int{1, 5, 8, 12} {
		delta := make([]complex128, n)
		delta[0] = 1
		// The transform of a delta is all ones; of a constant c, n·c at 0 and zeros.
		assert.NoError(t, hlo.LiteralsClose(evalFftOp(t, vec(delta...), hlo.FFT, int64(n)), vec(ones(n, 1)...), 1e-15, 0), "delta n=%d", n)
		spike := make([]complex128, n)
		spike[0] = complex(2*float64(n), -float64(n))
		assert.NoError(t, hlo.LiteralsClose(evalFftOp(t, vec(ones(n, complex(2, -1))...), hlo.FFT, int64(n)), vec(spike...), 1e-13, 0), "constant n=%d", n)
		// IFFT scales by 1/n: the inverse of all ones is the delta.
		assert.NoError(t, hlo.LiteralsClose(evalFftOp(t, vec(ones(n, 1)...), hlo.IFFT, int64(n)), vec(delta...), 1e-15, 0), "IFFT n=%d", n)
	}
	// x[j] = e^{2πi·j/4} is the first basis vector: its transform is 4 at k = 1.
	got := evalFftOp(t, vec(complex(1, 0), complex(0, 1), complex(-1, 0), complex(0, -1)), hlo.FFT, 4)
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(0, 0), complex(4, 0), complex(0, 0), complex(0, 0)), 1e-15, 0))
	// RFFT of [1, 2, 3, 4]: X0 = 10, X1 = −2+2i, X2 = −2.
	got = evalFftOp(t, vec(1.0, 2, 3, 4), hlo.RFFT, 4)
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(10, 0), complex(-2, 2), complex(-2, 0)), 1e-15, 0))
	// IRFFT back, and of length 1 and 2.
	got = evalFftOp(t, vec(complex(10, 0), complex(-2, 2), complex(-2, 0)), hlo.IRFFT, 4)
	assert.NoError(t, hlo.LiteralsClose(got, vec(1.0, 2, 3, 4), 1e-15, 0))
	assertLit(t, vec(3.0), evalFftOp(t, vec(complex(3, 0)), hlo.IRFFT, 1))
}

// TestRfftIrfft: RFFT is the first n/2+1 entries of the complex transform of the
// real operand; IRFFT inverts it (odd and even n, 1-D to 3-D).
func TestRfftIrfft(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ dims, n []int64 }{
		{dims(3, 8), dims(8)}, {dims(2, 7), dims(7)}, {dims(1), dims(1)}, {dims(2, 2), dims(2)},
		{dims(4, 6), dims(4, 6)}, {dims(3, 5), dims(3, 5)}, {dims(2, 3, 4, 5), dims(3, 4, 5)},
	} {
		total := int(hlo.MakeShape(hlo.F64, tc.dims...).NumElements())
		re := make([]float64, total)
		asComplex := make([]complex128, total)
		for i := range re {
			re[i] = rng.Float64()*2 - 1
			asComplex[i] = complex(re[i], 0)
		}
		full := dftAxes(asComplex, tc.dims, len(tc.n), false)
		last := tc.dims[len(tc.dims)-1]
		half := last/2 + 1
		outDims := append(append([]int64(nil), tc.dims[:len(tc.dims)-1]...), half)
		want := make([]complex128, 0, total)
		for l := 0; l < total/int(last); l++ {
			want = append(want, full[l*int(last):l*int(last)+int(half)]...)
		}
		got := evalFftOp(t, mat(tc.dims, re...), hlo.RFFT, tc.n...)
		require.NoError(t, hlo.LiteralsClose(got, c128Lit(outDims, want), 1e-13, 1e-13), "RFFT %v", tc.dims)
		back := evalFftOp(t, got, hlo.IRFFT, tc.n...)
		assert.NoError(t, hlo.LiteralsClose(back, mat(tc.dims, re...), 1e-13, 1e-13), "IRFFT %v", tc.dims)
	}
}

// TestIrfftIgnoresImaginaryDCAndNyquist: the imaginary parts of entries 0 and n/2
// cannot come from a real signal; IRFFT drops them.
func TestIrfftIgnoresImaginaryDCAndNyquist(t *testing.T) {
	a := evalFftOp(t, vec(complex(10, 0), complex(-2, 2), complex(-2, 0)), hlo.IRFFT, 4)
	b := evalFftOp(t, vec(complex(10, 7), complex(-2, 2), complex(-2, -3)), hlo.IRFFT, 4)
	assert.NoError(t, hlo.LiteralsClose(b, a, 1e-15, 0))
}

// TestFftC64 computes in f64 and rounds once: within f32's precision of the
// definition.
func TestFftC64(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{5, 16, 17} {
		x := randomComplex(rng, 2*n)
		x64 := make([]complex64, len(x))
		for i, v := range x {
			x64[i] = complex64(v)
			x[i] = complex128(x64[i])
		}
		got := evalFftOp(t, mat(dims(2, int64(n)), x64...), hlo.FFT, int64(n))
		want := dftAxes(x, dims(2, int64(n)), 1, false)
		want64 := make([]complex64, len(want))
		for i, v := range want {
			want64[i] = complex64(v)
		}
		assert.NoError(t, hlo.LiteralsClose(got, mat(dims(2, int64(n)), want64...), 1e-6, 1e-6), "n=%d", n)
		r := evalFftOp(t, mat(dims(int64(n)), make([]float32, n)...), hlo.RFFT, int64(n))
		assert.Equal(t, hlo.MakeShape(hlo.C64, int64(n/2+1)), r.Shape())
	}
}

// TestFftEmptyAndLengthOne: a transform of length 1 is the identity; of length 0
// has nothing to transform (RFFT's one entry per line is the empty sum, 0).
func TestFftEmptyAndLengthOne(t *testing.T) {
	x := vec(complex(1, 2), complex(3, 4))
	got := evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction {
		return b.Fft(b.Reshape(xs[0], 2, 1), hlo.IFFT, 1)
	}, x)
	assertLit(t, mat(dims(2, 1), complex(1, 2), complex(3, 4)), got)
	got = evalFftOp(t, mat(dims(3, 0), []float32{}...), hlo.RFFT, 0)
	assertLit(t, mat(dims(3, 1), complex64(0), 0, 0), got)
}
