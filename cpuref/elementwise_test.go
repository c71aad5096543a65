package cpuref

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkxla/vkxla/hlo"
)

type elemCase struct {
	name string
	op   hlo.Opcode
	in   []*hlo.Literal
	want *hlo.Literal
}

func runElemCases(t *testing.T, cases []elemCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got *hlo.Literal
			if len(c.in) == 1 {
				got = evalUnaryOp(t, c.op, c.in[0])
			} else {
				got = evalBinaryOp(t, c.op, c.in[0], c.in[1])
			}
			assertLit(t, c.want, got)
		})
	}
}

func un(name string, op hlo.Opcode, in, want *hlo.Literal) elemCase {
	return elemCase{name, op, []*hlo.Literal{in}, want}
}

func bin(name string, op hlo.Opcode, x, y, want *hlo.Literal) elemCase {
	return elemCase{name, op, []*hlo.Literal{x, y}, want}
}

func TestFloatUnary(t *testing.T) {
	runElemCases(t, []elemCase{
		un("negate", hlo.OpNegate, vec(float32(0), negZ32, 1.5, inf32), vec(negZ32, 0, -1.5, -inf32)),
		un("negate nan", hlo.OpNegate, vec(nan32), vec(nan32)),
		un("abs", hlo.OpAbs, vec(negZ32, -2, nan32, -inf32), vec(float32(0), 2, nan32, inf32)),
		un("sign", hlo.OpSign, vec(negZ32, 0, -3, 5e-45, nan32, -inf32), vec(negZ32, 0, -1, 1, nan32, -1)),
		un("exp", hlo.OpExp, vec(float32(0), -inf32, inf32, nan32, 100), vec(float32(1), 0, inf32, nan32, inf32)),
		un("expm1", hlo.OpExpm1, vec(float32(0), negZ32, -inf32, 1e-10), vec(float32(0), negZ32, -1, 1e-10)),
		un("log", hlo.OpLog, vec(float32(1), 0, negZ32, -1, inf32), vec(float32(0), -inf32, -inf32, nan32, inf32)),
		un("log1p", hlo.OpLog1p, vec(float32(0), negZ32, -1, -2), vec(float32(0), negZ32, -inf32, nan32)),
		un("sqrt", hlo.OpSqrt, vec(float32(4), negZ32, -1, inf32, 2), vec(float32(2), negZ32, nan32, inf32, float32(math.Sqrt2))),
		un("rsqrt", hlo.OpRsqrt, vec(float32(4), 0, negZ32, inf32, -1), vec(float32(0.5), inf32, -inf32, 0, nan32)),
		un("cbrt", hlo.OpCbrt, vec(float32(-8), 27, negZ32, inf32), vec(float32(-2), 3, negZ32, inf32)),
		un("tanh", hlo.OpTanh, vec(float32(0), negZ32, inf32, -inf32, nan32, 30), vec(float32(0), negZ32, 1, -1, nan32, 1)),
		un("logistic", hlo.OpLogistic, vec(float32(0), inf32, -inf32, -1000, nan32), vec(float32(0.5), 1, 0, 0, nan32)),
		un("sine", hlo.OpSin, vec(float32(0), negZ32, inf32, nan32), vec(float32(0), negZ32, nan32, nan32)),
		un("cosine", hlo.OpCos, vec(float32(0), negZ32, inf32), vec(float32(1), 1, nan32)),
		un("floor", hlo.OpFloor, vec(float32(-1.5), 1.5, negZ32, -0.5, inf32), vec(float32(-2), 1, negZ32, -1, inf32)),
		un("ceil", hlo.OpCeil, vec(float32(-1.5), 1.5, -0.5, 0.5), vec(float32(-1), 2, negZ32, 1)),
		un("round-nearest-even", hlo.OpRoundNearestEven, vec(float32(0.5), 1.5, 2.5, -0.5, -2.5, 2.4, -2.6),
			vec(float32(0), 2, 2, negZ32, -2, 2, -3)),
		un("round-nearest-afz", hlo.OpRoundNearestAfz, vec(float32(0.5), 1.5, 2.5, -0.5, -2.5, 2.4, -2.6, 0.49999997, -0.3, inf32),
			vec(float32(1), 2, 3, -1, -3, 2, -3, 0, negZ32, inf32)),
		un("real of a real number", hlo.OpReal, vec(float32(-1.5), negZ32, inf32, nan32), vec(float32(-1.5), negZ32, inf32, nan32)),
		un("imag of a real number", hlo.OpImag, vec(float32(-1.5), negZ32, inf32, nan32), vec(float32(0), 0, 0, 0)),
		un("tan", hlo.OpTan, vec(float32(0), negZ32, inf32, nan32), vec(float32(0), negZ32, nan32, nan32)),
		un("erf", hlo.OpErf, vec(float32(0), negZ32, inf32, -inf32, nan32, 10), vec(float32(0), negZ32, 1, -1, nan32, 1)),
		un("is-finite", hlo.OpIsFinite, vec(float32(1), inf32, -inf32, nan32, negZ32), vec(true, false, false, false, true)),
		// tan(x) = x + x³/3 + …: 6.629942524223542e-08 for x = 6.629942524223533e-08
		// (Go's math.Tan returned x).
		un("f64 tan of a tiny x", hlo.OpTan, vec(6.629942524223533e-08, 1e-7), vec(6.629942524223542e-08, 1.0000000000000033e-07)),
		// Tabulated values (Abramowitz & Stegun table 7.1): erf(1), erf(0.5), erf(2).
		un("f64 erf", hlo.OpErf, vec(1.0, 0.5, -2), vec(0.8427007929497149, 0.5204998778130465, -0.9953222650189527)),
		un("f64 sqrt", hlo.OpSqrt, vec(2.0, negZ64), vec(math.Sqrt2, negZ64)),
		un("f64 is-finite", hlo.OpIsFinite, vec(math.MaxFloat64, inf64, nan64), vec(true, false, false)),
		un("f16 negate", hlo.OpNegate, f16s(1, 0), f16s(-1, negZ32)),
		un("f16 exp overflows at 65520", hlo.OpExp, f16s(11, 12), f16s(59872, inf32)),
		un("bf16 sqrt", hlo.OpSqrt, bf16s(4, 2), bf16s(2, 1.4140625)),
	})
}

