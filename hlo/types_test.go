package hlo

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the core IR types: dtypes, shapes, the op table, attributes, literals
// and the 16-bit float conversions.

func TestDTypes(t *testing.T) {
	cases := []struct {
		dt                        DType
		name                      string
		size                      int
		float, signed, unsigned   bool
		integer, numeric, isValid bool
	}{
		{Pred, "pred", 1, false, false, false, false, false, true},
		{S8, "s8", 1, false, true, false, true, true, true},
		{S16, "s16", 2, false, true, false, true, true, true},
		{S32, "s32", 4, false, true, false, true, true, true},
		{S64, "s64", 8, false, true, false, true, true, true},
		{U8, "u8", 1, false, false, true, true, true, true},
		{U16, "u16", 2, false, false, true, true, true, true},
		{U32, "u32", 4, false, false, true, true, true, true},
		{U64, "u64", 8, false, false, true, true, true, true},
		{F16, "f16", 2, true, false, false, false, true, true},
		{BF16, "bf16", 2, true, false, false, false, true, true},
		{F32, "f32", 4, true, false, false, false, true, true},
		{F64, "f64", 8, true, false, false, false, true, true},
		{Tuple, "tuple", 0, false, false, false, false, false, false},
		{Invalid, "invalid", 0, false, false, false, false, false, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.name, c.dt.String())
		assert.Equal(t, c.size, c.dt.Size(), c.name)
		assert.Equal(t, 8*c.size, c.dt.Bits(), c.name)
		assert.Equal(t, c.float, c.dt.IsFloat(), c.name)
		assert.Equal(t, c.signed, c.dt.IsSigned(), c.name)
		assert.Equal(t, c.unsigned, c.dt.IsUnsigned(), c.name)
		assert.Equal(t, c.integer, c.dt.IsInteger(), c.name)
		assert.Equal(t, c.numeric, c.dt.IsNumeric(), c.name)
		assert.Equal(t, c.isValid, c.dt.IsValid(), c.name)
	}
	assert.Len(t, AllDTypes, 13)
	assert.Equal(t, "dtype(200)", DType(200).String())
	assert.Equal(t, 0, DType(200).Size())
}

func TestParseDType(t *testing.T) {
	for _, dt := range AllDTypes {
		got, err := ParseDType(dt.String())
		require.NoError(t, err)
		assert.Equal(t, dt, got)
	}
	for _, bad := range []string{"tuple", "invalid", "f8", "F32", ""} {
		_, err := ParseDType(bad)
		assert.Error(t, err, bad)
	}
}

func TestTypeClassAllows(t *testing.T) {
	assert.True(t, AnyType.Allows(Pred))
	assert.False(t, AnyType.Allows(Tuple))
	assert.True(t, Numeric.Allows(U8))
	assert.False(t, Numeric.Allows(Pred))
	assert.True(t, FloatOnly.Allows(BF16))
	assert.False(t, FloatOnly.Allows(S32))
	assert.True(t, IntOnly.Allows(U64))
	assert.False(t, IntOnly.Allows(Pred))
	assert.True(t, IntOrPred.Allows(Pred))
	assert.False(t, IntOrPred.Allows(F16))
	assert.True(t, SignedNumeric.Allows(S8))
	assert.True(t, SignedNumeric.Allows(F64))
	assert.False(t, SignedNumeric.Allows(U32))
	assert.Equal(t, "a floating-point type", FloatOnly.String())
}

