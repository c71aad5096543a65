package cpuref

import (
	"math"
	"math/cmplx"
)

// complexPow is cmplx.Pow (XLA's complex pow: exp(w·log z), with math.Pow's
// answers at a zero base), but for a zero base raised to a power whose real part
// is NaN beside an infinite imaginary part: cmplx.Pow panics there ("not
// reached": cmplx.IsNaN is false when a part is infinite, and no comparison of
// the NaN holds); it is NaN + i·NaN here, as for any other NaN exponent.
//
// At z = ±0 ± i0: pow(0, w) = 1 for real(w) = ±0, +inf + i0 for real(w) < 0 and
// imag(w) = 0, +inf + i·inf for real(w) < 0 otherwise, 0 for real(w) > 0, and
// NaN + i·NaN for a NaN exponent. Elsewhere, with r = |z| and θ = arg z (atan2,
// cut along the negative reals, the sign of a zero imaginary part picking the
// side): pow(z, a + ib) = r^a·e^{−bθ}·(cos φ + i·sin φ), φ = aθ + b·ln r, the
// factor e^{−bθ} and the term b·ln r left out where b = 0.
func complexPow(z, w complex128) complex128 {
	if z == 0 && math.IsNaN(real(w)) {
		return cmplx.NaN()
	}
	return cmplx.Pow(z, w)
}