// Transcendental results are checked against Go's float64 math rounded to the type,
// with a tolerance (cpuref promises near-correct rounding, not bit-exact libm).
func TestFloatTranscendentalsMatchDefinitions(t *testing.T) {
	xs := []float32{-3.5, -1, -0.25, 0.1, 0.5, 1, 2, 7.25}
	fns := map[hlo.Opcode]func(float64) float64{
		hlo.OpExp: math.Exp, hlo.OpExpm1: math.Expm1, hlo.OpTanh: math.Tanh, hlo.OpSin: math.Sin,
		hlo.OpCos: math.Cos, hlo.OpCbrt: math.Cbrt, hlo.OpTan: math.Tan, hlo.OpErf: math.Erf,
		hlo.OpLogistic: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	}
	for op, f := range fns {
		want := make([]float32, len(xs))
		for i, x := range xs {
			want[i] = float32(f(float64(x)))
		}
		got := evalUnaryOp(t, op, vec(xs...))
		assert.NoError(t, hlo.LiteralsClose(got, vec(want...), 0, 1e-6), "%v", op)
	}
	pos := []float32{0.1, 0.5, 1, 2, 7.25, 1e30}
	for op, f := range map[hlo.Opcode]func(float64) float64{hlo.OpLog: math.Log, hlo.OpLog1p: math.Log1p,
		hlo.OpRsqrt: func(x float64) float64 { return 1 / math.Sqrt(x) }} {
		want := make([]float32, len(pos))
		for i, x := range pos {
			want[i] = float32(f(float64(x)))
		}
		assert.NoError(t, hlo.LiteralsClose(evalUnaryOp(t, op, vec(pos...)), vec(want...), 0, 1e-6), "%v", op)
	}
}