func TestShapes(t *testing.T) {
	s := MakeShape(F32, 2, 3, 4)
	assert.Equal(t, "f32[2,3,4]", s.String())
	assert.Equal(t, 3, s.Rank())
	assert.Equal(t, int64(24), s.NumElements())
	assert.Equal(t, int64(96), s.ByteSize())
	assert.Equal(t, []int64{12, 4, 1}, s.Strides())
	assert.True(t, s.IsArray())
	assert.False(t, s.IsScalar())
	assert.False(t, s.IsTuple())

	sc := Scalar(Pred)
	assert.Equal(t, "pred[]", sc.String())
	assert.True(t, sc.IsScalar())
	assert.Equal(t, int64(1), sc.NumElements())
	assert.Equal(t, []int64{}, sc.Strides())

	empty := MakeShape(F16, 3, 0)
	assert.Equal(t, int64(0), empty.NumElements())
	assert.Equal(t, int64(0), empty.ByteSize())
	assert.Equal(t, int64(30), MakeShape(F16, 3, 5).ByteSize())

	tup := MakeTuple(Scalar(F32), MakeShape(S32, 4), MakeTuple())
	assert.Equal(t, "(f32[], s32[4], ())", tup.String())
	assert.True(t, tup.IsTuple())
	assert.False(t, tup.IsArray())
	assert.Equal(t, int64(20), tup.ByteSize())
}

func TestShapeEquality(t *testing.T) {
	s := MakeShape(F32, 2, 3)
	assert.True(t, s.Equal(MakeShape(F32, 2, 3)))
	assert.False(t, s.Equal(MakeShape(F32, 3, 2)))
	assert.False(t, s.Equal(MakeShape(F32, 2, 3, 1)))
	assert.False(t, s.Equal(MakeShape(S32, 2, 3)))
	assert.True(t, s.SameDims(MakeShape(S32, 2, 3)))
	assert.False(t, s.SameDims(MakeShape(S32, 6)))
	assert.Equal(t, MakeShape(Pred, 2, 3), s.WithDType(Pred))

	a := MakeTuple(s, Scalar(S32))
	assert.True(t, a.Equal(MakeTuple(MakeShape(F32, 2, 3), Scalar(S32))))
	assert.False(t, a.Equal(MakeTuple(s)))
	assert.False(t, a.Equal(MakeTuple(s, Scalar(S64))))
	assert.False(t, MakeTuple().Equal(Scalar(F32)))

	c := a.Clone()
	c.Elems[0].Dims[0] = 9
	assert.Equal(t, int64(2), a.Elems[0].Dims[0], "Clone must not share dims")
	dims := []int64{4, 5}
	m := MakeShape(F32, dims...)
	dims[0] = 1
	assert.Equal(t, int64(4), m.Dims[0], "MakeShape must copy dims")
}

func TestOpTableRows(t *testing.T) {
	names := map[string]bool{}
	for _, op := range AllOpcodes() {
		info := op.Info()
		assert.NotEmpty(t, info.Name)
		assert.False(t, names[info.Name], "duplicate name %s", info.Name)
		names[info.Name] = true
		got, ok := LookupOpcode(info.Name)
		assert.True(t, ok)
		assert.Equal(t, op, got)
		assert.Equal(t, info.Name, op.String())
		if info.Kind == KindUnary {
			assert.Equal(t, 1, info.Arity, info.Name)
		}
		if info.Kind == KindBinary {
			assert.Equal(t, 2, info.Arity, info.Name)
		}
		if info.Commutative {
			assert.Equal(t, KindBinary, info.Kind, info.Name)
		}
	}
	assert.Equal(t, int(numOpcodes)-1, len(AllOpcodes()))
	_, ok := LookupOpcode("frobnicate")
	assert.False(t, ok)
	for _, op := range AllOpcodes() { // expanded ops, and only they, name their pass
		assert.Equal(t, op.Info().Kind == KindExpanded, op.Info().ExpandedBy != "", op.String())
	}
	assert.Equal(t, "opcode(0)", OpInvalid.String())
	assert.Equal(t, "opcode(250)", Opcode(250).String())
	assert.Equal(t, "invalid", Opcode(250).Info().Name)
	assert.Equal(t, []string{"branch_computations*"}, OpConditional.Info().Called)
}

