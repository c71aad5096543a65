package cpuref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/vkxla/vkxla/hlo"
)

// TestComplexDotMatrices: [[1+i, 2], [0, 3-i]]·[[1, i], [2-i, 1]] by hand:
// row 0: (1+i)·1 + 2·(2−i) = 5−i;  (1+i)·i + 2·1 = 1+i
// row 1: 0·1 + (3−i)(2−i) = 5−5i; 0·i + (3−i)·1 = 3−i
func TestComplexDotMatrices(t *testing.T) {
	a := []complex128{1 + 1i, 2, 0, 3 - 1i}
	b := []complex128{1, 1i, 2 - 1i, 1}
	want := []complex128{5 - 1i, 1 + 1i, 5 - 5i, 3 - 1i}
	mm := "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
	got := evalText(t, dotText("c128[2,2]", "c128[2,2]", "c128[2,2]", mm), complexMat[complex128](a), complexMat[complex128](b))
	assertLit(t, complexMat[complex128](want), got, "c128")
	got = evalText(t, dotText("c64[2,2]", "c64[2,2]", "c64[2,2]", mm), complexMat[complex64](a), complexMat[complex64](b))
	assertLit(t, complexMat[complex64](want), got, "c64")
}

// TestComplexDotBatched: two batches of a 1×2 by 2×1 product, contracting the
// lhs's last and the rhs's middle dimension:
// batch 0: (1+2i)(3) + (−i)(1+i) = 3+6i + 1−i = 4+5i
// batch 1: (2)(i) + (1−i)(1−i) = 2i − 2i = 0
func TestComplexDotBatched(t *testing.T) {
	a := hlo.MustFromSlice([]int64{2, 1, 2}, []complex128{1 + 2i, -1i, 2, 1 - 1i})
	b := hlo.MustFromSlice([]int64{2, 2, 1}, []complex128{3, 1 + 1i, 1i, 1 - 1i})
	want := hlo.MustFromSlice([]int64{2, 1, 1}, []complex128{4 + 5i, 0})
	got := evalText(t, dotText("c128[2,1,2]", "c128[2,2,1]", "c128[2,1,1]",
		"lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"), a, b)
	assertLit(t, want, got)
}

// TestComplexDotRoundsOnce: c64 parts (1+ε)·(1+ε) + (−1)·1 with ε = 2⁻¹² is
// 2ε + ε² = 2⁻¹¹ + 2⁻²⁴, which f32 holds, got only by rounding once at the end
// (an f32 product per term rounds (1+ε)² = 1 + 2⁻¹¹ + 2⁻²⁴, 25 significant bits,
// to the even 1 + 2⁻¹¹ and leaves 2⁻¹¹).
func TestComplexDotRoundsOnce(t *testing.T) {
	const eps = 1.0 / (1 << 12)
	a := vec(complex64(complex(1+eps, 0)), complex64(-1))
	b := vec(complex64(complex(1+eps, 0)), complex64(1))
	got := evalText(t, dotText("c64[2]", "c64[2]", "c64[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"), a, b)
	assertLit(t, scalar(complex64(complex(float32(2*eps+eps*eps), 0))), got)
}

func TestComplexDotMixedTypesRefused(t *testing.T) {
	lhs, rhs := vec(complex64(1)), vec(complex128(1))
	m := oneInstruction(hlo.OpDot, hlo.Scalar(hlo.C64), hlo.Attributes{Dot: &hlo.DotDims{
		LhsContracting: []int64{0}, RhsContracting: []int64{0}}}, lhs, rhs)
	_, err := EvalComputation(m.Entry, lhs, rhs)
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.ErrorContains(t, err, "one complex type")
}

func complexMat[T complex64 | complex128](vals []complex128) *hlo.Literal {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return hlo.MustFromSlice([]int64{2, 2}, out)
}

// TestComplexConvolution: a 1-D valid convolution (cross-correlation) of one
// feature, x = [1+i, 2, −i] with kernel k = [i, 1]:
// out[0] = (1+i)·i + 2·1 = 1+i;  out[1] = 2·i + (−i)·1 = i.
func TestComplexConvolution(t *testing.T) {
	x := hlo.MustFromSlice([]int64{1, 1, 3}, []complex128{1 + 1i, 2, -1i})
	k := hlo.MustFromSlice([]int64{1, 1, 2}, []complex128{1i, 1})
	want := hlo.MustFromSlice([]int64{1, 1, 2}, []complex128{1 + 1i, 1i})
	got := evalText(t, oneOp(`
  x = c128[1,1,3] parameter(0)
  k = c128[1,1,2] parameter(1)
  ROOT c = c128[1,1,2] convolution(x, k), window={size=2}, dim_labels=bf0_oi0->bf0`), x, k)
	assertLit(t, want, got)
}
