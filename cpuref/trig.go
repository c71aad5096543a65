package cpuref

import (
	"math"
	"math/big"

	"github.com/vkxla/vkxla/internal/bigref"
)

// Sine, cosine and tangent, correctly rounded but for ties. Go's math.Sin and Cos
// reduce x by π/4 split in three doubles and are up to 7 ulp off where the reduction
// cancels (sin(float64(π))) and 25 ulp at the largest floats; cpuref defines what the
// GPU's kernels (within 2 ulp) are held to, so it reduces in double-double with π/2
// to 212 bits and sums the series on the double-double remainder.

// sin is sine; sin(±0) = ±0, sin(±Inf) = NaN.
func sin(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || x != x {
		return math.Sin(x)
	}
	s, _ := sinCosDD(x)
	return s.hi
}

// cos is cosine; cos(±Inf) = NaN.
func cos(x float64) float64 {
	if math.IsInf(x, 0) || x != x {
		return math.Cos(x)
	}
	_, c := sinCosDD(x)
	return c.hi
}

// tan is sine over cosine in double-double; tan(±0) = ±0.
func tan(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || x != x {
		return math.Tan(x)
	}
	s, c := sinCosDD(x)
	return s.div(c).hi
}

// sinCosDD is sine and cosine of a finite x to about 100 bits.
func sinCosDD(x float64) (sin, cos dd) {
	r, q := reducePio2(x)
	r2 := r.mul(r)
	sin = r.mul(ddSeries(r2, 1))
	cos = ddSeries(r2, 0)
	switch q & 3 {
	case 1:
		sin, cos = cos, sin.neg()
	case 2:
		sin, cos = sin.neg(), cos.neg()
	case 3:
		sin, cos = cos.neg(), sin
	}
	return sin, cos
}

// ddSeries is Σ (−1)^k r2^k / (2k+first)!: cosine's series for first = 0, sine's
// divided by r for first = 1. |r| ≤ π/4 + ε, so 27!'s term is below 2^-110.
func ddSeries(r2 dd, first int) dd {
	p := dd{}
	for n := len(ddInvFact) - 2 + first%2; n >= first; n -= 2 {
		term := ddInvFact[n]
		if (n/2)%2 == 1 {
			term = term.neg()
		}
		p = p.mul(r2).add(term)
	}
	return p
}

// reducePio2 returns r and q with x = q·π/2 + r, |r| ≤ π/4 (a little more from
// rounding q). Below 2^28 the products q·P_i are exact double-doubles (two-product
// by FMA) and the sum cancels exactly in its high parts, leaving r to ~2^-150 of x;
// beyond, x is reduced with math/big (bigref).
func reducePio2(x float64) (dd, int64) {
	if math.Abs(x) <= math.Pi/4 {
		return dd{x, 0}, 0
	}
	if math.Abs(x) >= 0x1p28 {
		return reduceBig(x)
	}
	q := math.Round(x * (2 / math.Pi))
	r := dd{x, 0}
	for _, p := range ddPio2 {
		r = r.add(twoProd(-q, p))
	}
	return r, int64(q)
}

// twoProd is a·b as an exact double-double.
func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// ddPio2 is π/2 as four doubles, 212 bits, from bigref's Gauss–Legendre π.
var ddPio2 = func() []float64 {
	rest := new(big.Float).SetPrec(256).Quo(bigref.Pi(256), big.NewFloat(2))
	var parts []float64
	for range 4 {
		p, _ := rest.Float64()
		parts = append(parts, p)
		rest.Sub(rest, new(big.Float).SetFloat64(p))
	}
	return parts
}()

// reduceBig reduces a large x exactly (bigref.ReduceHalfPi) and rounds the
// remainder to a double-double.
func reduceBig(x float64) (dd, int64) {
	r, q := bigref.ReduceHalfPi(x)
	hi, _ := r.Float64()
	lo, _ := new(big.Float).SetPrec(r.Prec()).Sub(r, new(big.Float).SetFloat64(hi)).Float64()
	return dd{hi, lo}, q
}
