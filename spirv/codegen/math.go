package codegen

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Transcendental functions. GLSL.std.450 provides exp, log, sin, cos, pow, atan2 and
// friends for 32-bit floats only, with edge cases (zero, infinity, NaN, negative
// bases) left undefined; the emitters here pin those cases to C's (cpuref's) answers
// with selects. expm1 and log1p use series near zero, where exp(x)-1 and log(1+x)
// lose every significant digit. f64 uses the 64-bit implementations in math64.go.

func (k *kernel) transcendental(op hlo.Opcode, dt hlo.DType, x spirv.ID) (spirv.ID, error) {
	if dt == hlo.F64 {
		return k.transcendental64(op, x)
	}
	f := k.f
	c := func(v float64) spirv.ID { return k.m.F32(float32(v)) }
	switch op {
	case hlo.OpExp:
		return k.exp(x), nil
	case hlo.OpLog:
		return k.log(x), nil
	case hlo.OpExpm1:
		return k.expm1(x), nil
	case hlo.OpLog1p:
		return k.log1p(x), nil
	case hlo.OpTanh:
		return k.tanh(x), nil
	case hlo.OpLogistic:
		// Below −20, 1/(1+e^−x) is e^x to f32 precision, and e^−x would overflow
		// where the result is still a subnormal.
		l := f.FDiv(c(1), f.FAdd(c(1), f.GLSL(spirv.GLSLExp, f.FNegate(x))))
		return f.Select(f.Less(x, c(-20)), k.exp(x), l), nil
	case hlo.OpSin:
		return k.sinCos(x, false), nil
	case hlo.OpCos:
		return k.sinCos(x, true), nil
	case hlo.OpCbrt:
		return k.cbrt(x), nil
	}
	return 0, fmt.Errorf("%v is not defined for %v", op, dt)
}

// fc is a float constant of x's type.
func (k *kernel) fc(x spirv.ID, v float64) spirv.ID { return k.m.ConstFloat(k.m.TypeOf(x), v) }

// horner evaluates c[0] + x*(c[1] + x*(c[2] + …)).
func (k *kernel) horner(x spirv.ID, c []float64) spirv.ID {
	acc := k.fc(x, c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		acc = k.fadd(k.fmul(acc, x), k.fc(x, c[i]))
	}
	return acc
}

// taylorExpm1 holds 1/n! for n = 1..; expm1(x) = x·(1 + x/2 + x²/6 + …).
func taylorExpm1(terms int) []float64 {
	c := make([]float64, terms)
	fact := 1.0
	for n := 1; n <= terms; n++ {
		fact *= float64(n)
		c[n-1] = 1 / fact
	}
	return c
}

// expm1 is exp(x)-1: a Taylor polynomial for |x| < 0.5 (relative error below 1e-9),
// else exp(x)-1, which loses at most a factor 2.5 of exp's accuracy there.
func (k *kernel) expm1(x spirv.ID) spirv.ID {
	f := k.f
	terms := 10
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		terms = 18
	}
	small := f.FMul(x, k.horner(x, taylorExpm1(terms)))
	big := f.FSub(k.exp(x), k.fc(x, 1))
	return f.Select(f.Less(f.GLSL(spirv.GLSLFAbs, x), k.fc(x, 0.5)), small, big)
}

func (k *kernel) exp(x spirv.ID) spirv.ID {
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		return k.exp64(x)
	}
	// GLSL's exp cannot return a subnormal (lavapipe's gives 0 below 2^-126): there
	// exp(x) = exp(x + 32·ln 2)·2^-32, scaled on the encoding. One exp of the
	// argument chosen first: a driver that computes both arms of a select (lavapipe
	// does) would otherwise pay for two.
	f := k.f
	low := f.Less(x, k.fc(x, -87.33654475055310898657)) // ln 2^-126
	e := f.GLSL(spirv.GLSLExp, f.Select(low, k.fadd(x, k.fc(x, 32*math.Ln2)), x))
	return f.Select(low, k.scaleDown32(e, 32), e)
}

