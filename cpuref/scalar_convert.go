package cpuref

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// compareFor resolves compare on operands of type dt; the result is pred bits.
// Floats compare with IEEE semantics (every comparison with NaN is false except NE;
// -0 == +0) unless the type is TOTALORDER: -NaN < -Inf < … < -0 < +0 < … < +Inf <
// +NaN. Integers compare as signed or unsigned by their type, or as the explicit
// SIGNED/UNSIGNED type says; pred compares as unsigned (false < true).
func compareFor(dir hlo.ComparisonDirection, ct hlo.CompareType, dt hlo.DType) (binaryFunc, error) {
	if !dt.IsValid() {
		return nil, fmt.Errorf("compare of %v", dt)
	}
	if dt.IsComplex() {
		return complexCompareWord(dir, dt)
	}
	test, err := directionTest(dir)
	if err != nil {
		return nil, err
	}
	if dt.IsFloat() {
		switch ct {
		case hlo.CompareTotalOrder:
			return func(x, y uint64) uint64 {
				return boolBits(test(cmp3(totalOrderKey(dt, x), totalOrderKey(dt, y))))
			}, nil
		case hlo.CompareDefault, hlo.CompareFloat:
			return floatCompare(dir, dt), nil
		}
		return nil, fmt.Errorf("compare type %v on %v operands", ct, dt)
	}
	if ct == hlo.CompareFloat {
		return nil, fmt.Errorf("compare type FLOAT on %v operands", dt)
	}
	signed := dt.IsSigned()
	if ct == hlo.CompareSigned || ct == hlo.CompareUnsigned {
		signed = ct == hlo.CompareSigned
	}
	if signed {
		return func(x, y uint64) uint64 {
			return boolBits(test(cmp3(signExtend(dt, x), signExtend(dt, y))))
		}, nil
	}
	m := widthMask(dt)
	return func(x, y uint64) uint64 { return boolBits(test(cmp3(x&m, y&m))) }, nil
}

// directionTest turns a three-way comparison result into the direction's answer.
func directionTest(dir hlo.ComparisonDirection) (func(c int) bool, error) {
	switch dir {
	case hlo.CmpEQ:
		return func(c int) bool { return c == 0 }, nil
	case hlo.CmpNE:
		return func(c int) bool { return c != 0 }, nil
	case hlo.CmpLT:
		return func(c int) bool { return c < 0 }, nil
	case hlo.CmpLE:
		return func(c int) bool { return c <= 0 }, nil
	case hlo.CmpGT:
		return func(c int) bool { return c > 0 }, nil
	case hlo.CmpGE:
		return func(c int) bool { return c >= 0 }, nil
	}
	return nil, fmt.Errorf("unknown comparison direction %v", dir)
}

func cmp3[T int64 | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// floatCompare is IEEE: unordered operands (a NaN) make every direction false but NE.
func floatCompare(dir hlo.ComparisonDirection, dt hlo.DType) binaryFunc {
	return func(x, y uint64) uint64 {
		a, b := toFloat(dt, x), toFloat(dt, y)
		var r bool
		switch dir {
		case hlo.CmpEQ:
			r = a == b
		case hlo.CmpNE:
			r = a != b
		case hlo.CmpLT:
			r = a < b
		case hlo.CmpLE:
			r = a <= b
		case hlo.CmpGT:
			r = a > b
		case hlo.CmpGE:
			r = a >= b
		}
		return boolBits(r)
	}
}

// totalOrderKey maps float bits to a signed integer whose order is the IEEE total
// order: negative values have their magnitude bits flipped so that a larger
// magnitude sorts lower, and -0 sorts just below +0.
func totalOrderKey(dt hlo.DType, x uint64) int64 {
	if dt.IsLowPrecisionFloat() {
		// The f8e8m0fnu and fnuz encodings are not sign-magnitude orders: order by
		// value (a fnuz NaN, 0x80, decodes as -NaN and sorts first).
		return totalOrderKey(hlo.F64, math.Float64bits(toFloat(dt, x)))
	}
	v := signExtend(dt, x)
	if v < 0 {
		v ^= int64(widthMask(dt) >> 1)
	}
	return v
}

// convertFor resolves convert from one element type to another, following XLA:
// float→int truncates toward zero, saturates out-of-range values to the type's
// min/max and maps NaN to 0; int→float and float→narrower float round to nearest
// even (f16/bf16 through float32); int→int wraps; anything→pred is x != 0 (NaN is
// true); pred→number is 0 or 1.
func convertFor(from, to hlo.DType) (unaryFunc, error) {
	switch {
	case !from.IsValid() || !to.IsValid():
		return nil, fmt.Errorf("convert from %v to %v", from, to)
	case from == to && from != hlo.C128:
		return func(x uint64) uint64 { return x }, nil
	case from.IsComplex() || to.IsComplex():
		return complexConvertWord(from, to)
	case to == hlo.Pred && from.IsFloat():
		return func(x uint64) uint64 { return boolBits(toFloat(from, x) != 0) }, nil
	case to == hlo.Pred:
		m := widthMask(from)
		return func(x uint64) uint64 { return boolBits(x&m != 0) }, nil
	case from.IsFloat() && to.IsLowPrecisionFloat():
		// One rounding from the exact source value, as XLA's evaluator (ml_dtypes)
		// converts; fromFloat's float32 step would round f64 sources twice.
		return func(x uint64) uint64 { return hlo.MinifloatFromFloat64(to, toFloat(from, x)) }, nil
	case from.IsFloat() && to.IsFloat():
		return func(x uint64) uint64 { return fromFloat(to, toFloat(from, x)) }, nil
	case from.IsFloat():
		return floatToInt(from, to), nil
	case to.IsFloat():
		return intToFloat(from, to), nil
	}
	return intToInt(from, to), nil
}

func intToInt(from, to hlo.DType) unaryFunc {
	m := widthMask(to)
	if from.IsSigned() {
		return func(x uint64) uint64 { return uint64(signExtend(from, x)) & m }
	}
	return func(x uint64) uint64 { return x & m }
}

// intToFloat rounds once to float64 for f64 and once to float32 otherwise (then to
// f16/bf16, as XLA's evaluator converts through float).
func intToFloat(from, to hlo.DType) unaryFunc {
	signed := from.IsSigned()
	return func(x uint64) uint64 {
		if to == hlo.F64 {
			if signed {
				return fromFloat(to, float64(signExtend(from, x)))
			}
			return fromFloat(to, float64(x))
		}
		var f float32
		if signed {
			f = float32(signExtend(from, x))
		} else {
			f = float32(x)
		}
		return fromFloat(to, float64(f))
	}
}

// floatToInt truncates toward zero, with NaN → 0 and saturation at the bounds.
func floatToInt(from, to hlo.DType) unaryFunc {
	w := to.Bits()
	if to.IsUnsigned() {
		limit := math.Ldexp(1, w) // 2^w, the first value out of range
		return func(x uint64) uint64 {
			v := toFloat(from, x)
			switch {
			case v != v || v <= 0:
				return 0
			case v >= limit:
				return widthMask(to)
			}
			return uint64(v)
		}
	}
	limit := math.Ldexp(1, w-1) // 2^(w-1)
	m := widthMask(to)
	return func(x uint64) uint64 {
		v := toFloat(from, x)
		switch {
		case v != v:
			return 0
		case v >= limit:
			return m >> 1 // INT_MAX
		case v <= -limit:
			return (m >> 1) + 1 // INT_MIN
		}
		return uint64(int64(v)) & m
	}
}
