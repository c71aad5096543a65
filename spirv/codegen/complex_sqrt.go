package codegen

import (
	"math"

	"github.com/vkxla/vkxla/spirv"
)

// complexSqrt is the principal square root by math/cmplx's algorithm (which is
// cpuref's) in the part type: exact forms on the axes (the sign of a zero imaginary part
// picks the side of the cut along the negative reals), +inf ± inf·i for an infinite
// imaginary part, and otherwise t = √(½(|z| + |a|)) after rescaling a and b (by ¼
// above 4, by 2^54 below, so that neither |z| overflows nor tiny parts underflow),
// with the other part ½|b|/t.
func (k *kernel) complexSqrt(z spirv.ID) spirv.ID {
	f := k.f
	a0, b0 := k.parts(z)
	c := func(v float64) spirv.ID { return k.partConst(v) }
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	abs := func(x spirv.ID) spirv.ID { return f.GLSL(spirv.GLSLFAbs, x) }
	big := f.LogicalOr(f.Greater(abs(a0), c(4)), f.Greater(abs(b0), c(4)))
	up := f.Select(big, c(0.25), c(1<<54))
	scale := f.Select(big, c(2), c(1.0/(1<<27)))
	a, b := mul(a0, up), mul(b0, up)
	r := k.hypot(a, b)
	half := func(x, y spirv.ID, sign float64) spirv.ID { // √(½x + sign·½y)
		return k.sqrt(k.exact(f.FAdd(mul(c(0.5), x), mul(c(sign*0.5), y))))
	}
	other := func(t spirv.ID) spirv.ID { return mul(scale, abs(k.exact(f.FDiv(mul(c(0.5), b), t)))) }
	tPos := half(r, a, 1)  // a > 0: t first
	rNeg := half(r, a, -1) // a ≤ 0: r first
	re := f.Select(f.Greater(a, c(0)), mul(tPos, scale), other(rNeg))
	im := f.Select(f.Greater(a, c(0)), other(tPos), mul(rNeg, scale))
	v := k.makeComplex(re, f.Select(f.Less(b, c(0)), f.FNegate(im), im))
	return k.sqrtAxes(a0, b0, v)
}

// sqrtAxes overrides v with math/cmplx's answers on the axes and at infinite
// imaginary parts.
func (k *kernel) sqrtAxes(a, b, v spirv.ID) spirv.ID {
	f := k.f
	c := func(x float64) spirv.ID { return k.partConst(x) }
	zero := c(0)
	// imaginary part 0: √a on the positive axis, ±i√−a on the negative one, and 0.
	negAxis := k.makeComplex(zero, k.copySign(k.sqrt(f.FNegate(a)), b))
	onReal := f.Select(f.Less(a, zero), negAxis, k.makeComplex(k.sqrt(a), b))
	onReal = f.Select(f.Equal(a, zero), k.makeComplex(zero, b), onReal)
	// real part 0 (imaginary part nonzero): (r, ±r) with r = √(|b|/2).
	r := k.sqrt(k.exact(f.FMul(c(0.5), f.GLSL(spirv.GLSLFAbs, b))))
	onImag := k.makeComplex(r, f.Select(f.Less(b, zero), f.FNegate(r), r))
	v = f.Select(f.Equal(a, zero), onImag, v)
	v = f.Select(f.IsInf(b), k.makeComplex(c(math.Inf(1)), b), v)
	return f.Select(f.Equal(b, zero), onReal, v)
}