func TestComparisonAttributes(t *testing.T) {
	for d := CmpEQ; d <= CmpGE; d++ {
		got, err := ParseComparisonDirection(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	_, err := ParseComparisonDirection("LTE")
	assert.Error(t, err)
	for _, ct := range []CompareType{CompareFloat, CompareTotalOrder, CompareSigned, CompareUnsigned} {
		got, err := ParseCompareType(ct.String())
		require.NoError(t, err)
		assert.Equal(t, ct, got)
	}
	_, err = ParseCompareType("")
	assert.Error(t, err, "the default type has no text form")
	w := NewWindowDim(3)
	assert.Equal(t, WindowDim{Size: 3, Stride: 1, WindowDilation: 1, BaseDilation: 1}, w)
}

func TestFusionKinds(t *testing.T) {
	names := map[FusionKind]string{FusionLoop: "kLoop", FusionInput: "kInput", FusionOutput: "kOutput", FusionCustom: "kCustom"}
	for k, name := range names {
		assert.Equal(t, name, k.String())
		assert.True(t, k.IsValid())
		got, err := ParseFusionKind(name)
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	assert.Equal(t, FusionLoop, Attributes{}.FusionKind, "the zero value is kLoop")
	assert.Equal(t, "fusionkind(4)", FusionKind(4).String())
	assert.False(t, FusionKind(4).IsValid())
	for _, bad := range []string{"", "loop", "kloop", "LOOP", "kScatter"} {
		_, err := ParseFusionKind(bad)
		assert.ErrorContains(t, err, "unknown fusion kind", bad)
	}
	info := OpFusion.Info()
	assert.Equal(t, "fusion", info.Name)
	assert.Equal(t, KindControl, info.Kind)
	assert.Equal(t, Variadic, info.Arity)
	assert.Equal(t, []string{"calls"}, info.Called)
	assert.Equal(t, OpCall+1, OpFusion, "fusion follows call in the op table")
}

func TestF16Rounding(t *testing.T) {
	cases := []struct {
		name string
		in   float32
		want Float16
	}{
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"max finite", 65504, 0x7bff},
		{"just below the overflow tie", 65519, 0x7bff},
		{"overflow tie rounds to even = inf", 65520, 0x7c00},
		{"large overflow", 1e10, 0x7c00},
		{"negative overflow", -1e10, 0xfc00},
		{"smallest subnormal", 0x1p-24, 0x0001},
		{"half the smallest subnormal ties to zero", 0x1p-25, 0x0000},
		{"above half the smallest subnormal", 0x1.8p-25, 0x0001},
		{"subnormal tie to even 2", 0x1.8p-24, 0x0002},
		{"subnormal tie to even 2 from below", 0x1.4p-23, 0x0002}, // 2.5 × 2^-24
		{"smallest normal", 0x1p-14, 0x0400},
		{"largest subnormal rounds up to normal", 0x1.ffffp-15, 0x0400},
		{"tie between 1 and next goes to 1", 1 + 0x1p-11, 0x3c00},
		{"tie between odd and even goes to even", 1 + 3*0x1p-11, 0x3c02},
		{"above the tie rounds up", 1 + 0x1p-11 + 0x1p-20, 0x3c01},
		{"one tenth", 0.1, 0x2e66},
		{"zero", 0, 0x0000},
		{"negative zero", float32(math.Copysign(0, -1)), 0x8000},
		{"inf", float32(math.Inf(1)), 0x7c00},
		{"-inf", float32(math.Inf(-1)), 0xfc00},
		{"underflow", 1e-10, 0x0000},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, F16FromFloat32(c.in), "%s: %g", c.name, c.in)
	}
}

func TestF16NaNAndWidening(t *testing.T) {
	for _, bits := range []uint32{0x7fc00000, 0x7f800001, 0xffc00000, 0x7fa00000} {
		h := F16FromFloat32(math.Float32frombits(bits))
		assert.Equal(t, Float16(0x7c00), h&0x7c00, "NaN %#x keeps the exponent all ones", bits)
		assert.NotZero(t, h&0x03ff, "NaN %#x keeps a non-zero mantissa", bits)
		assert.True(t, math.IsNaN(float64(h.Float32())))
	}
	widen := map[Float16]float32{
		0x0001: 0x1p-24, 0x03ff: 1023 * 0x1p-24, 0x0400: 0x1p-14, 0x3c00: 1, 0x3555: 0.333251953125,
		0x7bff: 65504, 0xc000: -2, 0x8001: -0x1p-24,
	}
	for h, want := range widen {
		assert.Equal(t, want, h.Float32(), "%#04x", uint16(h))
	}
	assert.True(t, math.IsInf(float64(Float16(0x7c00).Float32()), 1))
	assert.True(t, math.IsInf(float64(Float16(0xfc00).Float32()), -1))
	assert.True(t, math.Signbit(float64(Float16(0x8000).Float32())))
	// Every finite f16 value widens and rounds back to itself.
	for h := 0; h < 0x10000; h++ {
		f := Float16(h)
		if f&0x7c00 == 0x7c00 {
			continue
		}
		if got := F16FromFloat32(f.Float32()); got != f {
			t.Fatalf("%#04x widens and rounds back to %#04x", h, uint16(got))
		}
	}
}

func TestBF16Rounding(t *testing.T) {
	cases := []struct {
		name string
		in   uint32 // float32 bits
		want BFloat16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"three", 0x40400000, 0x4040},
		{"tie to even (down)", 0x3f808000, 0x3f80},
		{"tie to even (up)", 0x3f818000, 0x3f82},
		{"above the tie", 0x3f808001, 0x3f81},
		{"below the tie", 0x3f807fff, 0x3f80},
		{"max float32 overflows to inf", 0x7f7fffff, 0x7f80},
		{"negative zero", 0x80000000, 0x8000},
		{"inf", 0x7f800000, 0x7f80},
		{"quiet NaN", 0x7fc00000, 0x7fc0},
		{"signalling NaN stays NaN", 0x7f800001, 0x7fc0},
		{"negative NaN", 0xffc00001, 0xffc0},
		{"smallest float32 subnormal rounds to zero", 0x00000001, 0x0000},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, BF16FromFloat32(math.Float32frombits(c.in)), c.name)
	}
	assert.Equal(t, float32(1), BFloat16(0x3f80).Float32())
	assert.Equal(t, float32(-2), BFloat16(0xc000).Float32())
	assert.True(t, math.IsNaN(float64(BFloat16(0x7fc0).Float32())))
}

