package codegen

import (
	"math"

	"github.com/vkxla/vkxla/spirv"
)

// Complex sine and cosine, as math/cmplx computes them (cpuref's definition):
// sin(x + iy) = sin x·cosh y + i·cos x·sinh y, cos(x + iy) = cos x·cosh y −
// i·sin x·sinh y, with its special cases on the axes and at infinities, in the
// part type.

// hyperbolic holds what a·sinh y and a·cosh y are computed from: through expm1 for
// |y| ≤ ½ (no cancellation), else as (a·h)·h ± a·¼/h² with h = √½·e^{|y|/2}, so that
// ½e^|y| is never formed on its own: a product overflows only where it does
// (sin(0 + 95i) is 0 + i·sinh 95, not 0·inf). sinh takes y's sign.
type hyperbolic struct {
	k              *kernel
	y, small, h, q spirv.ID // q = ¼/h² = ½e^{−|y|}
	sh, ch         spirv.ID // the small arm's sinh y and cosh y
}

func (k *kernel) hyperbolic(y spirv.ID) hyperbolic {
	f := k.f
	c := func(v float64) spirv.ID { return k.partConst(v) }
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	add := func(a, b spirv.ID) spirv.ID { return k.exact(f.FAdd(a, b)) }
	div := func(a, b spirv.ID) spirv.ID { return k.exact(f.FDiv(a, b)) }
	ay := f.GLSL(spirv.GLSLFAbs, y)
	em := k.expm1(y)
	ep := add(em, c(1))
	hy := hyperbolic{k: k, y: y, small: f.LogicalNot(f.Greater(ay, c(0.5)))} // NaN: the small arm, NaN too
	hy.sh = mul(c(0.5), add(em, div(em, ep)))
	hy.ch = add(c(1), div(mul(c(0.5), mul(em, em)), ep))
	hy.h = mul(k.exp(mul(ay, c(0.5))), c(math.Sqrt2/2))
	if k.m.Width(k.partType()) == 64 {
		// math/cmplx (cpuref's c128) forms ½e^y and ½e^−y = 0.5/e^y, and e^y
		// overflows above ln(max f64) although sinh and cosh stay finite up to
		// ln(2·max): for such a positive y its products are ±inf, and NaN beside
		// a zero (sin(0 + 710i) is NaN + inf·i, sin(0 − 710i) is −1.1e308·i).
		// The kernel follows it: h = inf there.
		hy.h = f.Select(f.Greater(y, c(expOverflow64)), c(math.Inf(1)), hy.h)
	}
	hy.q = div(c(0.25), mul(hy.h, hy.h))
	return hy
}

// expOverflow64 is the largest x whose e^x math.Exp returns finite (Go's
// math.Exp: Overflow).
const expOverflow64 = 7.09782712893383973096e+02

// times is a·cosh y (sinh false) or a·sinh y.
func (hy hyperbolic) times(a spirv.ID, sinh bool) spirv.ID {
	k, f := hy.k, hy.k.f
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	big := mul(mul(a, hy.h), hy.h)
	small := mul(a, hy.ch)
	if sinh { // a·sinh y = ±a·(h² − q), by y's sign
		big = k.exact(f.FSub(big, mul(a, hy.q)))
		big = f.Select(f.Less(hy.y, k.partConst(0)), f.FNegate(big), big)
		small = mul(a, hy.sh)
	} else {
		big = k.exact(f.FAdd(big, mul(a, hy.q)))
	}
	return f.Select(hy.small, small, big)
}

// complexSinCos is the complex sine (cos false) or cosine.
func (k *kernel) complexSinCos(z spirv.ID, cos bool) spirv.ID {
	f := k.f
	re, im := k.parts(z)
	s, c := k.sinCos(re, false), k.sinCos(re, true)
	hy := k.hyperbolic(im)
	var v spirv.ID
	if cos {
		v = k.makeComplex(hy.times(c, false), f.FNegate(hy.times(s, true)))
	} else {
		v = k.makeComplex(hy.times(s, false), hy.times(c, true))
	}
	return k.trigSpecials(z, v, cos)
}

// trigSpecials overrides v with math/cmplx's answers: an infinite or NaN real
// part on the real axis, an infinite imaginary part on the imaginary axis or with
// a non-finite real part, and a NaN on the imaginary axis.
func (k *kernel) trigSpecials(z, v spirv.ID, cos bool) spirv.ID {
	f := k.f
	re, im := k.parts(z)
	zero, nan, inf := k.partConst(0), k.partConst(math.NaN()), k.partConst(math.Inf(1))
	reBad := f.LogicalOr(f.IsInf(re), f.IsNan(re))
	onRealAxis := f.LogicalAnd(f.Equal(im, zero), reBad)
	reZero := f.Equal(re, zero)
	imInf := f.IsInf(im)
	nanOnImagAxis := f.LogicalAnd(reZero, f.IsNan(im))
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	var c1, c2a, c2b, c3 spirv.ID
	if cos {
		c1 = k.makeComplex(nan, mul(f.FNegate(im), k.copySign(zero, re)))
		c2a = k.makeComplex(inf, mul(f.FNegate(re), k.copySign(zero, im)))
		c2b = k.makeComplex(inf, nan)
		c3 = k.makeComplex(nan, zero)
	} else {
		c1 = k.makeComplex(nan, im)
		c2a, c2b, c3 = z, k.makeComplex(nan, im), z
	}
	v = f.Select(nanOnImagAxis, c3, v)
	v = f.Select(f.LogicalAnd(imInf, reBad), c2b, v)
	v = f.Select(f.LogicalAnd(imInf, reZero), c2a, v)
	return f.Select(onRealAxis, c1, v)
}