func TestIntegerUnary(t *testing.T) {
	runElemCases(t, []elemCase{
		un("s8 negate wraps", hlo.OpNegate, vec(int8(-128), 127, 0, 5), vec(int8(-128), -127, 0, -5)),
		un("s8 abs(INT_MIN) = INT_MIN", hlo.OpAbs, vec(int8(-128), -5, 7), vec(int8(-128), 5, 7)),
		un("s8 sign", hlo.OpSign, vec(int8(-128), 0, 9), vec(int8(-1), 0, 1)),
		un("s8 not", hlo.OpNot, vec(int8(0), -1, 0x0f), vec(int8(-1), 0, -16)),
		un("s8 popcnt", hlo.OpPopcnt, vec(int8(0), -1, 0x55, -128), vec(int8(0), 8, 4, 1)),
		un("s8 clz", hlo.OpClz, vec(int8(0), 1, -1, 0x10), vec(int8(8), 7, 0, 3)),
		un("u8 negate", hlo.OpNegate, vec(uint8(1), 0), vec(uint8(255), 0)),
		un("u8 clz", hlo.OpClz, vec(uint8(0), 255), vec(uint8(8), 0)),
		un("s16 not", hlo.OpNot, vec(int16(0x00ff)), vec(int16(-256))),
		un("s32 clz", hlo.OpClz, vec(int32(0), 1, math.MinInt32), vec(int32(32), 31, 0)),
		un("s32 popcnt", hlo.OpPopcnt, vec(int32(-1), 0x0f0f), vec(int32(32), 8)),
		un("s32 abs", hlo.OpAbs, vec(int32(math.MinInt32), -3), vec(int32(math.MinInt32), 3)),
		un("u64 clz", hlo.OpClz, vec(uint64(0), 1<<63), vec(uint64(64), 0)),
		un("s64 negate", hlo.OpNegate, vec(int64(math.MinInt64), 1), vec(int64(math.MinInt64), -1)),
		un("u32 not", hlo.OpNot, vec(uint32(0)), vec(uint32(math.MaxUint32))),
		un("pred not", hlo.OpNot, vec(true, false), vec(false, true)),
	})
}

func TestFloatBinary(t *testing.T) {
	runElemCases(t, []elemCase{
		bin("add", hlo.OpAdd, vec(inf32, negZ32, negZ32, 1, 3e38), vec(-inf32, negZ32, 0, 1.0/(1<<24), 3e38),
			vec(nan32, negZ32, 0, 1, inf32)), // 1 + 2^-24 ties to even: 1
		bin("subtract", hlo.OpSubtract, vec(float32(0), negZ32, 1), vec(float32(0), 0, 1), vec(float32(0), negZ32, 0)),
		bin("multiply", hlo.OpMultiply, vec(negZ32, inf32, 1e30, 3), vec(float32(5), 0, 1e30, -0.5),
			vec(negZ32, nan32, inf32, -1.5)),
		bin("divide", hlo.OpDivide, vec(float32(1), -1, 1, 0, 1, -6), vec(float32(0), 0, negZ32, 0, 3, 4),
			vec(inf32, -inf32, -inf32, nan32, float32(1)/float32(3), -1.5)),
		bin("remainder is fmod", hlo.OpRemainder, vec(float32(5.5), -5.5, 5, 1, inf32, 1, negZ32, 7),
			vec(float32(2), 2, -3, 0, 1, inf32, 1, nan32), vec(float32(1.5), -1.5, 2, nan32, nan32, 1, negZ32, nan32)),
		bin("maximum", hlo.OpMaximum, vec(nan32, 1, negZ32, 0, -inf32, 2, negZ32),
			vec(float32(1), nan32, 0, negZ32, -1, 3, negZ32), vec(nan32, nan32, 0, 0, -1, 3, negZ32)),
		bin("minimum", hlo.OpMinimum, vec(nan32, 1, negZ32, 0, inf32, 2, float32(0)),
			vec(float32(1), nan32, 0, negZ32, 1, 3, 0), vec(nan32, nan32, negZ32, negZ32, 1, 2, 0)),
		bin("power", hlo.OpPower, vec(float32(2), nan32, 1, 0, negZ32, -8, 4, 0, -2, -1),
			vec(float32(10), 0, nan32, -1, -1, 1.0/3, 0.5, 0, 3, inf32),
			vec(float32(1024), 1, 1, inf32, -inf32, nan32, 2, 1, -8, 1)),
		bin("atan2", hlo.OpAtan2, vec(float32(0), negZ32, 1, 0, negZ32), vec(negZ32, negZ32, 0, 1, 1),
			vec(float32(math.Pi), -float32(math.Pi), float32(math.Pi/2), 0, negZ32)),
		// atan2 is odd in y for every x, as C's: when y/x underflows to zero (a
		// subnormal y over a larger x), the quadrant still follows y's sign.
		bin("f64 atan2 with underflowing quotient", hlo.OpAtan2,
			vec(-5e-324, 5e-324, -5e-324, 5e-324, -5e-324, negZ64, -1e-300),
			vec(-2.5, -2.5, 2.5, 2.5, -1e300, -1e-300, -1e300),
			vec(-math.Pi, math.Pi, negZ64, 0, -math.Pi, -math.Pi, -math.Pi)),
		bin("f64 atan2 large quotient", hlo.OpAtan2, vec(-1e300, 1e300, -1e300), vec(-1e-300, -1e-300, 1e-300),
			vec(-math.Pi/2, math.Pi/2, -math.Pi/2)),
		bin("f64 divide", hlo.OpDivide, vec(1.0, -1), vec(3.0, negZ64), vec(1.0/3, inf64)),
		bin("f64 add keeps precision", hlo.OpAdd, vec(1.0), vec(1e-16), vec(1.0)),
		bin("f64 add", hlo.OpAdd, vec(1.0), vec(2.220446049250313e-16), vec(1.0000000000000002)),
		// f16 is computed in f32 and rounded to f16: spacing at 1 is 2^-10.
		bin("f16 add rounds to even", hlo.OpAdd, f16s(1, 1, 65504, 60000), f16s(1.0/2048, 3.0/2048, 32, 4000),
			f16s(1, 1+2.0/1024, inf32, 64000)),
		bin("f16 divide", hlo.OpDivide, f16s(1, 1, 0), f16s(0, 3, 0), f16s(inf32, 0.333251953125, nan32)),
		bin("f16 maximum", hlo.OpMaximum, f16s(nan32, negZ32), f16s(1, 0), f16s(nan32, 0)),
		// bf16 spacing at 1 is 2^-7, at 256 it is 2.
		bin("bf16 add rounds to even", hlo.OpAdd, bf16s(1, 256, 256), bf16s(1.0/256, 1, 3), bf16s(1, 256, 260)),
		bin("bf16 multiply", hlo.OpMultiply, bf16s(3, 1e38), bf16s(0.5, 1e10), bf16s(1.5, inf32)),
	})
}

