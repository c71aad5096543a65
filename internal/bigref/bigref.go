// Package bigref computes reference values of elementary functions with math/big,
// from their definitions, for tests that must not trust the implementations they
// check (cpuref's Go math, codegen's kernels): π by the Gauss–Legendre iteration,
// sine and cosine by exact reduction and Taylor series.
package bigref

import (
	"math"
	"math/big"
	"sync"
)

// Pi is π to prec bits, by the Gauss–Legendre iteration.
func Pi(prec uint) *big.Float {
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	a := nf().SetInt64(1)
	b := nf().Sqrt(nf().SetFloat64(0.5))
	t := nf().SetFloat64(0.25)
	p := nf().SetInt64(1)
	for n := uint(1); n < 2*prec; n *= 2 { // each step doubles the correct bits
		an := nf().Quo(nf().Add(a, b), nf().SetInt64(2))
		b = nf().Sqrt(nf().Mul(a, b))
		d := nf().Sub(a, an)
		t.Sub(t, nf().Mul(p, nf().Mul(d, d)))
		a = an
		p.Mul(p, nf().SetInt64(2))
	}
	s := nf().Add(a, b)
	return nf().Quo(nf().Mul(s, s), nf().Mul(nf().SetInt64(4), t))
}

// SinCos returns sin(x) and cos(x) of a finite float64, correctly rounded but for
// ties: x is reduced modulo π/2 exactly (π to x's exponent plus 256 bits), and the
// series are summed on the remainder at 256 bits.
func SinCos(x float64) (sin, cos float64) {
	r, quadrant := ReduceHalfPi(x)
	const sp = 320
	r.SetPrec(sp)
	s, c := taylor(r, sp)
	switch quadrant {
	case 1:
		s, c = c, s.Neg(s)
	case 2:
		s, c = s.Neg(s), c.Neg(c)
	case 3:
		s, c = c.Neg(c), s
	}
	sin, _ = s.Float64()
	cos, _ = c.Float64()
	return sin, cos
}

// ReduceHalfPi reduces a finite x exactly: x = q·π/2 + r with q = round(x/(π/2))
// (ties up), so that r, returned at x's exponent + 320 bits, lies in [−π/4, π/4];
// quadrant is q mod 4.
func ReduceHalfPi(x float64) (r *big.Float, quadrant int64) {
	_, e := math.Frexp(x)
	prec := uint(max(e, 0)) + 320
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	pio2 := nf().Quo(pi(), nf().SetInt64(2))
	X := nf().SetFloat64(x)
	qf := nf().Quo(X, pio2)
	qf.Add(qf, nf().SetFloat64(0.5))
	q, _ := qf.Int(nil)
	if qf.Sign() < 0 && !qf.IsInt() {
		q.Sub(q, big.NewInt(1)) // floor for negatives
	}
	r = nf().Sub(X, nf().Mul(nf().SetInt(q), pio2))
	return r, new(big.Int).And(q, big.NewInt(3)).Int64()
}

// pi is π to enough bits for SinCos of any float64, computed once.
var pi = sync.OnceValue(func() *big.Float { return Pi(1024 + 400) })

// taylor sums sin(r) and cos(r) for |r| <= π/4 until the terms vanish at prec bits
// of the first of each (r for sine, 1 for cosine): the n-th term r^n/n! goes to sin
// (odd n) or cos (even n), negative when ⌊n/2⌋ is odd.
func taylor(r *big.Float, prec uint) (sin, cos *big.Float) {
	nf := func() *big.Float { return new(big.Float).SetPrec(prec) }
	sin, cos = nf(), nf().SetInt64(1)
	term := nf().Set(r)
	// Relative to r, not to 1: below 2^-328 the first term itself was dropped and
	// sin(1e-149) came out 0.
	last := min(r.MantExp(nil), 0) - int(prec) - 8
	for n := int64(1); term.Sign() != 0 && term.MantExp(nil) > last; n++ {
		signed := nf().Set(term)
		if (n/2)%2 == 1 {
			signed.Neg(signed)
		}
		if n%2 == 1 {
			sin.Add(sin, signed)
		} else {
			cos.Add(cos, signed)
		}
		term.Mul(term, r)
		term.Quo(term, nf().SetInt64(n+1))
	}
	return sin, cos
}
