package cpuref

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/vkxla/vkxla/hlo"
)

// floatUnaryMath maps float unary opcodes to their float64 definitions. Results are
// rounded to the element type once, so transcendental functions of f32, f16 and bf16
// are (nearly) correctly rounded — more accurate than XLA's polynomial
// approximations; comparisons against other backends use a tolerance.
var floatUnaryMath = map[hlo.Opcode]func(float64) float64{
	hlo.OpNegate:           negate,
	hlo.OpAbs:              math.Abs,
	hlo.OpSign:             floatSign,
	hlo.OpExp:              exp,
	hlo.OpExpm1:            math.Expm1,
	hlo.OpLog:              log,
	hlo.OpLog1p:            math.Log1p,
	hlo.OpSqrt:             math.Sqrt,
	hlo.OpRsqrt:            rsqrt,
	hlo.OpCbrt:             math.Cbrt,
	hlo.OpTanh:             math.Tanh,
	hlo.OpLogistic:         logistic,
	hlo.OpSin:              sin,
	hlo.OpCos:              cos,
	hlo.OpFloor:            math.Floor,
	hlo.OpCeil:             math.Ceil,
	hlo.OpRoundNearestEven: math.RoundToEven,
	hlo.OpRoundNearestAfz:  math.Round, // half away from zero
	hlo.OpTan:              tan,
	hlo.OpErf:              math.Erf,
	hlo.OpReal:             func(x float64) float64 { return x },
	hlo.OpImag:             func(float64) float64 { return 0 }, // a real number's imaginary part, NaN's too
}

// unaryFor resolves a unary elementwise op on operand type dt. The result is in the
// op's output type (pred for is-finite, dt otherwise).
func unaryFor(op hlo.Opcode, dt hlo.DType) (unaryFunc, error) {
	if !op.Info().Types.Allows(dt) {
		return nil, fmt.Errorf("%v does not apply to %v (needs %v)", op, dt, op.Info().Types)
	}
	if dt.IsComplex() {
		return complexUnaryWord(op, dt)
	}
	if dt.IsFloat() {
		if op == hlo.OpIsFinite {
			return func(x uint64) uint64 {
				v := toFloat(dt, x)
				return boolBits(!math.IsInf(v, 0) && !math.IsNaN(v))
			}, nil
		}
		if f, ok := floatUnaryMath[op]; ok {
			return floatUnaryFunc(dt, f), nil
		}
	} else if f := intUnary(op, dt); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("%v is not defined for %v", op, dt)
}

// intUnary gives the integer and pred unary ops; results wrap to the width.
func intUnary(op hlo.Opcode, dt hlo.DType) unaryFunc {
	m, w := widthMask(dt), dt.Bits()
	switch op {
	case hlo.OpNegate: // wraps: negate(INT_MIN) = INT_MIN
		return func(x uint64) uint64 { return -x & m }
	case hlo.OpAbs:
		if dt.IsUnsigned() {
			return func(x uint64) uint64 { return x }
		}
		return func(x uint64) uint64 { // abs(INT_MIN) = INT_MIN
			if signExtend(dt, x) < 0 {
				return -x & m
			}
			return x
		}
	case hlo.OpSign:
		return intSign(dt)
	case hlo.OpNot:
		if dt == hlo.Pred {
			return func(x uint64) uint64 { return boolBits(x == 0) }
		}
		return func(x uint64) uint64 { return ^x & m }
	case hlo.OpPopcnt:
		return func(x uint64) uint64 { return uint64(bits.OnesCount64(x & m)) }
	case hlo.OpClz:
		return func(x uint64) uint64 { return uint64(w - bits.Len64(x&m)) }
	}
	return nil
}

func intSign(dt hlo.DType) unaryFunc {
	m := widthMask(dt)
	return func(x uint64) uint64 {
		switch {
		case x&m == 0:
			return 0
		case dt.IsSigned() && signExtend(dt, x) < 0:
			return m // -1
		}
		return 1
	}
}

// floatBinaryMath maps float binary opcodes to their float64 definitions.
var floatBinaryMath = map[hlo.Opcode]func(x, y float64) float64{
	hlo.OpAdd:       func(x, y float64) float64 { return x + y },
	hlo.OpSubtract:  func(x, y float64) float64 { return x - y },
	hlo.OpMultiply:  func(x, y float64) float64 { return x * y },
	hlo.OpDivide:    func(x, y float64) float64 { return x / y },
	hlo.OpRemainder: math.Mod, // C fmod: sign of the dividend, x%0 = NaN
	hlo.OpMaximum:   floatMax,
	hlo.OpMinimum:   floatMin,
	hlo.OpPower:     pow, // C pow: pow(x, 0) = 1 and pow(1, y) = 1 even for NaN
	hlo.OpAtan2:     atan2,
}

// binaryFor resolves a binary elementwise op whose operands are both of type dt.
func binaryFor(op hlo.Opcode, dt hlo.DType) (binaryFunc, error) {
	if !op.Info().Types.Allows(dt) {
		return nil, fmt.Errorf("%v does not apply to %v (needs %v)", op, dt, op.Info().Types)
	}
	if dt.IsComplex() {
		return complexBinaryWord(op, dt)
	}
	if dt.IsFloat() {
		if f, ok := floatBinaryMath[op]; ok {
			return floatBinaryFunc(dt, f), nil
		}
	} else if f := predArithmetic(op, dt); f != nil {
		return f, nil
	} else if f := intBinary(op, dt); f != nil {
		return f, nil
	}
	return nil, fmt.Errorf("%v is not defined for %v", op, dt)
}

