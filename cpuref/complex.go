package cpuref

import (
	"math"
	"math/cmplx"

	"github.com/vkxla/vkxla/hlo"
)

// The element functions of complex numbers (c64, c128). Every one computes in
// complex128 and the result is rounded once per part to the element type, as the
// float ops compute f32 in float64. The transcendental functions are Go's
// math/cmplx (tanh and tan by a stable form of their own, complex_tanh.go, and
// power guarded against a panic of cmplx.Pow, complex_pow.go), whose branch cuts
// are C99's (Annex G) and StableHLO's: log, sqrt and power are cut along the
// negative real axis, approached from above for an imaginary part of +0 and from
// below for −0 (log(−1+0i) = iπ, log(−1−0i) = −iπ). docs/complex.md lists the
// definitions.

// complexUnaryMath maps the unary opcodes that keep a complex type.
var complexUnaryMath = map[hlo.Opcode]func(complex128) complex128{
	hlo.OpNegate: func(z complex128) complex128 { return complex(-real(z), -imag(z)) },
	hlo.OpSign:   complexSign,
	hlo.OpExp:    cmplx.Exp,
	hlo.OpExpm1:  complexExpm1,
	hlo.OpLog:    cmplx.Log,
	hlo.OpLog1p:  complexLog1p,
	hlo.OpSqrt:   cmplx.Sqrt,
	hlo.OpRsqrt:  func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) },
	hlo.OpTanh:   complexTanh,
	hlo.OpSin:    cmplx.Sin,
	hlo.OpCos:    cmplx.Cos,
	hlo.OpTan:    complexTan,
}

// complexRealMath maps the unary opcodes whose result of a complex operand is real.
var complexRealMath = map[hlo.Opcode]func(complex128) float64{
	hlo.OpAbs:  cmplx.Abs, // hypot: +inf when either part is infinite, even beside a NaN
	hlo.OpReal: func(z complex128) float64 { return real(z) },
	hlo.OpImag: func(z complex128) float64 { return imag(z) },
}

// complexBinaryMath maps the binary opcodes on complex operands. Division is Go's
// (Smith's algorithm, with C99's recovery of infinities and zeros from NaN
// results); the product is the textbook one, written out so that no compiler fuses
// it into FMAs on some machines and not others.
var complexBinaryMath = map[hlo.Opcode]func(x, y complex128) complex128{
	hlo.OpAdd:      func(x, y complex128) complex128 { return x + y },
	hlo.OpSubtract: func(x, y complex128) complex128 { return x - y },
	hlo.OpMultiply: complexMul,
	hlo.OpDivide:   func(x, y complex128) complex128 { return x / y },
	hlo.OpPower:    complexPow,
}

// complexBinaryFor is the element function of a binary op on complex type dt: the
// table's, but for the c64 product, which is the textbook formula in f32 with every
// operation rounded to f32, as XLA and the GPU kernel compute it (in f64 and
// rounded once, a part whose products overflow f32 but cancel would be finite
// here and NaN there).
func complexBinaryFor(op hlo.Opcode, dt hlo.DType) (func(x, y complex128) complex128, bool) {
	if op == hlo.OpMultiply && dt == hlo.C64 {
		return complexMul32, true
	}
	f, ok := complexBinaryMath[op]
	return f, ok
}

func complexMul32(x, y complex128) complex128 {
	a, b, c, d := float32(real(x)), float32(imag(x)), float32(real(y)), float32(imag(y))
	return complex(float64(float32(a*c)-float32(b*d)), float64(float32(a*d)+float32(b*c)))
}

func complexMul(x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	return complex(float64(a*c)-float64(b*d), float64(a*d)+float64(b*c))
}

// complexSign is z/|z|, and z itself (±0 parts kept) where z is 0; NaN parts give
// NaN, and an infinite part gives NaN (inf/inf), as XLA's z/abs(z) does.
func complexSign(z complex128) complex128 {
	if z == 0 {
		return z
	}
	r := cmplx.Abs(z)
	return complex(real(z)/r, imag(z)/r)
}

// complexExpm1 is exp(z) − 1 without the cancellation near 0: the real part
// e^x·cos y − 1 is written expm1(x)·cos y − 2·sin²(y/2). Far from 0 it is exp(z)−1.
func complexExpm1(z complex128) complex128 {
	x, y := real(z), imag(z)
	if math.Abs(x) >= 1 || math.Abs(y) >= 1 || cmplx.IsNaN(z) {
		return cmplx.Exp(z) - 1
	}
	s := math.Sin(y / 2)
	return complex(math.Expm1(x)*math.Cos(y)-2*s*s, math.Exp(x)*math.Sin(y))
}

// complexLog1p is log(1 + z) without the rounding of 1 + z near 0: the real part
// log|1+z| = ½·log1p(2x + x² + y²), the imaginary part atan2(y, 1+x). Far from 0 it
// is log(1+z). At z = ±0 ± 0i the real part is +0 (log 1), the imaginary part z's.
func complexLog1p(z complex128) complex128 {
	x, y := real(z), imag(z)
	if math.Abs(x) >= 0.5 || math.Abs(y) >= 0.5 || cmplx.IsNaN(z) {
		return cmplx.Log(complex(1+x, y)) // not 1 + z, whose +0i would lose y's sign
	}
	return complex(0.5*math.Log1p(x*(2+x)+y*y), math.Atan2(y, 1+x))
}

// complexEqual is compare EQ: both parts equal (a NaN part is unequal to anything;
// −0 equals +0).
func complexEqual(x, y complex128) bool { return real(x) == real(y) && imag(x) == imag(y) }

// roundComplex rounds z to the element type's precision (c64: each part to f32).
func roundComplex(dt hlo.DType, z complex128) complex128 {
	if dt == hlo.C64 {
		return complex(float64(float32(real(z))), float64(float32(imag(z))))
	}
	return z
}
