package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Complex tanh and tan, cpuref's definition (cpuref/complex_tanh.go) in the part
// type (f32 for c64, f64 for c128):
// tanh(x + iy) = (sinh x·cosh x + i·sin y·cos y)/(sinh²x + cos²y), whose
// denominator is a sum of squares (no cancellation near the poles), and tan z =
// −i·tanh(iz).

// tanhFar is the |x| above which tanh's real part is ±1 in the part type: 1 −
// |re| < 4e^{−2|x|}, below half an ulp of 1 beyond ½(ln 4 + p·ln 2) for p
// significand bits and one guard: f32's 2^-25 from 9.4 on (10: 4e^{−20} = 8.2e-9),
// f64's 2^-54 from 19.4 on (20: 4e^{−40} = 1.7e-17, cpuref's own threshold, so
// that both take the same form on each side of it).
func (k *kernel) tanhFar() float64 {
	if k.part == hlo.F64 {
		return 20
	}
	return 10
}

// complexTanh is tanh z: for |x| ≤ tanhFar the stable form, sinh|x| and cosh|x| from
// expm1(|x|) (½(e + e/(e+1)) and ½((e+1) + 1/(e+1)): no cancellation near 0, and
// e+1 never loses digits as it would for a negative argument), the sign of x put
// back on sinh; beyond, ±1 + i·4·sin y·cos y·e^{−2|x|}. Then C99's special values
// (tanhSpecials).
func (k *kernel) complexTanh(z spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	add := func(a, b spirv.ID) spirv.ID { return k.exact(f.FAdd(a, b)) }
	div := func(a, b spirv.ID) spirv.ID { return k.exact(f.FDiv(a, b)) }
	x, y := k.parts(z)
	ax := f.GLSL(spirv.GLSLFAbs, x)
	cy := k.sinCos(y, true)
	sc := mul(k.sinCos(y, false), cy)
	em := k.expm1(ax)
	ep := add(em, c(1))
	sh := k.copySign(mul(c(0.5), add(em, div(em, ep))), x)
	ch := mul(c(0.5), add(ep, div(c(1), ep)))
	d := add(mul(sh, sh), mul(cy, cy))
	near := k.makeComplex(div(mul(sh, ch), d), div(sc, d))
	far := k.makeComplex(k.copySign(c(1), x), mul(mul(c(4), sc), k.exp(mul(c(-2), ax))))
	v := f.Select(f.Greater(ax, c(k.tanhFar())), far, near) // NaN: near, NaN too
	return k.tanhSpecials(z, sc, v)
}

// tanhSpecials overrides v with cpuref's (C99 Annex G's) answers where a part is
// infinite or NaN: tanh(±∞ + iy) = ±1 + i0 (the zero signed as sin y·cos y for
// finite y, as y for infinite y, +0 for NaN); tanh(NaN ± i0) = NaN ± i0, else
// NaN + i·NaN for a NaN real part; a finite x beside an infinite or NaN y gives
// NaN + i·NaN, or ±0 + i·NaN for x = ±0. Zeros are told on the encoding, so that
// a subnormal part (which the float unit may flush) is not taken for one.
func (k *kernel) tanhSpecials(z, sc, v spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	x, y := k.parts(z)
	nan := c(math.NaN())
	xInf, xNaN := f.IsInf(x), f.IsNan(x)
	yBad := f.LogicalOr(f.IsInf(y), f.IsNan(y))
	atInf := f.Select(f.IsNan(y), c(0), k.copySign(c(0), f.Select(f.IsInf(y), y, sc)))
	v = f.Select(f.LogicalAnd(yBad, f.LogicalNot(f.LogicalOr(xInf, xNaN))),
		k.makeComplex(f.Select(k.isZeroBits(x), x, nan), nan), v)
	v = f.Select(xNaN, f.Select(k.isZeroBits(y), z, k.makeComplex(nan, nan)), v)
	return f.Select(xInf, k.makeComplex(k.copySign(c(1), x), atInf), v)
}

// complexTan is tan z = −i·tanh(iz): with tanh(−y + ix) = a + ib, b − ia.
func (k *kernel) complexTan(z spirv.ID) spirv.ID {
	x, y := k.parts(z)
	a, b := k.parts(k.complexTanh(k.makeComplex(k.f.FNegate(y), x)))
	return k.makeComplex(b, k.f.FNegate(a))
}