// predArithmetic gives add and maximum (or), multiply and minimum (and) on pred, as
// StableHLO's specification defines them; not a 1-bit wrapping sum (xor).
func predArithmetic(op hlo.Opcode, dt hlo.DType) binaryFunc {
	if dt != hlo.Pred {
		return nil
	}
	switch op {
	case hlo.OpAdd, hlo.OpMaximum:
		return func(x, y uint64) uint64 { return x | y }
	case hlo.OpMultiply, hlo.OpMinimum:
		return func(x, y uint64) uint64 { return x & y }
	}
	return nil
}

// intBinary gives the integer and pred binary ops. Arithmetic wraps (two's
// complement); the cases C leaves undefined follow XLA (see docs/cpuref.md).
func intBinary(op hlo.Opcode, dt hlo.DType) binaryFunc {
	m := widthMask(dt)
	switch op {
	case hlo.OpAdd:
		return func(x, y uint64) uint64 { return (x + y) & m }
	case hlo.OpSubtract:
		return func(x, y uint64) uint64 { return (x - y) & m }
	case hlo.OpMultiply:
		return func(x, y uint64) uint64 { return (x * y) & m }
	case hlo.OpAnd:
		return func(x, y uint64) uint64 { return x & y }
	case hlo.OpOr:
		return func(x, y uint64) uint64 { return x | y }
	case hlo.OpXor:
		return func(x, y uint64) uint64 { return x ^ y }
	case hlo.OpDivide:
		return intDivide(dt)
	case hlo.OpRemainder:
		return intRemainder(dt)
	case hlo.OpMaximum, hlo.OpMinimum:
		return intMinMax(dt, op == hlo.OpMaximum)
	case hlo.OpPower:
		return intPower(dt)
	case hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		return intShift(op, dt)
	}
	return nil
}

// intDivide truncates toward zero. x/0 = -1 (all bits set, so UINT_MAX for unsigned)
// and INT_MIN/-1 = INT_MIN, as XLA defines them.
func intDivide(dt hlo.DType) binaryFunc {
	m := widthMask(dt)
	if dt.IsUnsigned() {
		return func(x, y uint64) uint64 {
			if y == 0 {
				return m
			}
			return x / y
		}
	}
	return func(x, y uint64) uint64 {
		if y == 0 {
			return m
		}
		// In int64, INT_MIN/-1 of a narrower type is +2^(w-1), which wraps back to
		// INT_MIN; for s64, Go defines MinInt64 / -1 = MinInt64.
		return uint64(signExtend(dt, x)/signExtend(dt, y)) & m
	}
}

// intRemainder has the sign of the dividend. x%0 = x and INT_MIN%-1 = 0, as XLA.
func intRemainder(dt hlo.DType) binaryFunc {
	m := widthMask(dt)
	if dt.IsUnsigned() {
		return func(x, y uint64) uint64 {
			if y == 0 {
				return x
			}
			return x % y
		}
	}
	return func(x, y uint64) uint64 {
		if y == 0 {
			return x
		}
		return uint64(signExtend(dt, x)%signExtend(dt, y)) & m
	}
}

func intMinMax(dt hlo.DType, isMax bool) binaryFunc {
	return func(x, y uint64) uint64 {
		less := x < y
		if dt.IsSigned() {
			less = signExtend(dt, x) < signExtend(dt, y)
		}
		if less == isMax {
			return y
		}
		return x
	}
}

// intPower is XLA's integer power: x^0 = 1 and 1^y = 1; a negative exponent of a
// signed type gives 0 (1 for base 1, and 0 also for base -1); otherwise
// exponentiation by squaring with wrap-around.
func intPower(dt hlo.DType) binaryFunc {
	m := widthMask(dt)
	return func(x, y uint64) uint64 {
		if dt.IsSigned() && signExtend(dt, y) < 0 {
			return boolBits(x == 1)
		}
		result, base := uint64(1), x
		for e := y; e != 0; e >>= 1 {
			if e&1 == 1 {
				result *= base
			}
			base *= base
		}
		return result & m
	}
}

// intShift: the amount is read as unsigned, so negative amounts are out of range;
// an amount >= the bit width gives 0 for shift-left and shift-right-logical and the
// sign fill (0 or -1) for shift-right-arithmetic, as XLA.
func intShift(op hlo.Opcode, dt hlo.DType) binaryFunc {
	m, w := widthMask(dt), uint64(dt.Bits())
	switch op {
	case hlo.OpShiftLeft:
		return func(x, y uint64) uint64 {
			if y >= w {
				return 0
			}
			return (x << y) & m
		}
	case hlo.OpShiftRightLogical:
		return func(x, y uint64) uint64 {
			if y >= w {
				return 0
			}
			return (x & m) >> y
		}
	}
	return func(x, y uint64) uint64 {
		if y >= w {
			y = w - 1 // shifting by w-1 yields the sign fill
		}
		return uint64(signExtend(dt, x)>>y) & m
	}
}
