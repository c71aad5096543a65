package codegen

import (
	"math"

	"github.com/vkxla/vkxla/spirv"
)

// complexDivide is n/m on c64 or c128 by the algorithm of Go's complex division
// (which cpuref's is): Smith's, dividing by the larger part of m, then C99's
// recovery (G.5.1) of infinities and zeros where both parts came out NaN. For c64
// it computes in f32 where cpuref computes in f64 and rounds once: within a few
// ulp of the modulus (vkxla.Tolerance), with the same special values; for c128
// it is Go's complex128 division, operation for operation.
func (k *kernel) complexDivide(n, m spirv.ID) spirv.ID {
	f := k.f
	a, b := k.parts(n)
	c, d := k.parts(m)
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	add := func(x, y spirv.ID) spirv.ID { return k.exact(f.FAdd(x, y)) }
	sub := func(x, y spirv.ID) spirv.ID { return k.exact(f.FSub(x, y)) }
	div := func(x, y spirv.ID) spirv.ID { return k.exact(f.FDiv(x, y)) }
	// |c| ≥ |d| (false when either is NaN, as in Go): ratio d/c, else c/d.
	byReal := f.GreaterEqual(f.GLSL(spirv.GLSLFAbs, c), f.GLSL(spirv.GLSLFAbs, d))
	r1 := div(d, c)
	den1 := add(c, mul(r1, d))
	e1, f1 := div(add(a, mul(b, r1)), den1), div(sub(b, mul(a, r1)), den1)
	r2 := div(c, d)
	den2 := add(d, mul(r2, c))
	e2, f2 := div(add(mul(a, r2), b), den2), div(sub(mul(b, r2), a), den2)
	q := k.makeComplex(f.Select(byReal, e1, e2), f.Select(byReal, f1, f2))
	bothNaN := f.LogicalAnd(f.IsNan(f.Select(byReal, e1, e2)), f.IsNan(f.Select(byReal, f1, f2)))
	return f.Select(bothNaN, k.divideRecovery(a, b, c, d), q)
}

// divideRecovery is C99's answer for a quotient whose parts are both NaN: ±inf
// for a nonzero number over zero, an infinity over a finite number, and zeros for a
// finite number over an infinity; NaN otherwise.
func (k *kernel) divideRecovery(a, b, c, d spirv.ID) spirv.ID {
	f := k.f
	inf, zero, one := k.partConst(math.Inf(1)), k.partConst(0), k.partConst(1)
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	add := func(x, y spirv.ID) spirv.ID { return k.exact(f.FAdd(x, y)) }
	sub := func(x, y spirv.ID) spirv.ID { return k.exact(f.FSub(x, y)) }
	finite := func(x spirv.ID) spirv.ID { return f.LogicalNot(f.LogicalOr(f.IsNan(x), f.IsInf(x))) }
	anyInf := func(x, y spirv.ID) spirv.ID { return f.LogicalOr(f.IsInf(x), f.IsInf(y)) }
	unit := func(x spirv.ID) spirv.ID { return k.copySign(f.Select(f.IsInf(x), one, zero), x) }
	// a nonzero (non-NaN) number over 0
	overZero := f.LogicalAnd(f.LogicalAnd(f.Equal(c, zero), f.Equal(d, zero)),
		f.LogicalNot(f.LogicalAnd(f.IsNan(a), f.IsNan(b))))
	s := k.copySign(inf, c)
	v1 := k.makeComplex(mul(s, a), mul(s, b))
	// an infinity over a finite number
	infOver := f.LogicalAnd(anyInf(a, b), f.LogicalAnd(finite(c), finite(d)))
	ua, ub := unit(a), unit(b)
	v2 := k.makeComplex(mul(inf, add(mul(ua, c), mul(ub, d))), mul(inf, sub(mul(ub, c), mul(ua, d))))
	// a finite number over an infinity
	overInf := f.LogicalAnd(anyInf(c, d), f.LogicalAnd(finite(a), finite(b)))
	uc, ud := unit(c), unit(d)
	v3 := k.makeComplex(mul(zero, add(mul(a, uc), mul(b, ud))), mul(zero, sub(mul(b, uc), mul(a, ud))))
	nan := k.partConst(math.NaN())
	r := f.Select(overInf, v3, k.makeComplex(nan, nan))
	r = f.Select(infOver, v2, r)
	return f.Select(overZero, v1, r)
}

// complexReciprocal is 1/m by complexDivide's algorithm with the numerator's parts
// 1 and 0 substituted, so that no product has a constant 0 operand (a driver may
// fold inf·0 to 0 there, where the division gives NaN): 1/0 is (±inf, NaN) and the
// reciprocal of an infinity is a signed zero, as Go's division.
func (k *kernel) complexReciprocal(m spirv.ID) spirv.ID {
	f := k.f
	c, d := k.parts(m)
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	add := func(x, y spirv.ID) spirv.ID { return k.exact(f.FAdd(x, y)) }
	sub := func(x, y spirv.ID) spirv.ID { return k.exact(f.FSub(x, y)) }
	div := func(x, y spirv.ID) spirv.ID { return k.exact(f.FDiv(x, y)) }
	zero, one := k.partConst(0), k.partConst(1)
	byReal := f.GreaterEqual(f.GLSL(spirv.GLSLFAbs, c), f.GLSL(spirv.GLSLFAbs, d))
	r1 := div(d, c)
	den1 := add(c, mul(r1, d))
	e1, f1 := div(one, den1), div(sub(zero, r1), den1)
	r2 := div(c, d)
	den2 := add(d, mul(r2, c))
	e2, f2 := div(r2, den2), div(sub(zero, one), den2)
	e, g := f.Select(byReal, e1, e2), f.Select(byReal, f1, f2)
	bothNaN := f.LogicalAnd(f.IsNan(e), f.IsNan(g))
	nan := k.partConst(math.NaN())
	overZero := f.LogicalAnd(f.Equal(c, zero), f.Equal(d, zero))
	unit := func(x spirv.ID) spirv.ID { return k.copySign(f.Select(f.IsInf(x), one, zero), x) }
	overInf := f.LogicalOr(f.IsInf(c), f.IsInf(d))
	rec := f.Select(overInf, k.makeComplex(k.copySign(zero, unit(c)), k.copySign(zero, f.FNegate(unit(d)))), k.makeComplex(nan, nan))
	rec = f.Select(overZero, k.makeComplex(k.copySign(k.partConst(math.Inf(1)), c), nan), rec)
	return f.Select(bothNaN, rec, k.makeComplex(e, g))
}
