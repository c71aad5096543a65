package cpuref

import "math"

// pow is C's pow, correctly rounded but for ties. Go's math.Pow multiplies by repeated squaring and takes math.Log
// of x, which loses up to ~1.5e5 ulp for large exponents (pow(1.00117, 410939.2)),
// and reads subnormal x wrongly on amd64; cpuref defines the numerics that codegen's
// f64 power (within 8 ulp) is held to, so it computes exp(y·ln|x|) in double-double
// arithmetic (~106 bits), which leaves y·ln|x| — up to ~745 in magnitude where the
// result is finite — with more than 53 good bits after its integer part.
// Special operands (zeros, infinities, NaNs, x = ±1, y = 0, a negative x with a
// fractional y) keep math.Pow's C semantics.
func pow(x, y float64) float64 {
	if powSpecial(x, y) {
		return math.Pow(x, y)
	}
	sign := 1.0
	if x < 0 { // y is an integer here
		x = -x
		if math.Mod(y, 2) != 0 {
			sign = -1
		}
	}
	lnx := ddLog(x)
	switch v := lnx.hi * y; { // ±Inf for huge y: the double-double product would be NaN
	case v > 710: // beyond the largest finite result, 2^1024 = e^709.78
		return sign * math.Inf(1)
	case v < -746: // below half the smallest subnormal, 2^-1075 = e^-745.13
		return sign * 0
	}
	t := lnx.mulF(y)
	n := math.Round(t.hi / math.Ln2)
	e := ddExp(t.add(ddLn2.mulF(-n)))
	return sign * ldexpDD(e, int(n))
}

// ldexpDD is (e.hi + e.lo)·2^n rounded once. Where the result is subnormal, scaling
// e.hi alone rounds it at 2^-1074 and would ignore e.lo (a second rounding): the
// part that the scaled value lacks decides whether it moves by one subnormal step.
func ldexpDD(e dd, n int) float64 {
	a := math.Ldexp(e.hi, n)
	if a == 0 || math.Abs(a) >= minNormal64 || math.IsInf(a, 0) {
		return a
	}
	rest := (e.hi - math.Ldexp(a, -n)) + e.lo // exact but for e.lo's last bits
	half := math.Ldexp(0.5, -1074-n)          // half a subnormal step, at e's scale
	switch {
	case rest > half:
		return math.Nextafter(a, math.Inf(1))
	case rest < -half:
		return math.Nextafter(a, math.Inf(-1))
	}
	return a
}

// powSpecial reports the operands that pow leaves to math.Pow: every case C's pow
// defines by rule, whose results are exact.
func powSpecial(x, y float64) bool {
	switch {
	case x == 0 || y == 0 || x == 1 || x == -1:
		return true
	case math.IsInf(x, 0) || math.IsInf(y, 0) || x != x || y != y:
		return true
	case x < 0 && y != math.Trunc(y): // NaN
		return true
	}
	return false
}

// dd is a double-double number hi + lo, |lo| ≤ ulp(hi)/2: about 106 bits.
type dd struct{ hi, lo float64 }

// ddLn2 is ln 2 to 107 bits.
var ddLn2 = dd{0x1.62e42fefa39efp-1, 0x1.abc9e3b39803fp-56}

// twoSum returns a+b as an exact double-double (Knuth).
func twoSum(a, b float64) dd {
	s := a + b
	v := s - a
	return dd{s, (a - (s - v)) + (b - v)}
}

// quickTwoSum is twoSum for |a| ≥ |b|.
func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func (a dd) add(b dd) dd {
	s, t := twoSum(a.hi, b.hi), twoSum(a.lo, b.lo)
	s = quickTwoSum(s.hi, s.lo+t.hi)
	return quickTwoSum(s.hi, s.lo+t.lo)
}

func (a dd) mul(b dd) dd {
	p := a.hi * b.hi
	e := math.FMA(a.hi, b.hi, -p) + (a.hi*b.lo + a.lo*b.hi)
	return quickTwoSum(p, e)
}

func (a dd) mulF(b float64) dd {
	p := a.hi * b
	return quickTwoSum(p, math.FMA(a.hi, b, -p)+a.lo*b)
}

func (a dd) div(b dd) dd {
	q1 := a.hi / b.hi
	r := a.add(b.mulF(-q1))
	q2 := r.hi / b.hi
	r = r.add(b.mulF(-q2))
	return quickTwoSum(q1, q2).add(dd{r.hi / b.hi, 0})
}

// ddLog is ln x for finite x > 0: x = m·2^e with m in [√½, √2), and
// ln m = 2·atanh(s) = 2(s + s³/3 + s⁵/5 + …) with s = (m−1)/(m+1), |s| ≤ 0.172, so
// 22 terms of s² ≤ 0.0295 reach 2^-110.
func ddLog(x float64) dd {
	m, e := math.Frexp(x) // exact, subnormal x included; m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m, e = m*2, e-1
	}
	s := dd{m - 1, 0}.div(twoSum(m, 1)) // m − 1 is exact (Sterbenz)
	s2 := s.mul(s)
	p := ddAtanhCoef[len(ddAtanhCoef)-1]
	for k := len(ddAtanhCoef) - 2; k >= 0; k-- {
		p = p.mul(s2).add(ddAtanhCoef[k])
	}
	return s.mul(p).mulF(2).add(ddLn2.mulF(float64(e)))
}

// ddExp is e^r for |r| ≤ ~0.35 (after reduction by ln 2): Taylor to 27 terms,
// where 0.35^27/27! < 2^-130.
func ddExp(r dd) dd {
	p := ddInvFact[len(ddInvFact)-1]
	for k := len(ddInvFact) - 2; k >= 0; k-- {
		p = p.mul(r).add(ddInvFact[k])
	}
	return p
}

// ddAtanhCoef[k] = 1/(2k+1); ddInvFact[k] = 1/k!.
var ddAtanhCoef, ddInvFact = func() (atanh, invFact []dd) {
	one := dd{1, 0}
	for k := range 23 {
		atanh = append(atanh, one.div(dd{float64(2*k + 1), 0}))
	}
	f := one
	for k := range 28 {
		if k > 0 {
			f = f.div(dd{float64(k), 0})
		}
		invFact = append(invFact, f)
	}
	return atanh, invFact
}()