// log is x = mant·2^e with mant in [√½, √2) (split on the encoding, so subnormals
// count), log(mant) + e·ln 2, with log(mant) from GLSL (f32) or log64's series.
// log(±0) = -inf, log(x<0) = NaN, log(inf) = inf.
func (k *kernel) log(x spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	mant, e := k.splitFloat(x)
	low := f.Less(mant, k.fc(x, math.Sqrt2))
	mant = f.Select(low, mant, k.fmul(mant, k.fc(x, 0.5)))
	fe := f.Convert(t, f.Select(low, e, f.IAdd(e, m.I32(1))))
	var y spirv.ID
	if m.Width(t) == 64 {
		y = k.fadd(k.fmul(fe, k.fc(x, ln2Hi)), k.fadd(k.fmul(fe, k.fc(x, ln2Lo)), k.log64Reduced(mant)))
	} else {
		y = k.fadd(f.GLSL(spirv.GLSLLog, mant), k.fmul(fe, k.fc(x, math.Ln2)))
	}
	a := k.absBits(x)
	y = f.Select(f.Equal(a, k.absBits(k.fc(x, 0))), k.fc(x, math.Inf(-1)), y)
	y = f.Select(f.IsInf(x), x, y)
	nan := f.LogicalOr(f.IsNan(x), f.LogicalAnd(k.signBit(x), f.NotEqual(a, k.absBits(k.fc(x, 0)))))
	return f.Select(nan, m.ConstFloat(t, math.NaN()), y)
}

// log1p is log(1+x): for |x| < 0.5 the series 2·atanh(s) = 2(s + s³/3 + s⁵/5 + …)
// with s = x/(2+x), |s| <= 1/3; else log(1+x).
func (k *kernel) log1p(x spirv.ID) spirv.ID {
	f := k.f
	s := f.FDiv(x, f.FAdd(k.fc(x, 2), x))
	s2 := f.FMul(s, s)
	terms := 11
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		terms = 19
	}
	c := make([]float64, terms)
	for i := range c {
		c[i] = 2 / float64(2*i+1)
	}
	small := f.FMul(s, k.horner(s2, c))
	big := k.log(f.FAdd(k.fc(x, 1), x))
	return f.Select(f.Less(f.GLSL(spirv.GLSLFAbs, x), k.fc(x, 0.5)), small, big)
}

// tanh(x) = sign(x)·e/(e+2) with e = expm1(2|x|): accurate near 0, and ±1 beyond
// |x| = 20 where e would overflow.
func (k *kernel) tanh(x spirv.ID) spirv.ID {
	f := k.f
	ax := f.GLSL(spirv.GLSLFAbs, x)
	e := k.expm1(f.FMul(ax, k.fc(x, 2)))
	t := f.FDiv(e, f.FAdd(e, k.fc(x, 2)))
	t = f.Select(f.Greater(ax, k.fc(x, 20)), k.fc(x, 1), t)
	return k.copySign(t, x) // NaN stays NaN (|NaN| > 20 is false)
}

// cbrt: |x| = mant·2^(3q+r) (split on the encoding: subnormals count) with mant in
// [1, 2) and r in {0, 1, 2}, so cbrt(|x|) = cbrt(mant·2^r)·2^q with the root of a
// value in [1, 8), where the Newton steps cannot overflow (cbrt of the largest
// floats stays finite); 0, ±inf and NaN pass through.
func (k *kernel) cbrt(x spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	mant, e := k.splitFloat(x)
	const off = 3 * 1100 // makes e+off positive for every exponent, subnormal f64 included
	eo := f.Bitcast(m.TypeU32(), f.IAdd(e, m.I32(off)))
	q := f.ISub(f.Bitcast(m.TypeI32(), f.Div(eo, k.u32(3))), m.I32(off/3))
	a := f.ExtInst(t, spirv.GLSLLdexp, mant, f.Bitcast(m.TypeI32(), f.Rem(eo, k.u32(3))))
	var y spirv.ID
	steps := 1
	if m.Width(t) == 64 {
		y = k.exp64(f.FDiv(k.log(a), k.fc(x, 3)))
		steps = 2
	} else {
		y = f.GLSL(spirv.GLSLPow, a, k.fc(x, 1.0/3))
	}
	for range steps {
		y2 := f.FMul(y, y)
		y = f.FSub(y, f.FDiv(f.FSub(f.FMul(y2, y), a), f.FMul(k.fc(x, 3), y2)))
	}
	y = f.ExtInst(t, spirv.GLSLLdexp, y, q)
	special := f.LogicalOr(f.Equal(k.absBits(x), k.absBits(k.fc(x, 0))), f.LogicalOr(f.IsInf(x), f.IsNan(x)))
	return f.Select(special, x, k.copySign(y, x))
}

