package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// expLimit is just below ln(f32 max) = 88.72: above it e^x overflows f32 on its
// own, while e^x·cos y or e^x·sin y may not (c64 only: see complexExpm1).
const expLimit = 88

// complexExpm1 is exp(z) − 1, for finite parts by the identity e^x·cos y − 1 =
// expm1(x)·cos y − 2·sin²(y/2), with imaginary part e^x·sin y. A NaN or infinite
// part takes exponential's kernel minus 1 (its special values).
//
// c64: cpuref uses the identity only inside |x|, |y| < 1 (f64's e^x·cos y − 1 is
// accurate to f32 elsewhere), but in f32 it cancels near every zero of expm1,
// 2πik, not only near 0, so the kernel uses it everywhere. Above x = 88 the parts
// are (h·cos y)·h and (h·sin y)·h with h = e^{x/2}, which overflow only where the
// product does (cpuref's f64 holds them).
//
// c128: cpuref computes in f64 itself, so the kernel takes cpuref's own forms:
// the identity inside |x|, |y| < 1, exp(z) − 1 outside (which cancels near
// 2πik, k ≠ 0, on both sides alike), and no e^{x/2} split: math/cmplx's
// exp(z) is +inf·(cos y + i·sin y) above ln(f64 max), where the split would be
// finite.
func (k *kernel) complexExpm1(z spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	x, y := k.parts(z)
	sy, cy := k.sinCos(y, false), k.sinCos(y, true)
	s := k.sinCos(mul(y, c(0.5)), false)
	re := k.exact(f.FSub(mul(k.expm1(x), cy), mul(c(2), mul(s, s))))
	v := k.makeComplex(re, mul(k.exp(x), sy))
	ex, ey := k.parts(k.complexExp(z))
	expForm := k.makeComplex(k.exact(f.FSub(ex, c(1))), ey)
	if k.part == hlo.F64 {
		inside := f.LogicalAnd(f.Less(f.GLSL(spirv.GLSLFAbs, x), c(1)), f.Less(f.GLSL(spirv.GLSLFAbs, y), c(1)))
		return f.Select(inside, v, expForm) // NaN: outside, as cpuref
	}
	h := k.exp(mul(x, c(0.5)))
	huge := k.makeComplex(mul(mul(h, cy), h), mul(mul(h, sy), h))
	v = f.Select(f.Greater(x, c(expLimit)), huge, v)
	return f.Select(f.LogicalAnd(k.isFinite(x), k.isFinite(y)), v, expForm)
}

// complexLog1p is log(1 + z) as cpuref computes it: the imaginary part
// atan2(y, 1 + x) (log's cut, moved to x < −1, the sign of a zero y picking the
// side), the real part ½·log1p(x·(2 + x) + y²) inside |x| < ½ and |y| < ½, where
// log|1 + z| would lose the digits of a result near 0, and log|(1 + x) + iy|
// (logAbs: no overflow of the modulus) elsewhere and for NaN or infinite parts.
func (k *kernel) complexLog1p(z spirv.ID) (spirv.ID, error) {
	f := k.f
	c := k.partConst
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	add := func(a, b spirv.ID) spirv.ID { return k.exact(f.FAdd(a, b)) }
	x, y := k.parts(z)
	x1 := add(c(1), x)
	arg, err := k.atan2(k.part, y, x1)
	near := mul(c(0.5), k.log1p(add(mul(x, add(c(2), x)), mul(y, y))))
	inside := f.LogicalAnd(f.Less(f.GLSL(spirv.GLSLFAbs, x), c(0.5)), f.Less(f.GLSL(spirv.GLSLFAbs, y), c(0.5)))
	return k.makeComplex(f.Select(inside, near, k.logAbs(x1, y)), arg), err
}
