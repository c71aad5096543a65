package vkxla_test

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// The differential cases of tanh, tan, expm1, log1p and power beyond the random
// values and exp's special values (complex_device_test.go), in c64 and c128 (each
// list with the part type's own thresholds): the poles of tanh and tan, real
// parts either side of where tanh saturates, values near 0 where expm1 and log1p
// must keep their relative accuracy, expm1 near its zeros 2πik and where e^x
// overflows, log1p's cut along x < −1, and power over every pair of its special
// bases and exponents, with moduli and factors out of the part type's range
// (c64's: cases BenchmarkComplexTranscendentalSweep found).

// tanhPoints are near tanh's poles iπ(k + ½) (tan's, rotated, at π(k + ½)), on and
// off the axis, and either side of where the real part saturates (tanhFar in
// spirv/codegen/complex_tanh.go: 10 in f32, 20 in f64).
func tanhPoints(dt hlo.DType) []complex128 {
	if dt == hlo.C128 {
		h := math.Pi / 2
		return []complex128{
			complex(0, h), complex(0, -h), complex(1e-3, h), complex(-2e-4, 3*h), complex(1e-6, -h), complex(1e-15, h),
			complex(h, 0), complex(-h, 1e-3), complex(3*h, -2e-4),
			complex(19.5, 1), complex(20.5, -2), complex(-22, 0.5), complex(40, 3), complex(-400, 2), complex(1.7e308, -1),
			complex(1e-300, 1e-300), complex(-0.3, 0.2), complex(1e-4, -2),
		}
	}
	h := float32(math.Pi / 2)
	return c64Values(
		complex(0, h), complex(0, -h), complex(1e-3, h), complex(-2e-4, 3*h), complex(1e-6, -h),
		complex(h, 0), complex(-h, 1e-3), complex(3*h, -2e-4),
		complex(9.5, 1), complex(10.5, -2), complex(-12, 0.5), complex(40, 3), complex(-400, 2), complex(3e38, -1),
		complex(1e-20, 1e-20), complex(-0.3, 0.2), complex(1e-4, -2),
	)
}

// nearZero are small values inside the region (|x|, |y| < ½ for log1p, < 1 for
// expm1) where the series forms apply, including points near |1 + z| = 1 (log1p's
// real part near 0) and near e^x·cos y = 1 (expm1's), each part rounded to dt's
// part type.
func nearZero(dt hlo.DType) []complex128 {
	negZ := math.Copysign(0, -1)
	zs := []complex128{
		complex(1e-7, 2e-7), complex(-3e-8, 1e-9), complex(1e-20, -1e-20), complex(1e-3, 0), complex(0, 1e-5),
		complex(-1e-5, negZ), complex(0.3, -0.4), complex(-0.49, 0.49), complex(0.99, 0.99), complex(-0.99, 0.5),
		complex(math.Cos(0.3)-1, math.Sin(0.3)), complex(math.Cos(0.01)-1, -math.Sin(0.01)),
		complex(-math.Log(math.Cos(0.2)), 0.2), complex(-math.Log(math.Cos(0.9)), -0.9),
		complex(0.4999, 0.4999), complex(0.5, 0.1), complex(1, 1e-3),
	}
	if dt == hlo.C128 {
		return append(zs, complex(1e-16, -2e-16), complex(1e-300, 3e-300), complex(math.Cos(1e-4)-1, math.Sin(1e-4)))
	}
	for i, z := range zs {
		zs[i] = complex128(complex64(z))
	}
	return zs
}

// expm1Zeros are near expm1's other zeros, 2πik (where e^x·cos y − 1 cancels in
// f32: the c64 kernel takes the identity form there too), and real parts above
// ln(f32 max) beside small imaginary parts (e^x·sin y finite in cpuref's f64
// where f32's e^x is not).
func expm1Zeros() []complex128 {
	tau := 2 * math.Pi
	return c64Values(
		complex(-0.005457306, float32(-tau-0.0023)), complex(1e-5, float32(tau)), complex(-2e-6, float32(3*tau+1e-4)),
		complex(-2.27302207e-05, -1.378283389e20), complex(3e-7, float32(-1000*tau)),
		complex(111.52086, 2.015185e-27), complex(65.72299, -2.7535926e-22), complex(88.5, 1e-3), complex(89, -0.2),
	)
}

