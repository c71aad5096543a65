package cpuref

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Tests of the low-precision types. Expected values are worked out by hand from the
// formats (hlo/minifloat.go's table) and XLA's rules: float ops compute in f32 and
// round the result to the type; integer ops wrap in the type's width.

// evalLowp evaluates one op of HLO text "op(x, y)" (or "op(x)") on inputs of one type.
func evalLowp(t *testing.T, outDT hlo.DType, op string, n int, inputs ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	params := ""
	args := ""
	for i := range inputs {
		params += fmt.Sprintf("  p%d = %v[%d] parameter(%d)\n", i, inputs[i].DType(), n, i)
		if i > 0 {
			args += ", "
		}
		args += fmt.Sprintf("p%d", i)
	}
	text := fmt.Sprintf("HloModule t\nENTRY e {\n%s  ROOT r = %v[%d] %s(%s)\n}", params, outDT, n, op, args)
	out, err := Eval(parse(t, text), inputs...)
	require.NoError(t, err, text)
	return out
}

func ints(t *testing.T, dt hlo.DType, vals ...int64) *hlo.Literal {
	l, err := hlo.FromInt64s(dt, []int64{int64(len(vals))}, vals)
	require.NoError(t, err)
	return l
}

func floats(t *testing.T, dt hlo.DType, vals ...float64) *hlo.Literal {
	l, err := hlo.FromFloat64s(dt, []int64{int64(len(vals))}, vals)
	require.NoError(t, err)
	for i, v := range vals {
		if !math.IsNaN(v) {
			require.Equal(t, v, l.Float64(i), "test input %v is not a %v value", v, dt)
		}
	}
	return l
}

func int64sOf(l *hlo.Literal) []int64 {
	out := make([]int64, l.NumElements())
	for i := range out {
		out[i] = l.Int64(i)
	}
	return out
}

func bitsOf(l *hlo.Literal) []uint64 {
	out := make([]uint64, l.NumElements())
	for i := range out {
		out[i] = l.Bits(i)
	}
	return out
}

func TestSubByteIntegerArithmeticWraps(t *testing.T) {
	cases := []struct {
		dt     hlo.DType
		op     string
		x, y   []int64
		want   []int64
		reason string
	}{
		{hlo.S4, "add", []int64{7, -8, 5, -3}, []int64{1, -1, 5, -6}, []int64{-8, 7, -6, 7}, "8 → -8, -9 → 7, 10 → -6"},
		{hlo.S4, "subtract", []int64{-8, 7}, []int64{1, -1}, []int64{7, -8}, ""},
		{hlo.S4, "multiply", []int64{3, -8, 4}, []int64{3, -1, 4}, []int64{-7, -8, 0}, "9 → -7, 8 → -8, 16 → 0"},
		{hlo.S4, "divide", []int64{-8, 7, -7}, []int64{-1, 0, 2}, []int64{-8, -1, -3}, "INT_MIN/-1 = INT_MIN, x/0 = -1, truncation"},
		{hlo.S4, "remainder", []int64{-7, 7}, []int64{2, 0}, []int64{-1, 7}, "sign of the dividend, x%0 = x"},
		{hlo.S4, "maximum", []int64{-8, 3}, []int64{7, -1}, []int64{7, 3}, ""},
		{hlo.S4, "shift-left", []int64{1, 1, 3}, []int64{3, 4, 2}, []int64{-8, 0, -4}, "1<<3 = 0b1000, shift ≥ 4 is 0"},
		{hlo.S4, "shift-right-arithmetic", []int64{-8, -8, 4}, []int64{1, 9, 1}, []int64{-4, -1, 2}, ""},
		{hlo.S4, "shift-right-logical", []int64{-8, -1}, []int64{1, 2}, []int64{4, 3}, "0b1000>>1, 0b1111>>2"},
		{hlo.U4, "add", []int64{15, 9}, []int64{1, 9}, []int64{0, 2}, ""},
		{hlo.U4, "multiply", []int64{9, 15}, []int64{2, 15}, []int64{2, 1}, "18 mod 16, 225 mod 16"},
		{hlo.U4, "divide", []int64{15, 7}, []int64{0, 2}, []int64{15, 3}, "x/0 is all ones"},
		{hlo.U4, "subtract", []int64{0}, []int64{1}, []int64{15}, ""},
		{hlo.S2, "add", []int64{1, -2, -1}, []int64{1, -1, 1}, []int64{-2, 1, 0}, ""},
		{hlo.U2, "multiply", []int64{2, 3, 3}, []int64{3, 3, 1}, []int64{2, 1, 3}, "6 mod 4, 9 mod 4"},
		{hlo.U2, "xor", []int64{3, 1}, []int64{1, 1}, []int64{2, 0}, ""},
	}
	for _, c := range cases {
		out := evalLowp(t, c.dt, c.op, len(c.x), ints(t, c.dt, c.x...), ints(t, c.dt, c.y...))
		assert.Equal(t, c.want, int64sOf(out), "%v %s %v %v: %s", c.dt, c.op, c.x, c.y, c.reason)
	}
	neg := evalLowp(t, hlo.S4, "negate", 3, ints(t, hlo.S4, -8, 7, 0))
	assert.Equal(t, []int64{-8, -7, 0}, int64sOf(neg), "negate(INT_MIN) = INT_MIN")
	clz := evalLowp(t, hlo.U4, "count-leading-zeros", 3, ints(t, hlo.U4, 0, 1, 8))
	assert.Equal(t, []int64{4, 3, 0}, int64sOf(clz), "counts within 4 bits")
	pop := evalLowp(t, hlo.S4, "popcnt", 2, ints(t, hlo.S4, -1, 5))
	assert.Equal(t, []int64{4, 2}, int64sOf(pop))
	not := evalLowp(t, hlo.U2, "not", 2, ints(t, hlo.U2, 0, 2))
	assert.Equal(t, []int64{3, 1}, int64sOf(not))
}

