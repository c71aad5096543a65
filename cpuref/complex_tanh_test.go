package cpuref

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkxla/vkxla/hlo"
)

// halfPiBig is π/2 to 50 digits, for the distance of a float to the pole.
func halfPiBig() *big.Float {
	pi, _, _ := big.ParseFloat("3.14159265358979323846264338327950288419716939937510", 10, 200, big.ToNearestEven)
	return new(big.Float).SetPrec(200).Quo(pi, big.NewFloat(2))
}

// fromPole is y − (2k + 1)·π/2, the distance to the pole iπ(k + ½), in 200 bits,
// rounded once to float64.
func fromPole(y float64, k int) float64 {
	pole := new(big.Float).SetPrec(200).Mul(halfPiBig(), big.NewFloat(float64(2*k+1)))
	d, _ := new(big.Float).SetPrec(200).Sub(new(big.Float).SetPrec(200).SetFloat64(y), pole).Float64()
	return d
}

// cothSeries is coth w = 1/w + w/3 − w³/45 + 2w⁵/945 − …, which for |w| ≤ 1e-3
// leaves out less than |w|⁷/4725 relative to 1/w (below 1e-24).
func cothSeries(w complex128) complex128 {
	w2 := w * w
	return 1/w + w/3 - w*w2/45 + 2*w*w2*w2/945
}

// TestComplexTanhOnTheAxes: tanh(x + i0) is the real tanh, tanh(0 + iy) = i·tan y
// (tanh(iy) = sinh(iy)/cosh(iy) = i·sin y/cos y), signed zeros kept.
func TestComplexTanhOnTheAxes(t *testing.T) {
	ys := []float64{0.5, -1.25, 3, 1e-8, 100}
	var in, want []complex128
	for _, y := range ys {
		in = append(in, complex(0, y), complex(negZ64, y), complex(y, 0), complex(y, negZ64))
		want = append(want, complex(0, math.Tan(y)), complex(negZ64, math.Tan(y)), complex(math.Tanh(y), 0), complex(math.Tanh(y), negZ64))
	}
	assertLit(t, vec(want...), evalUnaryOp(t, hlo.OpTanh, vec(in...)), "tanh c128")
	// tan(x + i0) = tan x, tan(0 + iy) = i·tanh y.
	in, want = nil, nil
	for _, y := range ys {
		in = append(in, complex(y, 0), complex(0, y))
		want = append(want, complex(math.Tan(y), 0), complex(0, math.Tanh(y)))
	}
	assertLit(t, vec(want...), evalUnaryOp(t, hlo.OpTan, vec(in...)), "tan c128")
}

// TestComplexTanhNearThePole compares with values worked out apart from the
// code: on the axis tanh(iy) = i·tan y = −i·cot(y − π/2), and off it tanh(z) =
// coth(z − iπ/2) by its Laurent series, the distance to the pole taken in 200-bit
// arithmetic. math/cmplx's tanh(i·f32(π/2)) was 1.2% off.
func TestComplexTanhNearThePole(t *testing.T) {
	y32 := float64(float32(math.Pi / 2))
	d := fromPole(y32, 0) // 4.37e-8
	onAxis := complex(0, -1/d+d/3)
	got := evalUnaryOp(t, hlo.OpTanh, vec(complex(0, y32)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(onAxis), 0, 1e-15), "tanh(i·f32(π/2)) c128")
	got = evalUnaryOp(t, hlo.OpTanh, vec(complex64(complex(0, y32))))
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex64(onAxis)), 0, 0x1p-24), "tanh(i·f32(π/2)) c64")
	assert.InDelta(t, -2.2877e7, imag(onAxis), 1e3)

	var in, want []complex128
	for _, z := range []complex128{complex(1e-3, math.Pi/2+1e-3), complex(-2e-4, 3*math.Pi/2-5e-4), complex(1e-6, -math.Pi/2)} {
		k := int(math.Round(imag(z)/math.Pi - 0.5)) // the pole at iπ(k + ½)
		w := complex(real(z), fromPole(imag(z), k))
		in, want = append(in, z), append(want, cothSeries(w))
	}
	got = evalUnaryOp(t, hlo.OpTanh, vec(in...))
	assert.NoError(t, hlo.LiteralsClose(got, vec(want...), 0, 1e-13), "tanh off the axis near the poles")
	// tan(f32(π/2)) = −cot(d)·… on the real axis: tan z = −i·tanh(iz).
	got = evalUnaryOp(t, hlo.OpTan, vec(complex(y32, 0)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(-1/d+d/3, 0)), 0, 1e-15), "tan(f32(π/2))")
}

