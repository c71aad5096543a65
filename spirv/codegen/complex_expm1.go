package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// expLimit is just below ln(f32 max) = 88.72: above it e^x overflows f32 on its
// own, while e^x·cos y or e^x·sin y may not.
const expLimit = 88

// complexExpm1 is exp(z) − 1, for finite parts by the identity e^x·cos y − 1 =
// expm1(x)·cos y − 2·sin²(y/2), with imaginary part e^x·sin y. cpuref uses the
// identity only inside |x|, |y| < 1 (f64's e^x·cos y − 1 is accurate to f32
// elsewhere), but in f32 it cancels near every zero of expm1, 2πik, not only near
// 0, so the kernel uses it everywhere. Above x = 88 the parts are (h·cos y)·h and
// (h·sin y)·h with h = e^{x/2}, which overflow only where the product does. A NaN
// or infinite part takes exponential's kernel minus 1 (its special values).
func (k *kernel) complexExpm1(z spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	x, y := k.parts(z)
	sy, cy := k.sinCos(y, false), k.sinCos(y, true)
	s := k.sinCos(mul(y, c(0.5)), false)
	re := k.exact(f.FSub(mul(k.expm1(x), cy), mul(c(2), mul(s, s))))
	v := k.makeComplex(re, mul(k.exp(x), sy))
	h := k.exp(mul(x, c(0.5)))
	huge := k.makeComplex(mul(mul(h, cy), h), mul(mul(h, sy), h))
	v = f.Select(f.Greater(x, c(expLimit)), huge, v)
	ex, ey := k.parts(k.complexExp(z))
	special := k.makeComplex(k.exact(f.FSub(ex, c(1))), ey)
	return f.Select(f.LogicalAnd(k.isFinite(x), k.isFinite(y)), v, special)
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
	arg, err := k.atan2(hlo.F32, y, x1)
	near := mul(c(0.5), k.log1p(add(mul(x, add(c(2), x)), mul(y, y))))
	inside := f.LogicalAnd(f.Less(f.GLSL(spirv.GLSLFAbs, x), c(0.5)), f.Less(f.GLSL(spirv.GLSLFAbs, y), c(0.5)))
	return k.makeComplex(f.Select(inside, near, k.logAbs(x1, y)), arg), err
}