func TestIntegerBinary(t *testing.T) {
	runElemCases(t, []elemCase{
		bin("s8 add wraps", hlo.OpAdd, vec(int8(127), -128, 5), vec(int8(1), -1, -7), vec(int8(-128), 127, -2)),
		bin("s8 subtract wraps", hlo.OpSubtract, vec(int8(-128), 0), vec(int8(1), -128), vec(int8(127), -128)),
		bin("s8 multiply wraps", hlo.OpMultiply, vec(int8(16), -128, -3), vec(int8(16), -1, 5), vec(int8(0), -128, -15)),
		bin("s8 divide", hlo.OpDivide, vec(int8(7), -7, 7, -128, 0, -128), vec(int8(2), 2, 0, -1, 0, 1),
			vec(int8(3), -3, -1, -128, -1, -128)),
		bin("s8 remainder", hlo.OpRemainder, vec(int8(7), -7, 7, 7, -128, -128), vec(int8(3), 3, -3, 0, -1, 0),
			vec(int8(1), -1, 1, 7, 0, -128)),
		bin("s8 maximum", hlo.OpMaximum, vec(int8(-1), -128), vec(int8(1), 127), vec(int8(1), 127)),
		bin("s8 minimum", hlo.OpMinimum, vec(int8(-1), -128), vec(int8(1), 127), vec(int8(-1), -128)),
		bin("s8 power", hlo.OpPower, vec(int8(2), 2, 3, 0, 2, 1, -1, -1, -2, 0),
			vec(int8(7), 8, 0, 0, -1, -5, -1, 3, 3, 5), vec(int8(-128), 0, 1, 1, 0, 1, 0, -1, -8, 0)),
		bin("s8 shift-left", hlo.OpShiftLeft, vec(int8(1), 1, 1, 3), vec(int8(7), 8, -1, 2), vec(int8(-128), 0, 0, 12)),
		bin("s8 shift-right-logical", hlo.OpShiftRightLogical, vec(int8(-128), -1, -128, 64),
			vec(int8(7), 8, 1, -3), vec(int8(1), 0, 64, 0)),
		bin("s8 shift-right-arithmetic", hlo.OpShiftRightArithmetic, vec(int8(-128), -128, 64, -16, -1, 100),
			vec(int8(7), 8, 100, 2, -1, 1), vec(int8(-1), -1, 0, -4, -1, 50)),
		bin("s8 and/or/xor", hlo.OpXor, vec(int8(0x0f), -1), vec(int8(0x3c), 0x55), vec(int8(0x33), -86)),
		bin("s8 and", hlo.OpAnd, vec(int8(0x0f), -1), vec(int8(0x3c), 0x55), vec(int8(0x0c), 0x55)),
		bin("s8 or", hlo.OpOr, vec(int8(0x0f), -128), vec(int8(0x30), 1), vec(int8(0x3f), -127)),
		bin("u8 add wraps", hlo.OpAdd, vec(uint8(255), 200), vec(uint8(1), 100), vec(uint8(0), 44)),
		bin("u8 subtract wraps", hlo.OpSubtract, vec(uint8(0)), vec(uint8(1)), vec(uint8(255))),
		bin("u8 divide by zero is all ones", hlo.OpDivide, vec(uint8(7), 200), vec(uint8(0), 3), vec(uint8(255), 66)),
		bin("u8 remainder by zero is the dividend", hlo.OpRemainder, vec(uint8(7), 200), vec(uint8(0), 3), vec(uint8(7), 2)),
		bin("u8 maximum is unsigned", hlo.OpMaximum, vec(uint8(200)), vec(uint8(100)), vec(uint8(200))),
		bin("u8 power wraps", hlo.OpPower, vec(uint8(2), 3), vec(uint8(8), 5), vec(uint8(0), 243)),
		bin("u8 shift-right-logical", hlo.OpShiftRightLogical, vec(uint8(255), 255), vec(uint8(4), 8), vec(uint8(15), 0)),
		bin("u8 shift-right-arithmetic fills the top bit", hlo.OpShiftRightArithmetic, vec(uint8(0x80), 0x80),
			vec(uint8(1), 9), vec(uint8(0xc0), 0xff)),
		bin("s32 divide", hlo.OpDivide, vec(int32(math.MinInt32), 5), vec(int32(-1), 0), vec(int32(math.MinInt32), -1)),
		bin("s32 remainder", hlo.OpRemainder, vec(int32(math.MinInt32)), vec(int32(-1)), vec(int32(0))),
		bin("s32 shift by 32", hlo.OpShiftLeft, vec(int32(1), 1), vec(int32(32), 31), vec(int32(0), math.MinInt32)),
		bin("s32 multiply wraps", hlo.OpMultiply, vec(int32(65536)), vec(int32(65536)), vec(int32(0))),
		bin("s64 divide", hlo.OpDivide, vec(int64(math.MinInt64), 9), vec(int64(-1), 0), vec(int64(math.MinInt64), -1)),
		bin("s64 remainder", hlo.OpRemainder, vec(int64(math.MinInt64), 9), vec(int64(-1), 0), vec(int64(0), 9)),
		bin("s64 shift", hlo.OpShiftRightArithmetic, vec(int64(math.MinInt64)), vec(int64(63)), vec(int64(-1))),
		bin("u64 divide by zero", hlo.OpDivide, vec(uint64(5)), vec(uint64(0)), vec(uint64(math.MaxUint64))),
		bin("u64 add wraps", hlo.OpAdd, vec(uint64(math.MaxUint64)), vec(uint64(2)), vec(uint64(1))),
		bin("u16 multiply wraps", hlo.OpMultiply, vec(uint16(300)), vec(uint16(300)), vec(uint16(90000%65536))),
		bin("pred and", hlo.OpAnd, vec(true, true, false), vec(true, false, false), vec(true, false, false)),
		// StableHLO: add and maximum are or on pred, multiply and minimum and (true+true is true, not 0).
		bin("pred add", hlo.OpAdd, vec(true, true, false, false), vec(true, false, true, false), vec(true, true, true, false)),
		bin("pred maximum", hlo.OpMaximum, vec(true, true, false, false), vec(true, false, true, false), vec(true, true, true, false)),
		bin("pred multiply", hlo.OpMultiply, vec(true, true, false, false), vec(true, false, true, false), vec(true, false, false, false)),
		bin("pred minimum", hlo.OpMinimum, vec(true, true, false, false), vec(true, false, true, false), vec(true, false, false, false)),
		bin("pred or", hlo.OpOr, vec(true, true, false), vec(true, false, false), vec(true, true, false)),
		bin("pred xor", hlo.OpXor, vec(true, true, false), vec(true, false, false), vec(false, true, false)),
	})
}