// TestComplexTanhLargeReal: beyond |x| = 20 the real part is ±1 and the
// imaginary part 4·sin y·cos y·e^{−2|x|}; math/cmplx gave NaN above |x| = 354.9.
func TestComplexTanhLargeReal(t *testing.T) {
	// tanh(30 + i) from its definition: sin 1·cos 1/(sinh²30 + cos²1), sinh 30 =
	// (e³⁰ − e⁻³⁰)/2.
	sh := (math.Exp(30) - math.Exp(-30)) / 2
	im30 := math.Sin(1) * math.Cos(1) / (sh*sh + math.Cos(1)*math.Cos(1))
	got := evalUnaryOp(t, hlo.OpTanh, vec(complex(30, 1), complex(-30, 1)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(1, im30), complex(-1, im30)), 0, 1e-14))
	// The imaginary part underflows to a zero signed as sin 2y (2y = 2: +, 4: −),
	// odd in x and conjugate-symmetric in y.
	assertLit(t, vec(complex(1, 0), complex(-1, 0), complex(1, negZ64), complex(-1, negZ64), complex(1, negZ64), complex(1, 0)),
		evalUnaryOp(t, hlo.OpTanh, vec(complex(400, 1), complex(-400, 1), complex(400, -1), complex(-400, 2), complex(1e300, 2), complex(1e300, -2))))
	assertLit(t, vec(complex64(complex(1, 0)), complex(-1, negZ32)), evalUnaryOp(t, hlo.OpTanh, vec(complex64(complex(100, 1)), complex64(complex(-100, 2)))))
	// tan(1 + 400i) = −i·tanh(−400 + i) = −i·(−1 + i0) = +0 + i.
	assertLit(t, vec(complex(0, 1), complex(0, -1)), evalUnaryOp(t, hlo.OpTan, vec(complex(1, 400), complex(1, -400))))
}

// TestComplexTanhSpecialValues: C99 Annex G.6.2.6 (with C11 DR 471 for a zero real
// part beside i·∞ or i·NaN), and tan's by tan z = −i·tanh(iz).
func TestComplexTanhSpecialValues(t *testing.T) {
	nan := math.NaN()
	cases := []struct{ z, want complex128 }{
		{complex(0, 0), complex(0, 0)},
		{complex(negZ64, negZ64), complex(negZ64, negZ64)},
		{complex(1, inf64), complex(nan, nan)},
		{complex(-2, -inf64), complex(nan, nan)},
		{complex(0, inf64), complex(0, nan)},
		{complex(negZ64, inf64), complex(negZ64, nan)},
		{complex(1, nan), complex(nan, nan)},
		{complex(0, nan), complex(0, nan)},
		{complex(inf64, 1), complex(1, 0)},      // 0·sin 2
		{complex(inf64, 2), complex(1, negZ64)}, // 0·sin 4
		{complex(-inf64, 1), complex(-1, 0)},
		{complex(inf64, negZ64), complex(1, negZ64)},
		{complex(inf64, inf64), complex(1, 0)},
		{complex(-inf64, -inf64), complex(-1, negZ64)},
		{complex(inf64, nan), complex(1, 0)},
		{complex(-inf64, nan), complex(-1, 0)},
		{complex(nan, 0), complex(nan, 0)},
		{complex(nan, negZ64), complex(nan, negZ64)},
		{complex(nan, 1), complex(nan, nan)},
		{complex(nan, inf64), complex(nan, nan)},
		{complex(nan, nan), complex(nan, nan)},
	}
	var in, want []complex128
	for _, c := range cases {
		in, want = append(in, c.z), append(want, c.want)
	}
	assertLit(t, vec(want...), evalUnaryOp(t, hlo.OpTanh, vec(in...)), "tanh")
	// tan(x + iy) = b − ia for tanh(−y + ix) = a + ib.
	in, want = nil, nil
	for _, c := range cases {
		in = append(in, complex(imag(c.z), -real(c.z)))
		want = append(want, complex(imag(c.want), -real(c.want)))
	}
	assertLit(t, vec(want...), evalUnaryOp(t, hlo.OpTan, vec(in...)), "tan")
}

// TestComplexPowZeroBaseNaN: pow(0, NaN + i·inf) is NaN + i·NaN (cmplx.Pow panics
// there), as pow(0, w) is for any NaN in w; the other zero-base cases are
// math/cmplx's.
func TestComplexPowZeroBaseNaN(t *testing.T) {
	nan := math.NaN()
	z := vec(complex(0, 0), complex(negZ64, 0), complex(0, 0), complex(0, 0), complex(0, 0), complex(0, 0), complex(0, 0))
	w := vec(complex(nan, inf64), complex(nan, -inf64), complex(0, 5), complex(-1, 0), complex(-1, 1), complex(2, -3), complex(1, nan))
	assertLit(t, vec(complex(nan, nan), complex(nan, nan), complex(1, 0), complex(inf64, 0), complex(inf64, inf64), complex(0, 0), complex(nan, nan)),
		evalBinaryOp(t, hlo.OpPower, z, w))
}
