package bigref

import (
	"math"
	"math/big"
)

// powPrec is the working precision of Pow: y·ln x needs its ~10 integer bits
// beyond the 53 + margin that exp's relative error needs.
const powPrec = 256

// Pow returns x^y for finite x > 0 and finite y, correctly rounded but for ties
// (subnormal and overflowing results included): exp(y·ln x) with ln by the atanh
// series on x's significand and exp by the Taylor series on y·ln x reduced by ln 2,
// at 256 bits.
func Pow(x, y float64) float64 {
	nf := func() *big.Float { return new(big.Float).SetPrec(powPrec) }
	ln2 := atanhTimes2(nf().Quo(nf().SetInt64(1), nf().SetInt64(3))) // ln 2 = 2·atanh(1/3)
	mant, e := math.Frexp(x)                                         // exact, mant in [0.5, 1)
	lnx := nf().Add(atanhTimes2(nf().Quo(nf().Sub(nf().SetFloat64(mant), nf().SetInt64(1)),
		nf().Add(nf().SetFloat64(mant), nf().SetInt64(1)))), nf().Mul(nf().SetInt64(int64(e)), ln2))
	Y := nf().Mul(nf().SetFloat64(y), lnx)
	if v, _ := Y.Float64(); v > 800 {
		return math.Inf(1)
	} else if v < -800 {
		return 0
	}
	n, _ := nf().Quo(Y, ln2).Int64() // truncated: |r| < ln 2
	r := nf().Sub(Y, nf().Mul(nf().SetInt64(n), ln2))
	// exp(r) = Σ r^i/i!.
	sum, term := nf().SetInt64(1), nf().SetInt64(1)
	eps := nf().SetMantExp(nf().SetInt64(1), -powPrec)
	for i := int64(1); term.Sign() != 0 && nf().Abs(term).Cmp(eps) > 0; i++ {
		term.Quo(nf().Mul(term, r), nf().SetInt64(i))
		sum.Add(sum, term)
	}
	v, _ := nf().SetMantExp(sum, int(n)).Float64()
	return v
}

// atanhTimes2 is 2·atanh(s) = 2(s + s³/3 + s⁵/5 + …) for |s| <= 1/3, at powPrec bits.
func atanhTimes2(s *big.Float) *big.Float {
	nf := func() *big.Float { return new(big.Float).SetPrec(powPrec) }
	s2 := nf().Mul(s, s)
	sum, p := nf().Set(s), nf().Set(s)
	eps := nf().SetMantExp(nf().SetInt64(1), -powPrec-4)
	for i := int64(3); p.Sign() != 0 && nf().Abs(p).Cmp(eps) > 0; i += 2 {
		p.Mul(p, s2)
		sum.Add(sum, nf().Quo(p, nf().SetInt64(i)))
	}
	return sum.Mul(sum, nf().SetInt64(2))
}