func TestSubByteCompareAndSelect(t *testing.T) {
	text := `HloModule t
ENTRY e {
  a = s4[4] parameter(0)
  b = s4[4] parameter(1)
  lt = pred[4] compare(a, b), direction=LT
  ua = u4[4] parameter(2)
  ub = u4[4] parameter(3)
  ult = pred[4] compare(ua, ub), direction=LT
  s = s4[4] select(lt, a, b)
  ROOT t = (pred[4], pred[4], s4[4]) tuple(lt, ult, s)
}`
	out, err := Eval(parse(t, text), ints(t, hlo.S4, -1, 1, -8, 3), ints(t, hlo.S4, 1, -1, 7, 3),
		ints(t, hlo.U4, 15, 1, 8, 3), ints(t, hlo.U4, 1, 15, 7, 3))
	require.NoError(t, err)
	e := out.Elems()
	assert.Equal(t, []int64{1, 0, 1, 0}, int64sOf(e[0]), "signed: -1 < 1, -8 < 7")
	assert.Equal(t, []int64{0, 1, 0, 0}, int64sOf(e[1]), "unsigned: 0xf > 1, 0x1 < 0xf, 0x8 > 0x7")
	assert.Equal(t, []int64{-1, -1, -8, 3}, int64sOf(e[2]), "the smaller of each pair")
}

