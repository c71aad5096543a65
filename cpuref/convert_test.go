package cpuref

import (
	"math"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func convertOp(t *testing.T, x *hlo.Literal, dt hlo.DType) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Convert(xs[0], dt) }, x)
}

func bitcastOp(t *testing.T, x *hlo.Literal, dt hlo.DType) *hlo.Literal {
	t.Helper()
	return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.BitcastConvert(xs[0], dt) }, x)
}

// convertCase is one conversion: in converted to type to gives exactly want.
type convertCase struct {
	name string
	in   *hlo.Literal
	to   hlo.DType
	want *hlo.Literal
}

func checkConverts(t *testing.T, cases []convertCase) {
	t.Helper()
	for _, c := range cases {
		assertLit(t, c.want, convertOp(t, c.in, c.to), c.name)
	}
}

func TestConvertFloatToInt(t *testing.T) {
	// Truncation toward zero, NaN → 0, saturation at the type's bounds.
	checkConverts(t, []convertCase{
		{"f32→s32", vec(float32(1.9), -1.9, nan32, inf32, -inf32, 3e9, -3e9, 2147483520, -2147483648),
			hlo.S32, vec(int32(1), -1, 0, math.MaxInt32, math.MinInt32, math.MaxInt32, math.MinInt32, 2147483520, math.MinInt32)},
		{"f32→u8", vec(float32(-1), 255.9, 256, nan32, 3.7, -0.5), hlo.U8, vec(uint8(0), 255, 255, 0, 3, 0)},
		{"f32→s8", vec(float32(200), -200, -128.9, 127.9), hlo.S8, vec(int8(127), -128, -128, 127)},
		{"f64→s64", vec(9.3e18, -9.3e18, 9.2e18, -0.9, nan64), hlo.S64,
			vec(int64(math.MaxInt64), math.MinInt64, 9200000000000000000, 0, 0)},
		{"f32→u64", vec(float32(1<<63), 2e19, -5), hlo.U64, vec(uint64(1<<63), math.MaxUint64, 0)},
		{"f32→u32", vec(float32(1<<32), 4294967040), hlo.U32, vec(uint32(math.MaxUint32), 4294967040)},
		{"f16→s8", f16s(300, -0.5, nan32, -inf32), hlo.S8, vec(int8(127), 0, 0, -128)},
		{"bf16→s32", bf16s(1e10, -2.5), hlo.S32, vec(int32(math.MaxInt32), -2)},
	})
}

func TestConvertToFloat(t *testing.T) {
	checkConverts(t, []convertCase{
		// Ties round to even; 2^24+1 is the first integer f32 cannot hold.
		{"s32→f32", vec(int32(16777217), 16777219, -16777217, math.MaxInt32), hlo.F32,
			vec(float32(16777216), 16777220, -16777216, 2147483648)},
		// One rounding, straight to f32: via f64 the low 1 would be lost first and the
		// result would tie to even (2^60) instead of rounding up.
		{"s64→f32 rounds once", vec(int64(1<<60 + 1<<36 + 1)), hlo.F32, vec(float32(1152921642045800448))},
		{"u32→f32", vec(uint32(math.MaxUint32)), hlo.F32, vec(float32(4294967296))},
		{"u64→f64", vec(uint64(math.MaxUint64)), hlo.F64, vec(18446744073709551616.0)},
		{"s32→f16", vec(int32(65519), 65520, -70000, 2049), hlo.F16, f16s(65504, inf32, -inf32, 2048)},
		{"s32→bf16", vec(int32(257), 259), hlo.BF16, bf16s(256, 260)},
		{"f32→f16", vec(float32(65520), 65519, 1e-8, 3e-8, nan32, negZ32, float32(1)/3), hlo.F16,
			f16s(inf32, 65504, 0, 1.0/(1<<24), nan32, negZ32, 0.333251953125)},
		{"f32→bf16", vec(float32(1.00390625), 1.01171875, -inf32), hlo.BF16, bf16s(1, 1.015625, -inf32)},
		{"f64→f32", vec(1e-46, 3.5e38, 0.1, negZ64), hlo.F32, vec(float32(0), inf32, float32(0.1), negZ32)},
		{"f64→f16", vec(65504.0, 1e-300), hlo.F16, f16s(65504, 0)},
		{"f16→f32 is exact", f16s(0.333251953125, 65504, negZ32, inf32), hlo.F32,
			vec(float32(0.333251953125), 65504, negZ32, inf32)},
		{"bf16→f16", bf16s(1.015625, 3e38), hlo.F16, f16s(1.015625, inf32)},
		{"f32→f64", vec(float32(0.1)), hlo.F64, vec(float64(float32(0.1)))},
		{"pred→f32", vec(true, false), hlo.F32, vec(float32(1), 0)},
		{"pred→bf16", vec(true), hlo.BF16, bf16s(1)},
	})
}

func TestConvertIntegersAndPred(t *testing.T) {
	checkConverts(t, []convertCase{
		{"s32→s8 wraps", vec(int32(300), -129, 127), hlo.S8, vec(int8(44), 127, 127)},
		{"u8→s8", vec(uint8(200)), hlo.S8, vec(int8(-56))},
		{"s8→u32 sign-extends", vec(int8(-1)), hlo.U32, vec(uint32(math.MaxUint32))},
		{"s8→s64", vec(int8(-1), -128), hlo.S64, vec(int64(-1), -128)},
		{"u32→s64 zero-extends", vec(uint32(math.MaxUint32)), hlo.S64, vec(int64(4294967295))},
		{"s64→u16", vec(int64(-1), 65537), hlo.U16, vec(uint16(65535), 1)},
		{"f32→pred", vec(float32(0), negZ32, nan32, 0.5, -inf32), hlo.Pred, vec(false, false, true, true, true)},
		{"s32→pred", vec(int32(0), 2, -1), hlo.Pred, vec(false, true, true)},
		{"u8→pred", vec(uint8(0), 128), hlo.Pred, vec(false, true)},
		{"pred→s32", vec(true, false), hlo.S32, vec(int32(1), 0)},
		{"pred→u8", vec(true), hlo.U8, vec(uint8(1))},
		{"same type", vec(int16(-7)), hlo.S16, vec(int16(-7))},
	})
}

func TestBitcastConvert(t *testing.T) {
	assertLit(t, vec(uint32(0x3f800000), 0x80000000), bitcastOp(t, vec(float32(1), negZ32), hlo.U32))
	assertLit(t, vec(int32(math.MinInt32)), bitcastOp(t, vec(negZ32), hlo.S32))
	// Little-endian bytes, the narrower type gaining a minor dimension.
	assertLit(t, mat(dims(2, 4), uint8(0), 0, 0x80, 0x3f, 0, 0, 0, 0xc0), bitcastOp(t, vec(float32(1), -2), hlo.U8))
	assertLit(t, vec(uint16(0x0201), 0x0403), bitcastOp(t, mat(dims(2, 2), uint8(1), 2, 3, 4), hlo.U16))
	assertLit(t, vec(int64(4607182418800017408)), bitcastOp(t, vec(1.0), hlo.S64))
	assertLit(t, f16s(1), bitcastOp(t, vec(int16(0x3c00)), hlo.F16))
	assertLit(t, scalar(float32(1)), bitcastOp(t, mat(dims(4), uint8(0), 0, 0x80, 0x3f), hlo.F32))
}
