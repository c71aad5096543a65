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
		return f.GLSL(spirv.GLSLExp, x), nil
	case hlo.OpLog:
		return k.log(x), nil
	case hlo.OpExpm1:
		return k.expm1(x), nil
	case hlo.OpLog1p:
		return k.log1p(x), nil
	case hlo.OpTanh:
		return k.tanh(x), nil
	case hlo.OpLogistic:
		return f.FDiv(c(1), f.FAdd(c(1), f.GLSL(spirv.GLSLExp, f.FNegate(x)))), nil
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
	return k.f.GLSL(spirv.GLSLExp, x)
}

// log pins GLSL's undefined cases: log(±0) = -inf, log(x<0) = NaN, log(inf) = inf.
func (k *kernel) log(x spirv.ID) spirv.ID {
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		return k.log64(x)
	}
	f := k.f
	r := f.GLSL(spirv.GLSLLog, x)
	r = f.Select(f.Equal(x, k.fc(x, 0)), k.fc(x, math.Inf(-1)), r)
	r = f.Select(f.Equal(x, k.fc(x, math.Inf(1))), x, r)
	return f.Select(f.Less(x, k.fc(x, 0)), k.m.ConstFloat(k.m.TypeOf(x), math.NaN()), r)
}

// nanIfInf is r, or NaN where x is infinite (sin and cos of ±inf).
func (k *kernel) nanIfInf(x, r spirv.ID) spirv.ID {
	return k.f.Select(k.f.IsInf(x), k.m.ConstFloat(k.m.TypeOf(x), math.NaN()), r)
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

// cbrt is sign(x)·|x|^(1/3), refined by one Newton step; 0, ±inf and NaN pass through.
func (k *kernel) cbrt(x spirv.ID) spirv.ID {
	f := k.f
	ax := f.GLSL(spirv.GLSLFAbs, x)
	safe := f.Select(f.Equal(ax, k.fc(x, 0)), k.fc(x, 1), ax)
	var y spirv.ID
	steps := 1
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		y = k.exp64(f.FDiv(k.log64(safe), k.fc(x, 3)))
		steps = 2
	} else {
		y = f.GLSL(spirv.GLSLPow, safe, k.fc(x, 1.0/3))
	}
	for range steps {
		y2 := f.FMul(y, y)
		y = f.FSub(y, f.FDiv(f.FSub(f.FMul(y2, y), ax), f.FMul(k.fc(x, 3), y2)))
	}
	special := f.LogicalOr(f.Equal(ax, k.fc(x, 0)), f.LogicalOr(f.IsInf(x), f.IsNan(x)))
	return f.Select(special, x, k.copySign(y, x))
}

// fmod is C's fmod (the sign of x, exact): |x| is reduced by |y|·2^k for falling k,
// each subtraction exact (Sterbenz), so the result carries no rounding error even
// when x/y is huge. x%0, inf%y and NaN operands give NaN; x%inf = x.
func (k *kernel) fmod(x, y spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	ax, ay := f.GLSL(spirv.GLSLFAbs, x), f.GLSL(spirv.GLSLFAbs, y)
	finite := f.LogicalNot(f.LogicalOr(f.IsInf(ax), f.IsNan(ax)))
	ok := f.LogicalAnd(finite, f.LogicalAnd(f.Greater(ay, k.fc(x, 0)), f.LogicalNot(f.IsInf(ay))))
	ok = f.LogicalAnd(ok, f.LogicalNot(f.IsNan(y)))
	r := k.variable(t, f.Select(ok, ax, k.fc(x, 0)), "fmod_r")
	yy := f.Select(ok, ay, k.fc(x, 1))
	// Each step lowers r's exponent, so the exponent range bounds the steps.
	bound := int64(280)
	if m.Width(t) == 64 {
		bound = 2100
	}
	k.countLoop(bound, func() {
		f.While(func() spirv.ID { return f.GreaterEqual(f.Load(r), yy) }, func() {
			rv := f.Load(r)
			// Scale y up to just below r: y·2^(er-ey), halved if that overshoots.
			er := k.exponent(rv)
			ey := k.exponent(yy)
			s := f.ExtInst(t, spirv.GLSLLdexp, yy, f.ISub(er, ey))
			s = f.Select(f.Greater(s, rv), f.FMul(s, k.fc(x, 0.5)), s)
			f.Store(r, f.FSub(rv, s))
		})
	})
	res := k.copySign(f.Load(r), x)
	res = f.Select(f.IsInf(ay), x, res)
	nan := m.ConstFloat(t, math.NaN())
	bad := f.LogicalOr(f.LogicalOr(f.IsNan(x), f.IsNan(y)), f.LogicalOr(f.IsInf(ax), f.Equal(ay, k.fc(x, 0))))
	return f.Select(bad, nan, res)
}

// exponent is frexp's exponent of a positive finite float, as an i32.
func (k *kernel) exponent(x spirv.ID) spirv.ID {
	m := k.m
	t := m.TypeOf(x)
	st := m.TypeStruct(t, m.TypeI32())
	r := k.f.ExtInst(st, spirv.GLSLFrexpStruct, x)
	return k.f.CompositeExtract(r, 1)
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
	if dt == hlo.F64 {
		mag = k.exp64(f.FMul(y, k.log64(f.Select(f.Equal(ax, c(0)), c(1), ax))))
	} else {
		mag = f.GLSL(spirv.GLSLPow, f.Select(f.Equal(ax, c(0)), c(1), ax), y)
	}
	zeroOrInf := func(posInf spirv.ID) spirv.ID { return f.Select(posInf, inf, c(0)) }
	// x = ±0: +0 for y > 0, +inf for y < 0; x = ±inf: the reverse.
	mag = f.Select(f.Equal(ax, c(0)), zeroOrInf(f.LogicalNot(yPos)), mag)
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

// atan2 is C's atan2: GLSL's is undefined at (0, 0) and imprecise for infinities,
// which are given their limits here.
func (k *kernel) atan2(dt hlo.DType, y, x spirv.ID) (spirv.ID, error) {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	c := func(v float64) spirv.ID { return m.ConstFloat(t, v) }
	var r spirv.ID
	if dt == hlo.F64 {
		r = k.atan2x64(y, x)
	} else {
		r = f.GLSL(spirv.GLSLAtan2, y, x)
	}
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