// expm1Large are c128's real parts either side of ln(f64 max) = 709.78 beside
// small and moderate imaginary parts (both sides overflow with e^x above it, as
// math/cmplx's exp does), and a very negative one. Not between 709.1 and 709.78:
// Go's math.Exp on amd64 (cpuref's, through cmplx.Exp) overflows there already
// (math.Exp(709.5) = +inf, where e^709.5 = 1.35e308). c128 has no points near
// 2πik, k ≠ 0: there cpuref's c128 expm1 is exp(z) − 1 in f64 (its identity
// form only inside |x|, |y| < 1), which cancels, so that cpuref itself is off by
// about ε/|expm1 z| relative to the modulus (1.9e-14 at −0.005457306 − i(2π +
// 0.0023), 85ε), and the kernel, which takes the same form to agree with it
// elsewhere, cancels with it.
func expm1Large() []complex128 {
	return []complex128{complex(709, 1e-3), complex(709.05, -0.2), complex(710, 1e-300), complex(710, 2), complex(-740, 1), complex(-0.5, 1e5)}
}

// cutPoints are either side of log1p's cut (x < −1) and its branch point.
func cutPoints() []complex128 {
	negZ := math.Copysign(0, -1)
	return []complex128{
		complex(-2, 0), complex(-2, negZ), complex(-5, 0), complex(-5, negZ), complex(-1, 0), complex(-1, negZ),
		complex(-1.5, 1e-6), complex(-1.5, -1e-6), complex(-1, 1e-3),
	}
}

// powBases and powExponents are power's special operands: zeros of both signs,
// infinities, NaNs, the cut (−4 ± 0i, −1 ± 0i), 1, i, tiny and huge bases (c128's
// out of f64's range: a modulus above f64 max), and moderate values. Exponents
// stay moderate: with one above 1e3 in size the angle p·arg z + q·log|z| has no
// correct digits in f32 (docs/complex.md).
func powBases(dt hlo.DType) []complex128 {
	nan, inf := math.NaN(), math.Inf(1)
	negZ := math.Copysign(0, -1)
	tiny, huge, top := 1e-30, 1e30, 3e38
	if dt == hlo.C128 {
		tiny, huge, top = 1e-300, 1e300, 1.7e308
	}
	return []complex128{
		0, complex(negZ, 0), complex(0, negZ), complex(negZ, negZ), 1, complex(0, 1), complex(-1, 0), complex(-1, negZ),
		complex(-4, 0), complex(-4, negZ), complex(2, 3), complex(-0.5, -0.25), complex(roundPart(dt, tiny), 3), complex(roundPart(dt, huge), -roundPart(dt, huge)),
		complex(roundPart(dt, top), roundPart(dt, top)), complex(inf, 1), complex(1, -inf), complex(inf, nan), complex(nan, 0), complex(0, nan),
	}
}

func powExponents(dt hlo.DType) []complex128 {
	nan, inf := math.NaN(), math.Inf(1)
	negZ := math.Copysign(0, -1)
	return []complex128{
		0, complex(negZ, 0), 1, 2, complex(0.5, 0), complex(0.5, negZ), complex(-1, 0), complex(-1, 1), complex(0, 1),
		complex(1.5, -2), complex(roundPart(dt, 1.0/3), 0), complex(-2.5, 0.5), complex(nan, 0), complex(1, nan), complex(nan, inf),
		complex(inf, 1), complex(-inf, 0), complex(1, inf),
	}
}

// powRangePairs are finite bases and exponents whose moduli and factors leave the
// part type's normal range. c64: |z|^p subnormal (e^{−103.6}) brought back by
// e^{−q·arg z}, |z|^p above f32 max brought back by cos θ and e^{−q·arg z} (the
// kernel keeps them, as cpuref's f64 does). c128: |z|^p above f64 max, where
// cmplx.Pow (cpuref) overflows with it, and a large product that stays in range.
func powRangePairs(dt hlo.DType) (zs, ws []complex128) {
	if dt == hlo.C128 {
		return []complex128{complex(1e-300, 2e-300), complex(-1e200, 3e199), complex(2.2908813e250, 2.2600629e110), complex(1e-150, -3e-150)},
			[]complex128{complex(-1.2, 0.5), complex(2.1, 3), complex(1.2, -0.969705), complex(1.9, 0.25)}
	}
	return c64Values(complex(0.0016485477, 3857.8757), complex(2.2908813e25, 2.2600629e11), complex(1e-30, 2e-30), complex(-1e20, 3e19)),
		c64Values(complex(-12.543718, -17.763212), complex(1.5289088, -0.969705), complex(-1.2, 0.5), complex(2.1, 3))
}