func TestElementwiseOnEmptyAndScalar(t *testing.T) {
	empty := mat[float32](dims(0, 3))
	assertLit(t, mat[float32](dims(0, 3)), evalBinaryOp(t, hlo.OpAdd, empty, empty))
	assertLit(t, scalar(int32(-3)), evalUnaryOp(t, hlo.OpNegate, scalar(int32(3))))
	assertLit(t, mat(dims(2, 2), int32(6), 8, 10, 12),
		evalBinaryOp(t, hlo.OpAdd, mat(dims(2, 2), int32(1), 2, 3, 4), mat(dims(2, 2), int32(5), 6, 7, 8)))
}

func compareOp(t *testing.T, dir hlo.ComparisonDirection, ct hlo.CompareType, x, y *hlo.Literal) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction {
		return b.CompareTyped(xs[0], xs[1], dir, ct)
	}, x, y)
}

func TestCompareFloatIEEE(t *testing.T) {
	a := vec(float32(1), nan32, negZ32, 1, -inf32, nan32)
	b := vec(float32(2), 1, 0, nan32, -inf32, nan32)
	want := map[hlo.ComparisonDirection]*hlo.Literal{
		hlo.CmpEQ: vec(false, false, true, false, true, false),
		hlo.CmpNE: vec(true, true, false, true, false, true),
		hlo.CmpLT: vec(true, false, false, false, false, false),
		hlo.CmpLE: vec(true, false, true, false, true, false),
		hlo.CmpGT: vec(false, false, false, false, false, false),
		hlo.CmpGE: vec(false, false, true, false, true, false),
	}
	for dir, w := range want {
		assertLit(t, w, compareOp(t, dir, hlo.CompareDefault, a, b), "%v", dir)
		assertLit(t, w, compareOp(t, dir, hlo.CompareFloat, a, b), "%v FLOAT", dir)
	}
}