// pow is C's pow (Go's math.Pow) for floats: GLSL's pow is defined only for x > 0,
// so the sign of a negative base with an integer exponent, zeros, infinities and
// NaNs are handled here.
func (k *kernel) pow(dt hlo.DType, x, y spirv.ID) (spirv.ID, error) {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	c := func(v float64) spirv.ID { return m.ConstFloat(t, v) }
	inf, nan := c(math.Inf(1)), m.ConstFloat(t, math.NaN())
	ax := f.GLSL(spirv.GLSLFAbs, x)
	yInf := f.IsInf(y)
	yInt := f.LogicalAnd(f.Equal(f.GLSL(spirv.GLSLFloor, y), y), f.LogicalNot(yInf))
	half := f.FMul(y, c(0.5))
	yOdd := f.LogicalAnd(yInt, f.NotEqual(f.GLSL(spirv.GLSLFloor, half), half))
	yPos := f.Greater(y, c(0))
	// |x|^y for finite non-zero |x| and finite y.
	var mag spirv.ID
	// A zero base is told from a subnormal one on the encoding (float compares may
	// flush subnormals).
	xZero := f.Equal(k.absBits(x), k.absBits(c(0)))
	if dt == hlo.F64 {
		mag = k.pow64(f.Select(xZero, c(1), ax), y)
	} else {
		mag = k.pow32(x, y)
	}
	zeroOrInf := func(posInf spirv.ID) spirv.ID { return f.Select(posInf, inf, c(0)) }
	// x = ±0: +0 for y > 0, +inf for y < 0; x = ±inf: the reverse.
	mag = f.Select(xZero, zeroOrInf(f.LogicalNot(yPos)), mag)
	mag = f.Select(f.IsInf(ax), zeroOrInf(yPos), mag)
	// y = ±inf: 1 for |x| = 1, else 0 or inf by whether |x| > 1 agrees with y > 0.
	big := f.Greater(ax, c(1))
	mag = f.Select(yInf, f.Select(f.Equal(ax, c(1)), c(1), zeroOrInf(f.Equal(big, yPos))), mag)
	// A negative base (or -0, -inf) with an odd integer exponent keeps its sign.
	r := f.Select(f.LogicalAnd(k.signBit(x), yOdd), f.FNegate(mag), mag)
	// A finite negative base with a finite non-integer exponent has no real power.
	negFinite := f.LogicalAnd(f.Less(x, c(0)), f.LogicalNot(f.IsInf(x)))
	r = f.Select(f.LogicalAnd(negFinite, f.LogicalAnd(f.LogicalNot(yInt), f.LogicalNot(yInf))), nan, r)
	r = f.Select(f.LogicalOr(f.IsNan(x), f.IsNan(y)), nan, r)
	// pow(x, ±0) = 1 and pow(1, y) = 1, even for NaN.
	return f.Select(f.LogicalOr(f.Equal(y, c(0)), f.Equal(x, c(1))), c(1), r), nil
}