// ambiguousPower reports pairs where r = |z|^p overflows the part type while θ =
// p·arg z is a non-zero multiple of π/2 (w real): a part is then ±inf times cos θ
// or sin θ of a rounded multiple of π/2, an exact 0 that neither side holds, and
// each takes its sign from its own rounding of π/2 (f32's lies above it, f64's
// below): (1 − i·inf)¹ is −inf − i·inf on the GPU and +inf − i·inf in cpuref,
// where the true value is 1 − i·inf; docs/complex.md. (A zero base has cases of
// its own.) In c128 both round π/2 alike, so none is left out.
func ambiguousPower(dt hlo.DType, z, w complex128) bool {
	if dt == hlo.C128 {
		return false
	}
	p := real(w)
	r := math.Pow(cmplx.Abs(z), p)
	k := p * cmplx.Phase(z) / (math.Pi / 2)
	return z != 0 && imag(w) == 0 && r > math.MaxFloat32 && k != 0 && math.Abs(k-math.Round(k)) < 1e-9
}

// roundPart is v rounded to the part type of complex type dt.
func roundPart(dt hlo.DType, v float64) float64 {
	if dt == hlo.C64 {
		return float64(float32(v))
	}
	return v
}

func c64Values(vals ...complex64) []complex128 {
	zs := make([]complex128, len(vals))
	for i, z := range vals {
		zs[i] = complex128(z)
	}
	return zs
}

func complexVector(dt hlo.DType, vals []complex128) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(vals))))
	for i, z := range vals {
		l.SetComplex128(i, z)
	}
	return l
}

func complexTranscendentalCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	unary := func(name string, op hlo.Opcode, vals []complex128) opCase {
		return complexCase(t, dt, op.String()+" "+name, op, []*hlo.Literal{complexVector(dt, vals)},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, ps[0]) })
	}
	cases := []opCase{
		unary("poles and saturation", hlo.OpTanh, tanhPoints(dt)),
		unary("near 0", hlo.OpExpm1, nearZero(dt)),
		unary("near 0", hlo.OpLog1p, nearZero(dt)),
		unary("cut", hlo.OpLog1p, cutPoints()),
	}
	if dt == hlo.C128 {
		cases = append(cases, unary("large", hlo.OpExpm1, expm1Large()))
	} else {
		cases = append(cases, unary("near 2πik and large", hlo.OpExpm1, expm1Zeros()))
	}
	// tan at tanh's points rotated (tan z = −i·tanh(iz)): its poles on the real axis.
	var rotated []complex128
	for _, z := range tanhPoints(dt) {
		rotated = append(rotated, complex(imag(z), -real(z)))
	}
	cases = append(cases, unary("poles and saturation", hlo.OpTan, rotated))
	var zs, ws []complex128
	for _, z := range powBases(dt) {
		for _, w := range powExponents(dt) {
			if !ambiguousPower(dt, z, w) {
				zs, ws = append(zs, z), append(ws, w)
			}
		}
	}
	x, y := randomComplexWith(g, dt, nil, 3, 43), randomComplexWith(g, dt, nil, 3, 43)
	power := func(name string, z, w *hlo.Literal) opCase {
		return complexCase(t, dt, "power"+name, hlo.OpPower, []*hlo.Literal{z, w}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Binary(hlo.OpPower, ps[0], ps[1])
		})
	}
	rz, rw := powRangePairs(dt)
	zs, ws = append(zs, rz...), append(ws, rw...)
	cases = append(cases, power("", x, y), power(" special pairs", complexVector(dt, zs), complexVector(dt, ws)))
	// The five in one fused kernel, power of an expm1 (its error carried on, well
	// within power's tolerance), on the random values with the special ones first.
	fused := complexCase(t, dt, "power of expm1, tanh, tan, log1p fused", hlo.OpPower, []*hlo.Literal{randomComplex(g, dt, 3, 43), y},
		func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Tuple(b.Binary(hlo.OpPower, b.Unary(hlo.OpExpm1, ps[0]), ps[1]),
				b.Unary(hlo.OpTanh, ps[0]), b.Unary(hlo.OpTan, ps[1]), b.Unary(hlo.OpLog1p, ps[0]))
		})
	return append(cases, fused)
}