func TestCompareTotalOrder(t *testing.T) {
	negNaN := math.Float32frombits(0xffc00000)
	a := vec(negZ32, nan32, negNaN, nan32, 1, -inf32)
	b := vec(float32(0), 1, -inf32, nan32, inf32, negNaN)
	assertLit(t, vec(true, false, true, false, true, false), compareOp(t, hlo.CmpLT, hlo.CompareTotalOrder, a, b))
	assertLit(t, vec(false, false, false, true, false, false), compareOp(t, hlo.CmpEQ, hlo.CompareTotalOrder, a, b))
	assertLit(t, vec(false, true, false, false, false, true), compareOp(t, hlo.CmpGT, hlo.CompareTotalOrder, a, b))
	// The same in f16, f64 and bf16 widths.
	assertLit(t, vec(true, true), compareOp(t, hlo.CmpLT, hlo.CompareTotalOrder, f16s(negZ32, 1), f16s(0, nan32)))
	assertLit(t, vec(true, false), compareOp(t, hlo.CmpLT, hlo.CompareTotalOrder, bf16s(negZ32, nan32), bf16s(0, inf32)))
	assertLit(t, vec(true, true), compareOp(t, hlo.CmpLT, hlo.CompareTotalOrder, vec(negZ64, -inf64), vec(0.0, -1)))
}

func TestCompareIntegers(t *testing.T) {
	assertLit(t, vec(true, false, true), compareOp(t, hlo.CmpLT, hlo.CompareDefault, vec(int8(-1), 0, -128), vec(int8(1), 0, 127)))
	assertLit(t, vec(false, true), compareOp(t, hlo.CmpLT, hlo.CompareDefault, vec(uint8(255), 1), vec(uint8(1), 255)))
	assertLit(t, vec(true), compareOp(t, hlo.CmpLT, hlo.CompareSigned, vec(int32(-1)), vec(int32(1))))
	assertLit(t, vec(false), compareOp(t, hlo.CmpLT, hlo.CompareUnsigned, vec(uint32(math.MaxUint32)), vec(uint32(1))))
	assertLit(t, vec(true, false), compareOp(t, hlo.CmpGE, hlo.CompareDefault, vec(int64(math.MaxInt64), -5), vec(int64(math.MinInt64), 5)))
	assertLit(t, vec(true, false), compareOp(t, hlo.CmpLT, hlo.CompareDefault, vec(false, true), vec(true, true)))
	assertLit(t, vec(true, false), compareOp(t, hlo.CmpNE, hlo.CompareDefault, vec(uint32(1), 2), vec(uint32(2), 2)))
}

