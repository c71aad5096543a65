package codegen

import (
	"fmt"
	"math"

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
func (k *kernel) exp64(x spirv.ID) spirv.ID {
	f, m := k.f, k.m
	c := func(v float64) spirv.ID { return k.fc(x, v) }
	// Clamp so that n stays in range; the limits are applied after.
	xc := f.GLSL(spirv.GLSLFClamp, x, c(-746), c(710))
	n := f.GLSL(spirv.GLSLRoundEven, f.FMul(xc, c(1/math.Ln2)))
	r := f.FSub(f.FSub(xc, f.FMul(n, c(ln2Hi))), f.FMul(n, c(ln2Lo)))
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
	th = f.Select(swap, f.FSub(c(math.Pi/2), th), th)
	th = f.Select(k.signBit(x), f.FSub(c(math.Pi), th), th)
	return k.copySign(th, y)
}