func TestLiteralRoundTrip(t *testing.T) {
	checkRoundTrip(t, []bool{true, false, true})
	checkRoundTrip(t, []int8{-128, -1, 0, 127})
	checkRoundTrip(t, []int16{-32768, 1, 32767})
	checkRoundTrip(t, []int32{math.MinInt32, -7, math.MaxInt32})
	checkRoundTrip(t, []int64{math.MinInt64, 3, math.MaxInt64})
	checkRoundTrip(t, []uint8{0, 200, 255})
	checkRoundTrip(t, []uint16{0, 65535})
	checkRoundTrip(t, []uint32{0, math.MaxUint32})
	checkRoundTrip(t, []uint64{0, math.MaxUint64})
	checkRoundTrip(t, []Float16{0x3c00, 0x7bff, 0x8000})
	checkRoundTrip(t, []BFloat16{0x3f80, 0xc000})
	checkRoundTrip(t, []float32{1.5, -0, float32(math.Inf(1))})
	checkRoundTrip(t, []float64{math.Pi, -1e300})
}

func checkRoundTrip[T Native](t *testing.T, values []T) {
	t.Helper()
	l, err := FromSlice([]int64{int64(len(values))}, values)
	require.NoError(t, err)
	assert.Equal(t, DTypeOf[T](), l.DType())
	assert.Len(t, l.Bytes(), len(values)*DTypeOf[T]().Size())
	got, err := Values[T](l)
	require.NoError(t, err)
	assert.Equal(t, values, got)
}