func TestLowPrecisionFloatArithmetic(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		dt     hlo.DType
		op     string
		x, y   []float64
		want   []uint64
		reason string
	}{
		// f8e4m3fn: 1 = 0x38, 1.125 = 0x39; at 16 the spacing is 2; max 448 = 0x7e.
		{hlo.F8E4M3FN, "add", []float64{1, 448, 448, 1}, []float64{0.0625, 16, 32, 0.1875},
			[]uint64{0x38, 0x7e, 0x7f, 0x3a}, "1.0625 ties to 1 (even); 464 ties to 448 (mantissa 110 is even); 480 overflows to NaN; 1.1875 ties to 1.25"},
		{hlo.F8E4M3FN, "multiply", []float64{16, -16, 0.015625}, []float64{32, 32, 0.015625},
			[]uint64{0x7f, 0xff, 0x00}, "512 → NaN (no inf), -512 → -NaN, 2^-12 is below half of 2^-9: +0"},
		{hlo.F8E4M3FN, "divide", []float64{1, 1, -1}, []float64{3, 0, 0},
			[]uint64{0x2b, 0x7f, 0xff}, "1/3 = 0.333 → 0.34375 (1.011b × 2^-2); 1/0 = inf → NaN; -inf → -NaN"},
		{hlo.F8E4M3FN, "subtract", []float64{1, 0}, []float64{1, 1}, []uint64{0x00, 0xb8}, "+0; -1"},
		{hlo.F8E4M3FN, "maximum", []float64{nan, -1}, []float64{1, -2}, []uint64{0x7f, 0xb8}, "NaN propagates"},
		// f8e5m2: max 57344 = 0x7b, inf = 0x7c; at 57344 the spacing is 8192.
		{hlo.F8E5M2, "add", []float64{57344, 57344, 1}, []float64{4096, 2048, 0.125},
			[]uint64{0x7c, 0x7b, 0x3c}, "61440 ties up to inf (0x7b is odd); 59392 → max; 1.125 ties to 1"},
		{hlo.F8E5M2, "multiply", []float64{-256, 1.5}, []float64{512, 1.5}, []uint64{0xfc, 0x40}, "-inf; 2.25 → 2 (spacing 0.5)"},
		// f8e4m3fnuz: 1 = 0x40, NaN 0x80, no -0; max 240 = 0x7f.
		{hlo.F8E4M3FNUZ, "subtract", []float64{1, 0, -1}, []float64{1, 0, 1}, []uint64{0x00, 0x00, 0xc8},
			"1-1 = +0; 0-0 = +0; -2 = 0xc8"},
		{hlo.F8E4M3FNUZ, "multiply", []float64{240, -0.0078125}, []float64{2, 0.0078125}, []uint64{0x80, 0x00},
			"480 overflows to NaN; -2^-14 underflows to +0, no -0"},
		{hlo.F8E5M2FNUZ, "add", []float64{57344}, []float64{8192}, []uint64{0x80}, "65536 overflows to NaN"},
		{hlo.F8E4M3B11FNUZ, "multiply", []float64{30, 1}, []float64{1, 0.5}, []uint64{0x7f, 0x50}, "30 is max; 0.5 = 2^(10-11)"},
		// f4e2m1fn: 0, 0.5, 1, 1.5, 2, 3, 4, 6; no NaN or inf: overflow saturates.
		{hlo.F4E2M1FN, "add", []float64{6, 4, -6}, []float64{6, 1, -1}, []uint64{0x7, 0x6, 0xf},
			"12 → 6; 5 ties to 4 (even); -7 ties up to -8 → -6"},
		{hlo.F4E2M1FN, "multiply", []float64{1.5, 0.5, 3}, []float64{1.5, 0.5, 0.5}, []uint64{0x4, 0x0, 0x3},
			"2.25 → 2; 0.25 ties to 0; 1.5"},
		{hlo.F6E2M3FN, "add", []float64{7.5, 1}, []float64{7.5, 0.125}, []uint64{0x1f, 0x09}, "15 saturates to 7.5; 1.125"},
		{hlo.F6E3M2FN, "multiply", []float64{28, 0.0625}, []float64{2, 0.5}, []uint64{0x1f, 0x00},
			"56 saturates to 28; 2^-5 ties to 0"},
		// f8e8m0fnu: 2^(e-127); no zero, no negatives; ties between powers of two go up.
		{hlo.F8E8M0FNU, "multiply", []float64{2, 0.5}, []float64{4, 0.5}, []uint64{0x82, 0x7d}, "8 = 2^3, 0.25 = 2^-2"},
		{hlo.F8E8M0FNU, "add", []float64{1, 2}, []float64{2, 4}, []uint64{0x81, 0x82}, "3 ties up to 4 = 2^2; 6 ties up to 8 = 2^3"},
		{hlo.F8E8M0FNU, "subtract", []float64{2, 1}, []float64{2, 2}, []uint64{0xff, 0xff}, "0 and -1 are NaN"},
	}
	for _, c := range cases {
		out := evalLowp(t, c.dt, c.op, len(c.x), floats(t, c.dt, c.x...), floats(t, c.dt, c.y...))
		assert.Equal(t, c.want, bitsOf(out), "%v %s %v %v: %s", c.dt, c.op, c.x, c.y, c.reason)
	}
	neg := evalLowp(t, hlo.F8E4M3FNUZ, "negate", 2, floats(t, hlo.F8E4M3FNUZ, 0, 1))
	assert.Equal(t, []uint64{0x00, 0xc0}, bitsOf(neg), "fnuz: -0 is +0")
	neg = evalLowp(t, hlo.F8E4M3FN, "negate", 2, floats(t, hlo.F8E4M3FN, 0, 1))
	assert.Equal(t, []uint64{0x80, 0xb8}, bitsOf(neg), "fn has -0")
	sq := evalLowp(t, hlo.F8E4M3FN, "sqrt", 3, floats(t, hlo.F8E4M3FN, 2, 4, -1))
	assert.Equal(t, []uint64{0x3b, 0x40, 0xff}, bitsOf(sq), "sqrt 2 = 1.414 → 1.375 (1.011b); 2; sqrt(-1) = -NaN")
	fin := evalLowp(t, hlo.Pred, "is-finite", 3, floats(t, hlo.F8E5M2, 1, math.Inf(1), nan))
	assert.Equal(t, []int64{1, 0, 0}, int64sOf(fin))
}