func TestSelectAndClamp(t *testing.T) {
	out := evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction {
		return b.Select(xs[0], xs[1], xs[2])
	}, vec(true, false, true), vec(float32(1), 2, 3), vec(float32(-1), -2, nan32))
	assertLit(t, vec(float32(1), -2, 3), out)

	clamp := func(lo, x, hi *hlo.Literal) *hlo.Literal {
		return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction {
			return b.Clamp(xs[0], xs[1], xs[2])
		}, lo, x, hi)
	}
	// clamp(0, -0, 1) = min(max(-0, 0), 1) = +0, since maximum orders -0 below +0.
	assertLit(t, vec(float32(0), 0.5, 1, nan32, 0),
		clamp(scalar(float32(0)), vec(float32(-1), 0.5, 2, nan32, negZ32), scalar(float32(1))))
	assertLit(t, vec(int32(5), 1, 3), clamp(vec(int32(5), 0, 0), vec(int32(7), 1, 9), vec(int32(5), 2, 3)))
	assertLit(t, vec(int32(1)), clamp(scalar(int32(5)), vec(int32(3)), scalar(int32(1))), "lo > hi gives hi")
	assertLit(t, vec(nan32, nan32), clamp(vec(nan32, 0), vec(float32(1), 1), vec(float32(2), nan32)))
	assertLit(t, vec(uint8(200)), clamp(scalar(uint8(100)), vec(uint8(250)), scalar(uint8(200))))
}

// TestSubnormalLogAndPow: f64 log and pow of subnormal inputs follow C (Go's amd64
// math.Log mistakes a subnormal's exponent: log(2^-1074) came out -709.09). Expected
// values are exact powers of two or their logarithms, from the definitions
// log(2^k) = k·ln 2 and (2^k)^y = 2^(k·y).
func TestSubnormalLogAndPow(t *testing.T) {
	x := vec(0x1p-1074, 0x1p-1030, 0x1p-1023)
	got := evalUnaryOp(t, hlo.OpLog, x)
	for i, k := range []float64{-1074, -1030, -1023} {
		assert.InEpsilon(t, k*math.Ln2, got.Float64(i), 2e-16, "log(2^%v)", k)
	}

	bases := vec(0x1p-1074, 0x1p-1060, 0x1p-1030, 0x1p-1074, 0x1p-1074, 0x1p-1074, 0x1p-1060)
	exps := vec(0.1, -0.25, 0.75, 0.5, 1.5, -0.5, 3.0)
	want := []float64{-107.4, 265, -772.5, -537, math.Inf(-1), 537, -3180}
	got = evalBinaryOp(t, hlo.OpPower, bases, exps)
	// 3e-14: math.Pow's own accuracy on normal inputs (pow(2^-1000, -0.25) is off
	// by 1.1e-14); the bug was off by orders of magnitude (2^-1074^0.1 = 1.6e-31, not 4.7e-33).
	for i, k := range want {
		assert.InEpsilon(t, math.Exp2(k)+1e-320, got.Float64(i)+1e-320, 3e-14, "pow element %d: 2^%v", i, k)
	}
	assert.Equal(t, 0x1p-537, got.Float64(3), "pow(2^-1074, 0.5) is exact")
	assert.Equal(t, 0.0, got.Float64(4), "pow(2^-1074, 1.5) underflows to 0")
}

// TestExpNearOverflow: f64 exp is finite up to the true threshold
// ln(DBL_MAX) = 709.78271289338397 (Go's amd64 math.Exp gave +Inf from 709.4361 on),
// and logistic of large negative x follows. Expected values are e^x worked out to
// 40 digits from the f64 value of x (Python's decimal: Decimal(float(x)).exp()),
// rounded to f64.
func TestExpNearOverflow(t *testing.T) {
	x := vec(709.436139303104, 709.5, 709.78, 709.7827, 708.0, 709.79)
	want := []float64{1.271161006153651e308, 1.3549863193146328e308, 1.7928227943945155e308,
		1.7976699566638014e308, 3.023383144276055e307}
	got := evalUnaryOp(t, hlo.OpExp, x)
	for i, w := range want {
		assert.InEpsilon(t, w, got.Float64(i), 3e-16, "exp(%v)", x.Float64(i))
	}
	assert.True(t, math.IsInf(got.Float64(5), 1), "exp(709.79) overflows")
	l := evalUnaryOp(t, hlo.OpLogistic, vec(-709.6))
	assert.InEpsilon(t, 6.677834345173433e-309, l.Float64(0), 1e-13, "logistic(-709.6) = 1/(1+e^709.6)")
}