func TestLiteralElementAccess(t *testing.T) {
	s8 := MustFromSlice([]int64{2}, []int8{-1, 5})
	assert.Equal(t, uint64(0xff), s8.Bits(0), "little-endian two's complement")
	assert.Equal(t, int64(-1), s8.Int64(0))
	assert.Equal(t, -1.0, s8.Float64(0))
	s8.SetInt64(1, 300)
	assert.Equal(t, int64(44), s8.Int64(1), "300 wraps to 300-256")

	u8 := NewLiteral(MakeShape(U8, 1))
	u8.SetInt64(0, -1)
	assert.Equal(t, uint64(255), u8.Uint64(0))
	assert.Equal(t, int64(255), u8.Int64(0))

	p := NewLiteral(MakeShape(Pred, 2))
	p.SetInt64(0, 5)
	assert.Equal(t, uint64(1), p.Bits(0), "pred stores 0 or 1")
	assert.True(t, p.Bool(0))
	assert.False(t, p.Bool(1))

	h := NewLiteral(MakeShape(F16, 2))
	h.SetFloat64(0, 65520)
	h.SetFloat64(1, 1)
	assert.Equal(t, uint64(0x7c00), h.Bits(0))
	assert.Equal(t, uint64(0x3c00), h.Bits(1))
	assert.True(t, math.IsInf(h.Float64(0), 1))

	b := NewLiteral(Scalar(BF16))
	b.SetInt64(0, 3)
	assert.Equal(t, uint64(0x4040), b.Bits(0), "ints stored in a float literal convert")
	f := MustFromSlice([]int64{1}, []float32{-2.75})
	assert.Equal(t, int64(-2), f.Int64(0), "floats read as ints truncate toward zero")

	bytes := MustFromSlice([]int64{2}, []uint16{0x0102, 0x0304}).Bytes()
	assert.Equal(t, []byte{0x02, 0x01, 0x04, 0x03}, bytes)
}

func TestLiteralConstruction(t *testing.T) {
	_, err := FromSlice([]int64{2, 2}, []float32{1, 2, 3})
	assert.ErrorContains(t, err, "needs 4 values, got 3")
	_, err = Values[int32](MustFromSlice(nil, []float32{1}))
	assert.ErrorContains(t, err, "literal is f32, not s32")
	_, err = LiteralFromBytes(MakeShape(F32, 2), make([]byte, 7))
	assert.ErrorContains(t, err, "needs 8 bytes, got 7")
	_, err = LiteralFromBytes(MakeTuple(), nil)
	assert.Error(t, err)
	l, err := LiteralFromBytes(MakeShape(S16, 1), []byte{0xfe, 0xff})
	require.NoError(t, err)
	assert.Equal(t, int64(-2), l.Int64(0))

	sc := ScalarLiteral(int64(-9))
	assert.Equal(t, Scalar(S64), sc.Shape())
	assert.Equal(t, 1, sc.NumElements())

	tup := TupleLiteral(sc, NewLiteral(MakeShape(F32, 2)))
	assert.Equal(t, "(s64[], f32[2])", tup.Shape().String())
	require.Len(t, tup.Elems(), 2)
	assert.Equal(t, "(s64[], f32[2]) (-9, {0, 0})", tup.String())

	zeros := NewLiteral(MakeTuple(Scalar(Pred), MakeShape(U8, 0)))
	require.Len(t, zeros.Elems(), 2)
	assert.False(t, zeros.Elems()[0].Bool(0))

	orig := MustFromSlice([]int64{2}, []int32{1, 2})
	c := orig.Clone()
	c.SetInt64(0, 9)
	assert.Equal(t, int64(1), orig.Int64(0), "Clone must not share data")
}

func TestLiteralText(t *testing.T) {
	assert.Equal(t, "s32[2,2] {{1, 2}, {3, 4}}", MustFromSlice([]int64{2, 2}, []int32{1, 2, 3, 4}).String())
	assert.Equal(t, "pred[] true", ScalarLiteral(true).String())
	assert.Equal(t, "f32[4] {nan, inf, -inf, 0.1}",
		MustFromSlice([]int64{4}, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0.1}).String())
	assert.Equal(t, "f64[1] {0.1}", MustFromSlice([]int64{1}, []float64{0.1}).String())
	assert.Equal(t, "f16[1] {0.099975586}", MustFromSlice([]int64{1}, []Float16{0x2e66}).String())
	assert.Equal(t, "u64[1] {18446744073709551615}", MustFromSlice([]int64{1}, []uint64{math.MaxUint64}).String())
	assert.Equal(t, "f32[0] {}", NewLiteral(MakeShape(F32, 0)).String())
	assert.Equal(t, "-0", FormatElement(ScalarLiteral(float32(math.Copysign(0, -1))), 0))
}