func TestLowPrecisionFloatCompare(t *testing.T) {
	text := `HloModule t
ENTRY e {
  a = f8e4m3fn[4] parameter(0)
  b = f8e4m3fn[4] parameter(1)
  eq = pred[4] compare(a, b), direction=EQ
  lt = pred[4] compare(a, b), direction=LT, type=TOTALORDER
  ROOT t = (pred[4], pred[4]) tuple(eq, lt)
}`
	negZero := math.Copysign(0, -1)
	out, err := Eval(parse(t, text), floats(t, hlo.F8E4M3FN, math.NaN(), negZero, 448, -1),
		floats(t, hlo.F8E4M3FN, math.NaN(), 0, 1, -1))
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 0, 1}, int64sOf(out.Elems()[0]), "NaN != NaN, -0 == +0")
	assert.Equal(t, []int64{0, 1, 0, 0}, int64sOf(out.Elems()[1]), "total order: -0 < +0")
}

func TestLowPrecisionConvert(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		from, to hlo.DType
		in       *hlo.Literal
		want     []uint64
		reason   string
	}{
		{hlo.F32, hlo.F8E4M3FN, floats(t, hlo.F32, float64(float32(0.3)), 464, 465, -1e9, float64(float32(math.Inf(1))), nan),
			[]uint64{0x2a, 0x7e, 0x7f, 0xff, 0x7f, 0x7f}, "0.3 → 0.3125 (0 0101 010); 464 ties to 448; 465 → NaN; -1e9 → -NaN; inf → NaN"},
		{hlo.F64, hlo.F8E4M3FN, floats(t, hlo.F64, 1.0625+0x1p-40),
			[]uint64{0x39}, "one rounding from f64: just above the tie goes up (via f32 it would tie to 1)"},
		{hlo.F32, hlo.F8E5M2, floats(t, hlo.F32, 61440, 61439, 0x1p-17, 0x1p-17+0x1p-30),
			[]uint64{0x7c, 0x7b, 0x00, 0x01}, "61440 ties to inf; half the smallest subnormal ties to 0"},
		{hlo.F8E5M2, hlo.F8E4M3FN, floats(t, hlo.F8E5M2, 57344, math.Inf(-1), 0x1p-16, 448),
			[]uint64{0x7f, 0xff, 0x00, 0x7e}, "overflow → NaN; -inf → -NaN; 2^-16 is below half of 2^-9: +0"},
		{hlo.F8E4M3FN, hlo.F8E5M2, floats(t, hlo.F8E4M3FN, 0x1p-9, 0.875, nan),
			[]uint64{0x18, 0x3b, 0x7e}, "2^-9 is the e5m2 normal 0 00110 00; 0.875 = 1.11b × 2^-1; NaN"},
		{hlo.F8E4M3FNUZ, hlo.F32, floats(t, hlo.F8E4M3FNUZ, 240, nan),
			[]uint64{uint64(math.Float32bits(240)), 0xffc00000}, "fnuz NaN widens to a negative quiet NaN"},
		{hlo.S32, hlo.F8E4M3FN, ints(t, hlo.S32, 17, 1000, -3),
			[]uint64{0x58, 0x7f, 0xc4}, "17 ties to 16 (0 1011 000); 1000 → NaN; -3 (1 1000 100)"},
		{hlo.F8E4M3FN, hlo.S32, floats(t, hlo.F8E4M3FN, 448, -2.75, nan),
			[]uint64{448, uint64(uint32(0xfffffffe)), 0}, "448; truncation toward zero; NaN → 0"},
		{hlo.F32, hlo.S4, floats(t, hlo.F32, 100, -100, 2.75, -2.75, nan),
			[]uint64{7, 8, 2, 0xe, 0}, "saturates to 7 and -8; truncates; NaN → 0"},
		{hlo.F32, hlo.U4, floats(t, hlo.F32, -3, 20, 15.75),
			[]uint64{0, 15, 15}, "saturates to 0 and 15"},
		{hlo.S32, hlo.S4, ints(t, hlo.S32, 9, -9, 16),
			[]uint64{9, 7, 0}, "wraps: 9 is 0b1001 (-7), -9 is 0b0111, 16 is 0"},
		{hlo.S4, hlo.S32, ints(t, hlo.S4, -8, 7),
			[]uint64{0xfffffff8, 7}, "sign-extends"},
		{hlo.U4, hlo.S32, ints(t, hlo.U4, 15), []uint64{15}, "zero-extends"},
		{hlo.S4, hlo.U2, ints(t, hlo.S4, -1, 6), []uint64{3, 2}, "keeps the low two bits"},
		{hlo.U4, hlo.F4E2M1FN, ints(t, hlo.U4, 5, 7, 15), []uint64{0x6, 0x7, 0x7}, "5 ties to 4; 7 and 15 saturate to 6"},
		{hlo.S4, hlo.F8E4M3FN, ints(t, hlo.S4, -8), []uint64{0xd0}, "-8 exactly"},
		{hlo.F4E2M1FN, hlo.S4, floats(t, hlo.F4E2M1FN, -6, 1.5), []uint64{0xa, 1}, "-6; 1"},
		{hlo.F8E4M3FN, hlo.Pred, floats(t, hlo.F8E4M3FN, math.Copysign(0, -1), nan, 1), []uint64{0, 1, 1}, "x != 0"},
		{hlo.Pred, hlo.F8E8M0FNU, ints(t, hlo.Pred, 1, 0), []uint64{0x7f, 0xff}, "1 = 2^0; 0 has no f8e8m0fnu value: NaN"},
		{hlo.F32, hlo.F8E8M0FNU, floats(t, hlo.F32, 0.75, 0x1p-130, -4),
			[]uint64{0x7f, 0x00, 0xff}, "0.75 ties up to 1; below 2^-127 → 2^-127; negative → NaN"},
		{hlo.F16, hlo.F6E3M2FN, floats(t, hlo.F16, 0.09375, 30, float64(float32(math.Inf(-1)))),
			[]uint64{0x02, 0x1f, 0x3f}, "0.09375 ties to 0.125 (0b10); 30 saturates to 28; -inf → -28"},
	}
	for _, c := range cases {
		out := evalLowp(t, c.to, "convert", c.in.NumElements(), c.in)
		assert.Equal(t, c.want, bitsOf(out), "%v → %v: %s", c.from, c.to, c.reason)
	}
}

