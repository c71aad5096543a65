package vkxla_test

import (
	"math"
	"math/cmplx"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// The differential cases of c64 tanh, tan, expm1, log1p and power beyond the
// random values and exp's special values (complex_device_test.go): the poles of
// tanh and tan, large real parts, values near 0 where expm1 and log1p must keep
// their relative accuracy, expm1 near its zeros 2πik, log1p's cut along x < −1,
// and power over every pair of its special bases and exponents, with moduli and
// factors out of f32's range (cases BenchmarkComplexTranscendentalSweep found).

// tanhPoints are near tanh's poles iπ(k + ½) (tan's, rotated, at π(k + ½)), on and
// off the axis, and where the real part saturates.
func tanhPoints() []complex64 {
	h := float32(math.Pi / 2)
	return []complex64{
		complex(0, h), complex(0, -h), complex(1e-3, h), complex(-2e-4, 3*h), complex(1e-6, -h),
		complex(h, 0), complex(-h, 1e-3), complex(3*h, -2e-4),
		complex(9.5, 1), complex(10.5, -2), complex(-12, 0.5), complex(40, 3), complex(-400, 2), complex(3e38, -1),
		complex(1e-20, 1e-20), complex(-0.3, 0.2), complex(1e-4, -2),
	}
}

// nearZero are small values inside the region (|x|, |y| < ½ for log1p, < 1 for
// expm1) where the series forms apply, including points near |1 + z| = 1 (log1p's
// real part near 0) and near e^x·cos y = 1 (expm1's).
func nearZero() []complex64 {
	negZ := float32(math.Copysign(0, -1))
	return []complex64{
		complex(1e-7, 2e-7), complex(-3e-8, 1e-9), complex(1e-20, -1e-20), complex(1e-3, 0), complex(0, 1e-5),
		complex(-1e-5, negZ), complex(0.3, -0.4), complex(-0.49, 0.49), complex(0.99, 0.99), complex(-0.99, 0.5),
		complex(float32(math.Cos(0.3)-1), float32(math.Sin(0.3))), complex(float32(math.Cos(0.01)-1), float32(-math.Sin(0.01))),
		complex(float32(-math.Log(math.Cos(0.2))), 0.2), complex(float32(-math.Log(math.Cos(0.9))), -0.9),
		complex(0.4999, 0.4999), complex(0.5, 0.1), complex(1, 1e-3),
	}
}

// expm1Zeros are near expm1's other zeros, 2πik (where e^x·cos y − 1 cancels in
// f32: the kernel takes the identity form there too), and real parts above
// ln(f32 max) beside small imaginary parts (e^x·sin y finite where e^x is not).
func expm1Zeros() []complex64 {
	tau := 2 * math.Pi
	return []complex64{
		complex(-0.005457306, float32(-tau-0.0023)), complex(1e-5, float32(tau)), complex(-2e-6, float32(3*tau+1e-4)),
		complex(-2.27302207e-05, -1.378283389e20), complex(3e-7, float32(-1000*tau)),
		complex(111.52086, 2.015185e-27), complex(65.72299, -2.7535926e-22), complex(88.5, 1e-3), complex(89, -0.2),
	}
}

// cutPoints are either side of log1p's cut (x < −1) and its branch point.
func cutPoints() []complex64 {
	negZ := float32(math.Copysign(0, -1))
	return []complex64{
		complex(-2, 0), complex(-2, negZ), complex(-5, 0), complex(-5, negZ), complex(-1, 0), complex(-1, negZ),
		complex(-1.5, 1e-6), complex(-1.5, -1e-6), complex(-1, 1e-3),
	}
}

// powBases and powExponents are power's special operands: zeros of both signs,
// infinities, NaNs, the cut (−4 ± 0i, −1 ± 0i), 1, i, tiny and huge bases, and
// moderate values. Exponents stay moderate: with one above 1e3 in size the angle
// p·arg z + q·log|z| has no correct digits in f32 (docs/complex.md).
func powBases() []complex64 {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZ := float32(math.Copysign(0, -1))
	return []complex64{
		0, complex(negZ, 0), complex(0, negZ), complex(negZ, negZ), 1, complex(0, 1), complex(-1, 0), complex(-1, negZ),
		complex(-4, 0), complex(-4, negZ), complex(2, 3), complex(-0.5, -0.25), complex(1e-30, 3), complex(1e30, -1e30),
		complex(3e38, 3e38), complex(inf, 1), complex(1, -inf), complex(inf, nan), complex(nan, 0), complex(0, nan),
	}
}

func powExponents() []complex64 {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZ := float32(math.Copysign(0, -1))
	return []complex64{
		0, complex(negZ, 0), 1, 2, complex(0.5, 0), complex(0.5, negZ), complex(-1, 0), complex(-1, 1), complex(0, 1),
		complex(1.5, -2), complex(1.0/3, 0), complex(-2.5, 0.5), complex(nan, 0), complex(1, nan), complex(nan, inf),
		complex(inf, 1), complex(-inf, 0), complex(1, inf),
	}
}

// ambiguousPower reports pairs where r = |z|^p overflows f32 while θ = p·arg z is
// a non-zero multiple of π/2 (w real): a part is then ±inf times cos θ or sin θ of
// a rounded multiple of π/2, an exact 0 that neither side holds, and each takes
// its sign from its own rounding of π/2 (f32's lies above it, f64's below):
// (1 − i·inf)¹ is −inf − i·inf on the GPU and +inf − i·inf in cpuref, where the
// true value is 1 − i·inf; docs/complex.md. (A zero base has cases of its own.)
func ambiguousPower(z, w complex64) bool {
	p := float64(real(w))
	r := math.Pow(cmplx.Abs(complex128(z)), p)
	k := p * cmplx.Phase(complex128(z)) / (math.Pi / 2)
	return z != 0 && imag(w) == 0 && r > math.MaxFloat32 && k != 0 && math.Abs(k-math.Round(k)) < 1e-9
}

func c64Vector(vals []complex64) *hlo.Literal {
	return hlo.MustFromSlice([]int64{int64(len(vals))}, vals)
}

func complexTranscendentalCases(t testing.TB, g *gen) []opCase {
	unary := func(name string, op hlo.Opcode, vals []complex64) opCase {
		return complexCase(t, hlo.C64, op.String()+" "+name, op, []*hlo.Literal{c64Vector(vals)},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, ps[0]) })
	}
	cases := []opCase{
		unary("poles and saturation", hlo.OpTanh, tanhPoints()),
		unary("near 0", hlo.OpExpm1, nearZero()),
		unary("near 0", hlo.OpLog1p, nearZero()),
		unary("cut", hlo.OpLog1p, cutPoints()),
		unary("near 2πik and large", hlo.OpExpm1, expm1Zeros()),
	}
	// tan at tanh's points rotated (tan z = −i·tanh(iz)): its poles on the real axis.
	var rotated []complex64
	for _, z := range tanhPoints() {
		rotated = append(rotated, complex(imag(z), -real(z)))
	}
	cases = append(cases, unary("poles and saturation", hlo.OpTan, rotated))
	var zs, ws []complex64
	for _, z := range powBases() {
		for _, w := range powExponents() {
			if !ambiguousPower(z, w) {
				zs, ws = append(zs, z), append(ws, w)
			}
		}
	}
	x, y := randomComplexWith(g, hlo.C64, nil, 3, 43), randomComplexWith(g, hlo.C64, nil, 3, 43)
	power := func(name string, z, w *hlo.Literal) opCase {
		return complexCase(t, hlo.C64, "power"+name, hlo.OpPower, []*hlo.Literal{z, w}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Binary(hlo.OpPower, ps[0], ps[1])
		})
	}
	// Moduli and factors out of f32's normal range with finite operands: |z|^p
	// subnormal (e^{−103.6}) brought back by e^{−q·arg z}, |z|^p above f32 max
	// brought back by cos θ and e^{−q·arg z}.
	zs = append(zs, complex(0.0016485477, 3857.8757), complex(2.2908813e25, 2.2600629e11), complex(1e-30, 2e-30), complex(-1e20, 3e19))
	ws = append(ws, complex(-12.543718, -17.763212), complex(1.5289088, -0.969705), complex(-1.2, 0.5), complex(2.1, 3))
	cases = append(cases, power("", x, y), power(" special pairs", c64Vector(zs), c64Vector(ws)))
	// The five in one fused kernel, power of an expm1 (its error carried on, well
	// within power's tolerance), on the random values with the special ones first.
	fused := complexCase(t, hlo.C64, "power of expm1, tanh, tan, log1p fused", hlo.OpPower, []*hlo.Literal{randomComplex(g, hlo.C64, 3, 43), y},
		func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Tuple(b.Binary(hlo.OpPower, b.Unary(hlo.OpExpm1, ps[0]), ps[1]),
				b.Unary(hlo.OpTanh, ps[0]), b.Unary(hlo.OpTan, ps[1]), b.Unary(hlo.OpLog1p, ps[0]))
		})
	return append(cases, fused)
}
