package cpuref

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// Elements travel between kernels as raw bit patterns, zero-extended to 64 bits, the
// form hlo.Literal.Bits returns. One representation serves every dtype, so an
// element function resolved once per (op, dtype) runs on array elements and on the
// registers of compiled scalar computations alike.

type (
	unaryFunc  func(x uint64) uint64
	binaryFunc func(x, y uint64) uint64
)

// toFloat decodes a floating-point element exactly.
func toFloat(dt hlo.DType, b uint64) float64 {
	switch dt {
	case hlo.F16:
		return float64(hlo.Float16(b).Float32())
	case hlo.BF16:
		return float64(hlo.BFloat16(b).Float32())
	case hlo.F32:
		return float64(math.Float32frombits(uint32(b)))
	case hlo.F64:
		return math.Float64frombits(b)
	}
	return hlo.MinifloatToFloat64(dt, b) // the 8-, 6- and 4-bit floats, exactly
}

// fromFloat rounds v to dt, to nearest even. f16, bf16 and the 8-, 6- and 4-bit
// floats round through float32, as XLA computes them in f32 and rounds back. For +, -, *, / and sqrt of dt-valued
// inputs, computing in float64 and rounding once to float32 gives exactly the
// float32 result (float64 has more than 2*24+2 bits, so the double rounding is
// innocuous), which lets every float kernel compute in float64.
func fromFloat(dt hlo.DType, v float64) uint64 {
	switch dt {
	case hlo.F16:
		return uint64(hlo.F16FromFloat32(float32(v)))
	case hlo.BF16:
		return uint64(hlo.BF16FromFloat32(float32(v)))
	case hlo.F32:
		return uint64(math.Float32bits(float32(v)))
	case hlo.F64:
		return math.Float64bits(v)
	}
	return hlo.MinifloatFromFloat64(dt, float64(float32(v)))
}

// widthMask has the low dt.Bits() bits set.
func widthMask(dt hlo.DType) uint64 {
	if dt.Bits() >= 64 {
		return math.MaxUint64
	}
	return 1<<dt.Bits() - 1
}

// signExtend reads the low dt.Bits() bits as a two's complement integer.
func signExtend(dt hlo.DType, b uint64) int64 {
	shift := 64 - dt.Bits()
	return int64(b<<shift) >> shift
}

// floatUnaryFunc lifts a float64 function to dt: decode, apply, round to dt.
func floatUnaryFunc(dt hlo.DType, f func(float64) float64) unaryFunc {
	return func(x uint64) uint64 { return fromFloat(dt, f(toFloat(dt, x))) }
}

// floatBinaryFunc lifts a float64 function of two arguments to dt.
func floatBinaryFunc(dt hlo.DType, f func(x, y float64) float64) binaryFunc {
	return func(x, y uint64) uint64 { return fromFloat(dt, f(toFloat(dt, x), toFloat(dt, y))) }
}

func boolBits(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// floatMax is IEEE 754-2019 maximum, the StableHLO definition: NaN if either operand
// is NaN (the first NaN operand is returned), and -0 < +0, so it is commutative.
func floatMax(x, y float64) float64 {
	switch {
	case x != x:
		return x
	case y != y:
		return y
	case x == y && x == 0: // ±0: +0 unless both are -0
		if math.Signbit(x) {
			return y
		}
		return x
	case x >= y:
		return x
	}
	return y
}

// floatMin is IEEE 754-2019 minimum: NaN-propagating, -0 < +0.
func floatMin(x, y float64) float64 {
	switch {
	case x != x:
		return x
	case y != y:
		return y
	case x == y && x == 0: // ±0: -0 unless both are +0
		if math.Signbit(x) {
			return x
		}
		return y
	case x <= y:
		return x
	}
	return y
}

// floatSign is XLA's sign: NaN stays NaN, ±0 stays ±0, otherwise ±1.
func floatSign(x float64) float64 {
	if x != x || x == 0 {
		return x
	}
	return math.Copysign(1, x)
}

// logistic is XLA's 1/(1+exp(-x)); exp overflow gives 1/inf = 0 for large -x.
func logistic(x float64) float64 { return 1 / (1 + exp(-x)) }

// Ln2 split so that k·ln2Hi is exact for |k| < 2^11 (fdlibm's split).
const (
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// exp is e^x. Go's amd64 math.Exp returns +Inf from x ≈ 709.4361 on, below the
// true overflow threshold 709.78271289338397 (exp(709.5) is 1.3549863193146328e308);
// there the result is 2^1023 · e^(x − 1023·ln2), reduced exactly in two parts.
func exp(x float64) float64 {
	if x < 709 || x > 710 {
		return math.Exp(x)
	}
	return math.Ldexp(math.Exp((x-1023*ln2Hi)-1023*ln2Lo), 1023)
}

func rsqrt(x float64) float64 { return 1 / math.Sqrt(x) }

func negate(x float64) float64 { return -x }

// atan2 is C's atan2, which is odd in y for every x. Go's math.Atan2 returns +π for
// y < 0 < -x when y/x underflows to +0 (atan2(-5e-324, -2.5)); the magnitude is
// right, so the sign is taken from y.
func atan2(y, x float64) float64 {
	r := math.Atan2(y, x)
	if r != r {
		return r
	}
	return math.Copysign(r, y)
}

// minNormal64 is the smallest positive normal float64, 2^-1022.
const minNormal64 = 0x1p-1022

// log is C's log. Go's math.Log on amd64 (an assembly routine) ignores subnormal
// inputs' leading zeros: log(5e-324) comes out -709.09 instead of -744.44. A subnormal
// x is scaled by 2^54 into the normal range first.
func log(x float64) float64 {
	if x > 0 && x < minNormal64 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}