// TestLowPrecisionDot: s4 and f8 operands with a wider result type (XLA's
// preferred_element_type), and a dot computed in f8 itself.
func TestLowPrecisionDot(t *testing.T) {
	text := `HloModule t
ENTRY e {
  a = s4[2,3] parameter(0)
  b = s4[3] parameter(1)
  x = f8e4m3fn[2,2] parameter(2)
  y = f8e4m3fn[2,2] parameter(3)
  i = s32[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  f = f32[2,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f8e4m3fn[2,2] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[2], f32[2,2], f8e4m3fn[2,2]) tuple(i, f, g)
}`
	a, _ := hlo.FromInt64s(hlo.S4, []int64{2, 3}, []int64{-8, 7, 1, 7, -8, -1})
	x, _ := hlo.FromFloat64s(hlo.F8E4M3FN, []int64{2, 2}, []float64{448, 448, 1, 0.5})
	y, _ := hlo.FromFloat64s(hlo.F8E4M3FN, []int64{2, 2}, []float64{2, 1, 1, 0.125})
	out, err := Eval(parse(t, text), a, ints(t, hlo.S4, 7, -8, 3), x, y)
	require.NoError(t, err)
	e := out.Elems()
	// -8·7 + 7·-8 + 1·3 = -109; 7·7 + -8·-8 + -1·3 = 110: beyond s4, exact in s32.
	assert.Equal(t, []int64{-109, 110}, int64sOf(e[0]))
	// [448·2+448·1, 448·1+448·0.125; 1·2+0.5·1, 1·1+0.5·0.125] accumulated in f32.
	f := e[1]
	assert.Equal(t, []float64{1344, 504, 2.5, 1.0625}, []float64{f.Float64(0), f.Float64(1), f.Float64(2), f.Float64(3)})
	// The same sums rounded to f8e4m3fn: 1344 → NaN, 504 → NaN (above 464), 2.5, 1.0625 ties to 1.
	assert.Equal(t, []uint64{0x7f, 0x7f, 0x42, 0x38}, bitsOf(e[2]))
}