// atan2 is C's atan2, computed by atan2Finite for every float type (GLSL's atan2,
// 2·10^-5 relative error on lavapipe for small ratios, is not used), with the
// zeros and infinities given their limits here. A pair of tiny operands is scaled
// up first, so that subnormals count.
func (k *kernel) atan2(dt hlo.DType, y, x spirv.ID) (spirv.ID, error) {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	c := func(v float64) spirv.ID { return m.ConstFloat(t, v) }
	y, x = k.scaleTinyPair(y, x)
	r := k.atan2Finite(y, x)
	xNeg := k.signBit(x)
	// y = ±0: ±0 for x >= +0, ±π for x <= -0.
	zeroY := f.Select(xNeg, c(math.Pi), c(0))
	r = f.Select(f.Equal(y, c(0)), k.copySign(zeroY, y), r)
	// x = 0 (y non-zero): ±π/2.
	r = f.Select(f.LogicalAnd(f.Equal(x, c(0)), f.NotEqual(y, c(0))), k.copySign(c(math.Pi/2), y), r)
	// Infinite x with finite y: ±0 or ±π.
	xInf, yInf := f.IsInf(x), f.IsInf(y)
	r = f.Select(f.LogicalAnd(xInf, f.LogicalNot(yInf)), k.copySign(zeroY, y), r)
	// Infinite y with finite x: ±π/2; both infinite: ±π/4 or ±3π/4.
	r = f.Select(f.LogicalAnd(yInf, f.LogicalNot(xInf)), k.copySign(c(math.Pi/2), y), r)
	both := f.Select(xNeg, c(3*math.Pi/4), c(math.Pi/4))
	r = f.Select(f.LogicalAnd(yInf, xInf), k.copySign(both, y), r)
	return f.Select(f.LogicalOr(f.IsNan(x), f.IsNan(y)), m.ConstFloat(t, math.NaN()), r), nil
}

// pow32 is |x|^y for finite non-zero |x| and finite y in f32: 2^(y·e + y·log2 mant)
// with |x| = mant·2^e split on the encoding (subnormals count, which GLSL's pow
// drops) and mant in [√½, √2). The integer parts of y·e and of the rest are
// gathered into one exponent applied by a single ldexp, so no intermediate
// overflows: pow(FLT_MAX, 1) stays finite, where exp2(y·log2 x) rounds to 2^128.
func (k *kernel) pow32(x, y spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t, i32 := m.TypeOf(x), m.TypeI32()
	c := func(v float64) spirv.ID { return k.fc(x, v) }
	mant, e := k.splitFloat(x)
	low := f.Less(mant, c(math.Sqrt2))
	mant = f.Select(low, mant, k.fmul(mant, c(0.5)))
	e = f.Select(low, e, f.IAdd(e, m.I32(1)))
	a := k.fmul(y, f.Convert(t, e))
	b := k.fmul(y, f.GLSL(spirv.GLSLLog2, mant))
	clampRound := func(v spirv.ID) spirv.ID {
		return f.GLSL(spirv.GLSLRoundEven, f.GLSL(spirv.GLSLFClamp, v, c(-4096), c(4096)))
	}
	n1 := clampRound(a)
	r1 := k.fadd(k.fsub(a, n1), b)
	n2 := clampRound(r1)
	r2 := k.fsub(r1, n2)
	n := f.GLSL(spirv.GLSLSClamp, f.IAdd(f.Convert(i32, n1), f.Convert(i32, n2)), m.I32(-400), m.I32(400))
	e2 := f.GLSL(spirv.GLSLExp2, r2)
	split := f.ExtInst(t, spirv.GLSLLdexp, e2, n)
	// A subnormal result is rounded on the encoding (ldexp may flush it).
	sub := k.scaleDown32(f.ExtInst(t, spirv.GLSLLdexp, e2, f.IAdd(f.GLSL(spirv.GLSLSMax, n, m.I32(-200)), m.I32(64))), 64)
	split = f.Select(f.Less(n, m.I32(-126)), sub, split)
	// Beyond |y·e| = 2^20 the result is 0 or inf whatever the rounding.
	return f.Select(f.Greater(f.GLSL(spirv.GLSLFAbs, a), c(0x1p20)), f.GLSL(spirv.GLSLExp2, k.fadd(a, b)), split)
}
