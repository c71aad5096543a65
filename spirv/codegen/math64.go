package codegen

import (
	"fmt"
	"math"
	"math/big"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// 64-bit transcendental functions. GLSL.std.450 has no f64 exp, log, sin, cos or
// atan, so they are built here from f64 arithmetic, Frexp and Ldexp: argument
// reduction (Cody–Waite with a split constant) and a series on the reduced range,
// accurate to a few ulp. sin and cos are trig.go's, shared with f32.

func (k *kernel) transcendental64(op hlo.Opcode, x spirv.ID) (spirv.ID, error) {
	f := k.f
	switch op {
	case hlo.OpExp:
		return k.exp64(x), nil
	case hlo.OpLog:
		return k.log(x), nil
	case hlo.OpExpm1:
		return k.expm1(x), nil
	case hlo.OpLog1p:
		return k.log1p(x), nil
	case hlo.OpTanh:
		return k.tanh(x), nil
	case hlo.OpLogistic:
		return f.FDiv(k.fc(x, 1), f.FAdd(k.fc(x, 1), k.exp64(f.FNegate(x)))), nil
	case hlo.OpSin:
		return k.sinCos(x, false), nil
	case hlo.OpCos:
		return k.sinCos(x, true), nil
	case hlo.OpCbrt:
		return k.cbrt(x), nil
	}
	return 0, fmt.Errorf("%v is not defined for f64", op)
}

const (
	ln2Hi = 6.93147180369123816490e-01 // fdlibm's split of ln 2
	ln2Lo = 1.90821492927058770002e-10
)

// exp64: x = n·ln2 + r with |r| <= ln2/2, exp(r) by a degree-14 Taylor polynomial,
// scaled by 2^n.
func (k *kernel) exp64(x spirv.ID) spirv.ID { return k.exp64Sum(x, 0) }

// exp64Sum is exp(x + lo) for a double-word x + lo (lo 0: none), |lo| <= ulp(x):
// lo joins the reduced argument. Beyond |x| = 1024, where the result is 0 or inf
// anyway, and where lo is not finite (a product's error term beyond 2^995: x is
// then 0·huge, ±inf or huge), lo is not used.
func (k *kernel) exp64Sum(x, lo spirv.ID) spirv.ID {
	f, m := k.f, k.m
	c := func(v float64) spirv.ID { return k.fc(x, v) }
	// Clamp so that n stays in range; the limits are applied after.
	xc := f.GLSL(spirv.GLSLFClamp, x, c(-746), c(710))
	n := f.GLSL(spirv.GLSLRoundEven, f.FMul(xc, c(1/math.Ln2)))
	r := f.FSub(f.FSub(xc, f.FMul(n, c(ln2Hi))), f.FMul(n, c(ln2Lo)))
	if lo != 0 {
		use := f.LogicalAnd(f.Less(f.GLSL(spirv.GLSLFAbs, x), c(1024)), f.Less(f.GLSL(spirv.GLSLFAbs, lo), c(1)))
		r = k.fadd(r, f.Select(use, lo, c(0)))
	}
	coef := make([]float64, 15)
	fact := 1.0
	for i := range coef {
		if i > 0 {
			fact *= float64(i)
		}
		coef[i] = 1 / fact
	}
	p := k.horner(r, coef)
	// Scale in two steps so that 2^n never overflows on its own near the limits.
	ni := f.Convert(m.TypeI32(), n)
	half := f.SDiv(ni, m.I32(2))
	y := f.ExtInst(m.TypeOf(x), spirv.GLSLLdexp, p, half)
	y = f.ExtInst(m.TypeOf(x), spirv.GLSLLdexp, y, f.ISub(ni, half))
	y = f.Select(f.Greater(x, c(709.782712893384)), c(math.Inf(1)), y)
	y = f.Select(f.Less(x, c(-745.1332191019412)), c(0), y)
	return f.Select(f.IsNan(x), x, y)
}

// pow64 is |x|^y for finite non-zero |x| and finite y in f64: exp(y·ln|x|) with
// ln|x| and its product by y carried as double words (about 100 bits), so that
// the error of y·ln|x|, which exp turns into a relative error of the result, stays
// far below an ulp even where y·ln|x| is near ±709 (a plain f64 product loses up
// to 2^-44 there: hundreds of ulp). Within 8 ulp of the definition over the IEEE
// sweep (TestIEEESweepBinary); pow handles zeros, infinities, NaNs and signs.
func (k *kernel) pow64(ax, y spirv.ID) spirv.ID {
	lhi, llo := k.log64Words(ax)
	hi, lo := k.mulDoubleWord(lhi, llo, y)
	return k.exp64Sum(hi, lo)
}

// log64Words is ln x as a double word hi + lo for finite x > 0 (subnormals count):
// x = mant·2^e with mant in [√½, √2), ln x = e·ln2 + 2·atanh(s), s = (mant-1)/
// (mant+1) = sh + sl, and 2·atanh(s) = 2s + s·s²·(2/3 + s²·P(s²)) with P's short
// series in f64 (its share of the result is below 2^-12) and the rest in double
// words.
func (k *kernel) log64Words(x spirv.ID) (hi, lo spirv.ID) {
	f, m := k.f, k.m
	c := func(v float64) spirv.ID { return k.fc(x, v) }
	mant, e := k.splitFloat(x)
	low := f.Less(mant, c(math.Sqrt2))
	mant = f.Select(low, mant, k.fmul(mant, c(0.5)))
	fe := f.Convert(m.TypeOf(x), f.Select(low, e, f.IAdd(e, m.I32(1))))
	num := k.fsub(mant, c(1)) // exact (Sterbenz)
	dh, dl := k.twoSum(mant, c(1))
	sh := f.FDiv(num, dh)
	ph, pl := k.twoProd(sh, dh)
	sl := f.FDiv(k.fsub(k.fsub(k.fsub(num, ph), pl), k.fmul(sh, dl)), dh)
	zh, zl := k.mulWordsWords(sh, sl, sh, sl) // s²
	coef := make([]float64, 12)
	for i := range coef {
		coef[i] = 2 / float64(2*i+5) // 2/5, 2/7, …
	}
	q := k.fmul(zh, k.horner(zh, coef))
	const twoThirdsHi = 2.0 / 3
	twoThirdsLo := twoThirdsLow()
	ih, il := k.twoSum(c(twoThirdsHi), q)
	ih, il = k.fastTwoSum(ih, k.fadd(il, c(twoThirdsLo)))
	th, tl := k.mulWordsWords(zh, zl, ih, il)
	th, tl = k.mulWordsWords(sh, sl, th, tl)
	// 2s + t, then + e·ln2 (e·ln2Hi is exact: ln2Hi has 32 significant bits).
	hi, lo = k.addWords(k.fmul(sh, c(2)), k.fmul(sl, c(2)), th, tl)
	eh, el := k.twoSum(k.fmul(fe, c(ln2Hi)), k.fmul(fe, c(ln2Lo)))
	return k.addWords(eh, el, hi, lo)
}

// twoThirdsLow is 2/3 − float64(2/3), the low word of 2/3.
func twoThirdsLow() float64 {
	r, _ := new(big.Float).SetPrec(200).Sub(new(big.Float).SetPrec(200).Quo(big.NewFloat(2), big.NewFloat(3)),
		big.NewFloat(2.0/3)).Float64()
	return r
}

// twoProd is Dekker's error-free product: p = fl(a·b) and e = a·b − p exactly,
// from Veltkamp's halves of a and b (no fused multiply-add: Vulkan does not
// promise that Fma is fused). |a|, |b| must stay below 2^995.
func (k *kernel) twoProd(a, b spirv.ID) (p, e spirv.ID) {
	p = k.fmul(a, b)
	ah, al := k.veltkamp(a)
	bh, bl := k.veltkamp(b)
	e = k.fadd(k.fadd(k.fadd(k.fsub(k.fmul(ah, bh), p), k.fmul(ah, bl)), k.fmul(al, bh)), k.fmul(al, bl))
	return p, e
}

// veltkamp splits an f64 into two halves of 26 significant bits: a = hi + lo.
func (k *kernel) veltkamp(a spirv.ID) (hi, lo spirv.ID) {
	t := k.fmul(a, k.fc(a, 134217729)) // 2^27 + 1
	hi = k.fsub(t, k.fsub(t, a))
	return hi, k.fsub(a, hi)
}

// mulDoubleWord is (hi + lo)·y as a double word p + e, not renormalised: p is
// fl(y·hi) even where the error term is not finite (|y| beyond 2^995, where only p
// matters).
func (k *kernel) mulDoubleWord(hi, lo, y spirv.ID) (spirv.ID, spirv.ID) {
	p, e := k.twoProd(y, hi)
	return p, k.fadd(e, k.fmul(y, lo))
}

// mulWordsWords is (ah + al)·(bh + bl) as a double word.
func (k *kernel) mulWordsWords(ah, al, bh, bl spirv.ID) (spirv.ID, spirv.ID) {
	p, e := k.twoProd(ah, bh)
	return k.fastTwoSum(p, k.fadd(e, k.fadd(k.fmul(ah, bl), k.fmul(al, bh))))
}

// addWords is (ah + al) + (bh + bl) as a double word.
func (k *kernel) addWords(ah, al, bh, bl spirv.ID) (spirv.ID, spirv.ID) {
	s, e := k.twoSum(ah, bh)
	return k.fastTwoSum(s, k.fadd(e, k.fadd(al, bl)))
}

// log64Reduced is log(mant) for mant in [√½, √2): 2·atanh(s) with s =
// (mant-1)/(mant+1), |s| <= 0.172, by 13 terms of its series (log splits x).
func (k *kernel) log64Reduced(mant spirv.ID) spirv.ID {
	f := k.f
	s := f.FDiv(f.FSub(mant, k.fc(mant, 1)), f.FAdd(mant, k.fc(mant, 1)))
	coef := make([]float64, 13)
	for i := range coef {
		coef[i] = 2 / float64(2*i+1)
	}
	return f.FMul(s, k.horner(f.FMul(s, s), coef))
}

func factorial(n int) float64 {
	r := 1.0
	for i := 2; i <= n; i++ {
		r *= float64(i)
	}
	return r
}

// atan2Finite is atan2 for finite, non-zero arguments (atan2 handles the rest): atan
// of a = min/max of |x|, |y| in [0, 1], reduced twice (by π/4 and a half-angle
// step) to |t| < 0.2 where 14 series terms suffice for f64 and 6 for f32, then
// mapped to the quadrant.
func (k *kernel) atan2Finite(y, x spirv.ID) spirv.ID {
	f := k.f
	c := func(v float64) spirv.ID { return k.fc(x, v) }
	ax, ay := f.GLSL(spirv.GLSLFAbs, x), f.GLSL(spirv.GLSLFAbs, y)
	swap := f.Greater(ay, ax)
	hi := f.Select(swap, ay, ax)
	lo := f.Select(swap, ax, ay)
	a := f.FDiv(lo, f.Select(f.Equal(hi, c(0)), c(1), hi))
	// atan(a) = π/4 + atan((a-1)/(a+1)) for a > tan(π/8).
	shift := f.Greater(a, c(math.Sqrt2-1))
	t := f.Select(shift, f.FDiv(f.FSub(a, c(1)), f.FAdd(a, c(1))), a)
	// atan(t) = 2·atan(t/(1+√(1+t²))).
	t = f.FDiv(t, f.FAdd(c(1), f.GLSL(spirv.GLSLSqrt, f.FAdd(c(1), f.FMul(t, t)))))
	terms := 6
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		terms = 14
	}
	coef := make([]float64, terms)
	for i := range coef {
		coef[i] = math.Pow(-1, float64(i)) / float64(2*i+1)
	}
	th := f.FMul(c(2), f.FMul(t, k.horner(f.FMul(t, t), coef)))
	th = f.Select(shift, f.FAdd(th, c(math.Pi/4)), th)
	// Below 2^-27, atan a = a (a³/3 is under half an ulp of a, f64's or f32's),
	// where the half-angle step would halve a subnormal a and lose its digits
	// (atan2(5e-324, 1) would be 0).
	th = f.Select(f.Less(a, c(0x1p-27)), a, th)
	th = f.Select(swap, f.FSub(c(math.Pi/2), th), th)
	th = f.Select(k.signBit(x), f.FSub(c(math.Pi), th), th)
	return k.copySign(th, y)
}