// TestPackedMovement: data movement on packed s4 arrays moves elements, not bytes
// (a transpose of a 3×3 array takes elements from the middle of bytes), and keeps
// the results of an odd-length array's last byte.
func TestPackedMovement(t *testing.T) {
	text := `HloModule t
ENTRY e {
  a = s4[3,3] parameter(0)
  tr = s4[3,3] transpose(a), dimensions={1,0}
  sl = s4[2,2] slice(a), slice={[1:3], [0:2]}
  c = s4[3] parameter(1)
  cat = s4[6] concatenate(c, c), dimensions={0}
  cu = u2[3] convert(c)
  br = u2[2,3] broadcast(cu), dimensions={1}
  rs = s4[9] reshape(a)
  rev = s4[3] reverse(c), dimensions={0}
  ROOT t = (s4[3,3], s4[2,2], s4[6], u2[2,3], s4[9], s4[3]) tuple(tr, sl, cat, br, rs, rev)
}`
	a, _ := hlo.FromInt64s(hlo.S4, []int64{3, 3}, []int64{1, 2, 3, 4, 5, 6, 7, -8, -1})
	out, err := Eval(parse(t, text), a, ints(t, hlo.S4, -3, 0, 5))
	require.NoError(t, err)
	e := out.Elems()
	assert.Equal(t, []int64{1, 4, 7, 2, 5, -8, 3, 6, -1}, int64sOf(e[0]))
	assert.Equal(t, []int64{4, 5, 7, -8}, int64sOf(e[1]))
	assert.Equal(t, []int64{-3, 0, 5, -3, 0, 5}, int64sOf(e[2]))
	assert.Equal(t, []int64{1, 0, 1, 1, 0, 1}, int64sOf(e[3]), "-3 = 0b1101 and 5 = 0b0101 keep 0b01")
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, -8, -1}, int64sOf(e[4]))
	assert.Equal(t, []int64{5, 0, -3}, int64sOf(e[5]))
	assert.Equal(t, []byte{0x21, 0x43, 0x65, 0x87, 0x0f}, e[4].Bytes(), "packed, low nibble first; the pad nibble is 0")
}

// TestPackedElementwiseInParallel runs an elementwise op on an s4 array large
// enough for every core, sized so that parallelFor's plain chunk (n/(4·workers))
// is odd: the ranges of the workers would meet inside bytes unless aligned (go test
// -race catches the shared writes; without -race, lost nibbles fail the check).
func TestPackedElementwiseInParallel(t *testing.T) {
	n := 4*runtime.GOMAXPROCS(0)*12501 + 1
	var starts sync.Map
	parallelElements(hlo.MakeShape(hlo.S4, int64(n)), elementCost, func(lo, hi int) { starts.Store(lo, hi) })
	starts.Range(func(lo, hi any) bool {
		assert.Zero(t, lo.(int)%8, "a range of packed elements starts inside a byte: [%d, %d)", lo, hi)
		return true
	})
	x := make([]int64, n)
	for i := range x {
		x[i] = int64(i%16) - 8
	}
	in, err := hlo.FromInt64s(hlo.S4, []int64{int64(n)}, x)
	require.NoError(t, err)
	out := evalLowp(t, hlo.S4, "add", n, in, in)
	for i := range x {
		want := (2*x[i]+8)&15 - 8 // 2x wrapped to [-8, 8)
		if out.Int64(i) != want {
			t.Fatalf("element %d: %d + %d = %d, want %d", i, x[i], x[i], out.Int64(i), want)
		}
	}
}

// TestPackedBitcastConvert: bitcast-convert between u8 and s4 follows XLA's
// little-endian packing: the s4 result's minor dimension of 2 holds a byte's low
// nibble first.
func TestPackedBitcastConvert(t *testing.T) {
	m := parse(t, `HloModule bc
ENTRY e {
  b = u8[2] parameter(0)
  s = s4[2,2] bitcast-convert(b)
  ROOT u = u8[2] bitcast-convert(s)
}`)
	b := ints(t, hlo.U8, 0x21, 0xf3)
	out, err := Eval(m, b)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x21, 0xf3}, out.Bytes())
	m = parse(t, "HloModule bc\nENTRY e {\n  b = u8[2] parameter(0)\n  ROOT s = s4[2,2] bitcast-convert(b)\n}")
	out, err = Eval(m, b)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2, 3, -1}, int64sOf(out))
}
