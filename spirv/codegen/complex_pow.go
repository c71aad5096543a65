package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// complexPow is pow(z, w) by cmplx.Pow's algorithm (cpuref's), in the part type:
// with z = a + ib, w = p + iq, r = |z|^p (the real pow, C's special values), θ =
// p·arg z (atan2), and where q ≠ 0, r times e^{−q·arg z} and θ plus q·log|z|
// (logAbs); the result r·(cos θ + i·sin θ). A zero base takes powZeroBase's
// answers. Zeros are told on the encoding (a subnormal part is not zero, as in
// cpuref). c64 also keeps the results that leave f32's range on the way
// (powScaled); c128 does not, as cmplx.Pow in f64 does not.
func (k *kernel) complexPow(z, w spirv.ID) (spirv.ID, error) {
	f := k.f
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	a, b := k.parts(z)
	p, q := k.parts(w)
	arg, err := k.atan2(k.part, b, a)
	if err != nil {
		return 0, err
	}
	mod, logMod := k.hypot(a, b), k.logAbs(a, b)
	r, err := k.pow(k.part, mod, p) // math.Pow's answers at 0, inf and NaN
	if err != nil {
		return 0, err
	}
	theta := mul(p, arg)
	qNonZero := f.LogicalNot(k.isZeroBits(q))
	qArg := mul(f.FNegate(q), arg)
	damp := f.Select(qNonZero, k.exp(qArg), k.partConst(1))
	power := r // |z|^p, before r·damp
	r = f.Select(qNonZero, mul(r, damp), r)
	theta = f.Select(qNonZero, k.exact(f.FAdd(theta, mul(q, logMod))), theta)
	cos, sin := k.sinCos(theta, true), k.sinCos(theta, false)
	v := k.makeComplex(mul(r, cos), mul(r, sin))
	if k.part == hlo.F32 {
		logR := f.Select(qNonZero, k.exact(f.FAdd(mul(p, logMod), qArg)), mul(p, logMod))
		// A subnormal factor has lost its digits before r·damp.
		inRange := f.LogicalAnd(f.LogicalAnd(k.isNormal(power), k.isNormal(damp)), f.LogicalAnd(k.isNormal(r), f.LogicalNot(f.IsInf(mod))))
		v = k.powScaled(z, w, logR, cos, sin, inRange, v)
	}
	zeroBase := f.LogicalAnd(k.isZeroBits(a), k.isZeroBits(b))
	return f.Select(zeroBase, k.powZeroBase(p, q), v), nil
}

// powScaled is c64's r·cos θ + i·r·sin θ for finite operands where |z|, |z|^p,
// e^{−q·arg z} or r leaves f32's normal range (not inRange): (h·cos θ)·h with h =
// e^{½·logR}, logR = p·log|z| − q·arg z, which overflows or underflows only where
// the product does ((3e38 + 3e38i)¹ stays finite, and so does a |z|^p above f32
// max that e^{−q·arg z} or cos θ brings back; a subnormal |z|^p would carry its
// few digits into r·e^{−q·arg z}); v elsewhere. cpuref's c64 computes in f64, whose
// range holds these; its c128 (cmplx.Pow in f64) overflows and underflows with r,
// so c128 takes v as it is.
func (k *kernel) powScaled(z, w, logR, cos, sin, inRange, v spirv.ID) spirv.ID {
	f := k.f
	mul := func(x, y spirv.ID) spirv.ID { return k.exact(f.FMul(x, y)) }
	a, b := k.parts(z)
	p, q := k.parts(w)
	h := k.exp(mul(k.partConst(0.5), logR))
	scaled := k.makeComplex(mul(mul(h, cos), h), mul(mul(h, sin), h))
	finite := f.LogicalAnd(f.LogicalAnd(k.isFinite(a), k.isFinite(b)), f.LogicalAnd(k.isFinite(p), k.isFinite(q)))
	return f.Select(f.LogicalAnd(finite, f.LogicalNot(inRange)), scaled, v)
}

// powZeroBase is cpuref's pow(±0 ± i0, p + iq): NaN + i·NaN for a NaN exponent
// (p NaN, or q NaN beside a finite p), 1 for p = ±0, +inf + i0 for p < 0 and q =
// ±0, +inf + i·inf for p < 0 otherwise, and 0 for p > 0.
func (k *kernel) powZeroBase(p, q spirv.ID) spirv.ID {
	f := k.f
	c := k.partConst
	nan, inf := c(math.NaN()), c(math.Inf(1))
	pZero := k.isZeroBits(p)
	neg := f.Select(k.isZeroBits(q), k.makeComplex(inf, c(0)), k.makeComplex(inf, inf))
	v := f.Select(f.LogicalAnd(k.signBit(p), f.LogicalNot(pZero)), neg, k.makeComplex(c(0), c(0)))
	v = f.Select(pZero, k.makeComplex(c(1), c(0)), v)
	nanExp := f.LogicalOr(f.IsNan(p), f.LogicalAnd(f.IsNan(q), f.LogicalNot(f.IsInf(p))))
	return f.Select(nanExp, k.makeComplex(nan, nan), v)
}

// isZeroBits reports ±0 on the encoding (a float compare may flush subnormals).
func (k *kernel) isZeroBits(x spirv.ID) spirv.ID {
	return k.f.Equal(k.absBits(x), k.absBits(k.fc(x, 0)))
}

// isFinite reports a value neither infinite nor NaN.
func (k *kernel) isFinite(x spirv.ID) spirv.ID {
	return k.f.LogicalNot(k.f.LogicalOr(k.f.IsInf(x), k.f.IsNan(x)))
}

// isNormal reports a finite value of at least the smallest normal magnitude of
// x's type (f32's 2^-126, f64's 2^-1022).
func (k *kernel) isNormal(x spirv.ID) spirv.ID {
	smallest := 0x1p-126
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		smallest = 0x1p-1022
	}
	least := k.f.GreaterEqual(k.absBits(x), k.absBits(k.fc(x, smallest)))
	return k.f.LogicalAnd(least, k.isFinite(x))
}
