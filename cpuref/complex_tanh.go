package cpuref

import "math"

// complexTanh is tanh(x + iy) by the stable form
//
//	(sinh x·cosh x + i·sin y·cos y) / (sinh²x + cos²y)
//
// whose denominator is a sum of squares: nothing cancels near the poles
// (x = 0, y = π/2 + kπ), where math/cmplx's (sinh 2x + i·sin 2y)/(cosh 2x + cos 2y)
// loses digits (tanh(i·f32(π/2)) 1.2% off). Computed in float64:
//   - on the axes it is exact to the real function: tanh(x + i·0) = tanh x + i·0
//     and tanh(0 + iy) = i·tan y;
//   - beyond |x| = 20 the real part is ±1 to f64 precision (1 − |re| < 4e^{−40})
//     and the imaginary part 4·sin y·cos y·e^{−2|x|}, which underflows to a zero
//     signed as sin 2y, never the NaN of sinh² overflowing (math/cmplx's above
//     |x| = 354.9).
//
// Special values are C99's (Annex G.6.2.6, with C11 DR 471's ±0 + iNaN for a zero
// real part): tanh is odd and tanh(conj z) = conj tanh(z);
//   - tanh(±0 ± i0) = ±0 ± i0;
//   - tanh(x + i·∞) and tanh(x + i·NaN) are NaN + i·NaN for finite non-zero x,
//     and ±0 + i·NaN for x = ±0;
//   - tanh(±∞ + iy) = ±1 + i·0·sin 2y for finite y (the zero signed as sin y·cos y);
//     tanh(±∞ ± i·∞) = ±1 ± i0 (the zero takes y's sign, a choice the standard
//     leaves open) and tanh(±∞ + i·NaN) = ±1 + i0;
//   - tanh(NaN ± i0) = NaN ± i0, and NaN + i·NaN for any other y.
func complexTanh(z complex128) complex128 {
	x, y := real(z), imag(z)
	switch {
	case math.IsInf(x, 0):
		return complex(math.Copysign(1, x), tanhAtInfinityImag(y))
	case math.IsNaN(x):
		if y == 0 {
			return z
		}
		return complex(math.NaN(), math.NaN())
	case math.IsInf(y, 0) || math.IsNaN(y):
		if x == 0 {
			return complex(x, math.NaN())
		}
		return complex(math.NaN(), math.NaN())
	case y == 0:
		return complex(math.Tanh(x), y)
	case x == 0:
		return complex(x, math.Tan(y))
	}
	s, c := math.Sincos(y)
	if ax := math.Abs(x); ax > 20 {
		return complex(math.Copysign(1, x), 4*s*c*math.Exp(-2*ax))
	}
	sh, ch := math.Sinh(x), math.Cosh(x)
	d := sh*sh + c*c
	return complex(sh*ch/d, s*c/d)
}

// tanhAtInfinityImag is the imaginary part of tanh(±∞ + iy): a zero signed as
// sin 2y for finite y (sin y·cos y: 2y may overflow), as y for y = ±∞, +0 for NaN.
func tanhAtInfinityImag(y float64) float64 {
	switch {
	case math.IsNaN(y):
		return 0
	case math.IsInf(y, 0):
		return math.Copysign(0, y)
	}
	s, c := math.Sincos(y)
	return math.Copysign(0, s*c)
}

// complexTan is tan z = −i·tanh(iz), as C99 defines ctan (its special values are
// tanh's rotated): with tanh(−y + ix) = a + ib, tan(x + iy) = b − ia.
func complexTan(z complex128) complex128 {
	t := complexTanh(complex(-imag(z), real(z)))
	return complex(imag(t), -real(t))
}
