package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// complexExpm1 is exp(z) − 1 as cpuref computes it: inside |x| < 1 and |y| < 1,
// where e^x·cos y − 1 would cancel, the real part is expm1(x)·cos y − 2·sin²(y/2)
// and the imaginary part e^x·sin y; elsewhere (and for NaN or infinite parts) it
// is complexExp(z) with 1 taken from the real part, so exp's special values carry
// over.
func (k *kernel) complexExpm1(z spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	mul := func(a, b spirv.ID) spirv.ID { return k.exact(f.FMul(a, b)) }
	x, y := k.parts(z)
	s := k.sinCos(mul(y, c(0.5)), false)
	re := k.exact(f.FSub(mul(k.expm1(x), k.sinCos(y, true)), mul(c(2), mul(s, s))))
	near := k.makeComplex(re, mul(k.exp(x), k.sinCos(y, false)))
	ex, ey := k.parts(k.complexExp(z))
	far := k.makeComplex(k.exact(f.FSub(ex, c(1))), ey)
	inside := f.LogicalAnd(f.Less(f.GLSL(spirv.GLSLFAbs, x), c(1)), f.Less(f.GLSL(spirv.GLSLFAbs, y), c(1))) // NaN: far
	return f.Select(inside, near, far)
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
