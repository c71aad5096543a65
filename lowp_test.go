package vkxla_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// gpuF8 are the low-precision floats the GPU path lowers (elementwise and
// movement); f4e2m1fn is packed two to a byte.
var gpuF8 = []hlo.DType{hlo.F8E4M3FN, hlo.F8E5M2, hlo.F8E4M3, hlo.F8E3M4, hlo.F8E4M3FNUZ, hlo.F8E5M2FNUZ,
	hlo.F8E4M3B11FNUZ, hlo.F6E2M3FN, hlo.F6E3M2FN, hlo.F4E2M1FN, hlo.F8E8M0FNU}

// TestLowPrecisionTypesPlan: every low-precision type plans on lavapipe as an input,
// an output and a value made inside a kernel (converts to and from f32).
func TestLowPrecisionTypesPlan(t *testing.T) {
	dev := builtinLavapipe(t)
	for _, dt := range hlo.LowPrecisionDTypes {
		b := hlo.NewBuilder("lowp")
		x := b.Parameter(hlo.MakeShape(dt, 5), "x")
		f := b.Parameter(hlo.MakeShape(hlo.F32, 5), "f")
		root := b.Tuple(b.Convert(x, hlo.F32), b.Convert(f, dt), b.Convert(b.Convert(f, dt), hlo.F32))
		m, err := b.Build(root)
		require.NoError(t, err, dt.String())
		_, err = vkxla.PlanFor(context.Background(), m, dev, "")
		assert.NoError(t, err, dt.String())
	}
}

// TestF8KernelsOutsideElementwiseAreRefused: a reduce of f8 values, and a
// bitcast-convert or iota of packed s4/u4 values are not lowered yet.
func TestF8KernelsOutsideElementwiseAreRefused(t *testing.T) {
	dev := builtinLavapipe(t)
	for _, text := range []string{
		`HloModule r
add { a = f8e4m3fn[] parameter(0)
  b = f8e4m3fn[] parameter(1)
  ROOT s = f8e4m3fn[] add(a, b) }
ENTRY e { x = f8e4m3fn[8] parameter(0)
  z = f8e4m3fn[] constant(0)
  ROOT r = f8e4m3fn[] reduce(x, z), dimensions={0}, to_apply=add }`,
		`HloModule a
ENTRY e { x = s4[4,2] parameter(0)
  ROOT a = u8[4] bitcast-convert(x) }`,
		`HloModule i
ENTRY e { ROOT i = u4[20] iota(), iota_dimension=0 }`,
	} {
		m, err := hlo.ParseModule(text)
		require.NoError(t, err)
		_, err = vkxla.PlanFor(context.Background(), m, dev, "")
		require.Error(t, err, text)
		assert.True(t, errors.Is(err, vkxla.ErrUnsupported), "%v", err)
	}
}

// TestF8OnDevice checks the kernels of each 8-bit float against cpuref bit for bit
// (NaNs: any NaN): every bit pattern decoded to f32, converted to the other f8 type,
// to s32 and back through f32, and combined by add, multiply, divide, maximum and
// compare with a shifted copy of itself; and f32 values at every rounding edge of
// the type (each midpoint between neighbours and the f32 values either side of it,
// the overflow edge, half the smallest subnormal) converted to it.
func TestF8OnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range gpuF8 {
		other := hlo.F8E5M2
		if dt == other {
			other = hlo.F8E4M3FN
		}
		t.Run(dt.String(), func(t *testing.T) {
			text := fmt.Sprintf(`HloModule f8
ENTRY e {
  x = %[1]v[256] parameter(0)
  y = %[1]v[256] parameter(1)
  e = f32[768] parameter(2)
  wide = f32[256] convert(x)
  cross = %[2]v[256] convert(x)
  ints = s32[256] convert(x)
  back = %[1]v[256] convert(wide)
  sum = %[1]v[256] add(x, y)
  prod = %[1]v[256] multiply(x, y)
  quot = %[1]v[256] divide(x, y)
  most = %[1]v[256] maximum(x, y)
  lt = pred[256] compare(x, y), direction=LT
  neg = %[1]v[256] negate(x)
  edges = %[1]v[768] convert(e)
  fromint = %[1]v[256] convert(ints)
  ROOT t = (f32[256], %[2]v[256], s32[256], %[1]v[256], %[1]v[256], %[1]v[256], %[1]v[256], %[1]v[256], pred[256], %[1]v[256], %[1]v[768], %[1]v[256]) tuple(wide, cross, ints, back, sum, prod, quot, most, lt, neg, edges, fromint)
}`, dt, other)
			m, err := hlo.ParseModule(text)
			require.NoError(t, err)
			x, y := hlo.NewLiteral(hlo.MakeShape(dt, 256)), hlo.NewLiteral(hlo.MakeShape(dt, 256))
			for i := range 256 {
				x.SetBits(i, uint64(i))
				y.SetBits(i, uint64((i*37+11)%256))
			}
			checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y, f8Edges(t, dt))
		})
	}
}

// f8Edges is 768 f32 values around dt's rounding edges.
func f8Edges(t *testing.T, dt hlo.DType) *hlo.Literal {
	var vals []float64
	for b := range uint64(256) {
		if v := hlo.MinifloatToFloat64(dt, b); !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
			vals = append(vals, v)
		}
	}
	sort.Float64s(vals)
	var edges []float64
	for i := 0; i+1 < len(vals); i++ {
		mid := float32((vals[i] + vals[i+1]) / 2) // exact: a few significant bits
		edges = append(edges, float64(mid), float64(math.Nextafter32(mid, 0)), -float64(math.Nextafter32(mid, float32(math.Inf(1)))))
	}
	top := vals[len(vals)-1]
	edges = append(edges, top*1.0625, top*1.25, -top*2, float64(float32(math.Inf(1))), math.NaN(), 1e-30)
	require.LessOrEqual(t, len(edges), 768)
	for len(edges) < 768 {
		edges = append(edges, float64(len(edges))*0.37)
	}
	l, err := hlo.FromFloat64s(hlo.F32, []int64{768}, edges)
	require.NoError(t, err)
	return l
}

// TestF8DotOnDevice: a dot of f8 operands into f32 (preferred_element_type), the
// fp8 matmul of inference, against cpuref. The passes widen the operands to f32
// before the dot, so the kernels see f8 only in converts; the sums of f8 products
// are exact in f32 here (small integers and halves), so the comparison is exact.
func TestF8DotOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range gpuF8 {
		text := fmt.Sprintf(`HloModule d
ENTRY e {
  x = %[1]v[8,16] parameter(0)
  y = %[1]v[16,8] parameter(1)
  ROOT d = f32[8,8] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`, dt)
		m, err := hlo.ParseModule(text)
		require.NoError(t, err)
		x, y := hlo.NewLiteral(hlo.MakeShape(dt, 8, 16)), hlo.NewLiteral(hlo.MakeShape(dt, 16, 8))
		for i := range 128 {
			x.SetFloat64(i, float64(i%7)-3)
			y.SetFloat64(i, float64(i%5)/2-1)
		}
		checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y)
	}
}

// TestF8MovementOnDevice: odd shapes (no vec4 path), a transpose, a broadcast, a
// slice and a concatenate of f8 values, and a select between two f8 types' values.
func TestF8MovementOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule mv
ENTRY e {
  x = f8e4m3fn[3,5] parameter(0)
  s = f8e5m2[5] parameter(1)
  tr = f8e4m3fn[5,3] transpose(x), dimensions={1,0}
  br = f8e5m2[3,5] broadcast(s), dimensions={1}
  sl = f8e4m3fn[2,3] slice(x), slice={[1:3], [1:4]}
  cat = f8e5m2[10] concatenate(s, s), dimensions={0}
  xc = f8e5m2[3,5] convert(x)
  gt = pred[3,5] compare(xc, br), direction=GT
  pick = f8e5m2[3,5] select(gt, xc, br)
  ROOT t = (f8e4m3fn[5,3], f8e5m2[3,5], f8e4m3fn[2,3], f8e5m2[10], f8e5m2[3,5]) tuple(tr, br, sl, cat, pick)
}`)
	require.NoError(t, err)
	x := hlo.NewLiteral(hlo.MakeShape(hlo.F8E4M3FN, 3, 5))
	for i := range 15 {
		x.SetBits(i, uint64(i*17+3))
	}
	s := hlo.NewLiteral(hlo.MakeShape(hlo.F8E5M2, 5))
	for i := range 5 {
		s.SetBits(i, uint64(i*50+1))
	}
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, s)
}

// TestNibblesOnDevice: s4 and u4 inputs and outputs of odd sizes (the last byte
// half used) through converts from and to f32, s32, u8 and f8e4m3fn, and through
// transpose, slice, concatenate and reverse, against cpuref bit for bit:
// the packed loads pick the right nibble, the pair stores write whole bytes, and
// converts wrap (s32 → s4) and saturate (f32 → s4) as XLA does.
func TestNibblesOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule nib
ENTRY e {
  a = s4[3,5] parameter(0)
  b = u4[7] parameter(1)
  w = s32[9] parameter(2)
  f = f32[9] parameter(3)
  af = f32[3,5] convert(a)
  bi = s32[7] convert(b)
  ws = s4[9] convert(w)
  fs = s4[9] convert(f)
  fu = u4[9] convert(f)
  ab = u4[3,5] convert(a)
  b8 = f8e4m3fn[7] convert(b)
  bu = u8[7] convert(b)
  tr = s4[5,3] transpose(a), dimensions={1,0}
  sl = s4[2,3] slice(a), slice={[1:3], [1:4]}
  cat = u4[14] concatenate(b, b), dimensions={0}
  rev = u4[7] reverse(b), dimensions={0}
  ROOT t = (f32[3,5], s32[7], s4[9], s4[9], u4[9], u4[3,5], f8e4m3fn[7], u8[7], s4[5,3], s4[2,3], u4[14], u4[7]) tuple(af, bi, ws, fs, fu, ab, b8, bu, tr, sl, cat, rev)
}`)
	require.NoError(t, err)
	a, err := hlo.FromInt64s(hlo.S4, []int64{3, 5}, []int64{-8, -7, -1, 0, 1, 7, 3, -2, 5, -5, 6, -6, 2, 4, -3})
	require.NoError(t, err)
	b, err := hlo.FromInt64s(hlo.U4, []int64{7}, []int64{0, 15, 1, 9, 8, 7, 3})
	require.NoError(t, err)
	w, err := hlo.FromInt64s(hlo.S32, []int64{9}, []int64{9, -9, 16, 7, -8, 100, -100, 15, -1})
	require.NoError(t, err)
	f, err := hlo.FromFloat64s(hlo.F32, []int64{9}, []float64{100, -100, 2.75, -2.75, math.NaN(), 7.5, -8.5, 15.5, 0.5})
	require.NoError(t, err)
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, a, b, w, f)
}

// TestS4DotOnDevice: a dot of s4 operands into s32 (preferred_element_type), the
// int4 matmul of quantised inference, against cpuref exactly.
func TestS4DotOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule d
ENTRY e {
  x = s4[8,16] parameter(0)
  y = s4[16,7] parameter(1)
  ROOT d = s32[8,7] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`)
	require.NoError(t, err)
	x, y := hlo.NewLiteral(hlo.MakeShape(hlo.S4, 8, 16)), hlo.NewLiteral(hlo.MakeShape(hlo.S4, 16, 7))
	for i := range 128 {
		x.SetInt64(i, int64(i%16)-8)
	}
	for i := range 112 {
		y.SetInt64(i, int64(i*5%16)-8)
	}
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y)
}

// TestF8ElementwiseOpsOnDevice runs every unary and binary elementwise op that
// applies to floats on every bit pattern of each 8-bit float (binary ops pair each
// with another pattern) and compares with cpuref within vkxla.Tolerance: exact for
// the correctly rounded and exact ops, one f8 ulp for the rest.
func TestF8ElementwiseOpsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range gpuF8 {
		x, y := hlo.NewLiteral(hlo.MakeShape(dt, 256)), hlo.NewLiteral(hlo.MakeShape(dt, 256))
		for i := range 256 {
			x.SetBits(i, uint64(i))
			y.SetBits(i, uint64((i*89+7)%256))
		}
		for op := hlo.Opcode(1); op != hlo.OpInvalid; op++ { // every opcode (Info is OpInvalid's past the table)
			info := op.Info()
			if (info.Kind != hlo.KindUnary && info.Kind != hlo.KindBinary) || !info.Types.Allows(dt) || op == hlo.OpReal || op == hlo.OpImag {
				continue
			}
			out, args, inputs := dt, "x", []*hlo.Literal{x}
			if op == hlo.OpIsFinite {
				out = hlo.Pred
			}
			params := fmt.Sprintf("  x = %v[256] parameter(0)\n", dt)
			if info.Kind == hlo.KindBinary {
				params += fmt.Sprintf("  y = %v[256] parameter(1)\n", dt)
				args, inputs = "x, y", append(inputs, y)
			}
			m, err := hlo.ParseModule(fmt.Sprintf("HloModule %s\nENTRY e {\n%s  ROOT r = %v[256] %v(%s)\n}",
				"f8_op", params, out, op, args))
			require.NoError(t, err, "%v %v", op, dt)
			t.Run(fmt.Sprintf("%v/%v", dt, op), func(t *testing.T) {
				checkAgainstCPU(t, rt, m, vkxla.Tolerance(op, dt), inputs...)
			})
		}
	}
}

func TestULPDistanceLowPrecision(t *testing.T) {
	d := vkxla.ULPDistance
	assert.Equal(t, 1.0, d(hlo.F8E4M3FN, 0x7e, 0x7d), "448 and 416 are neighbours")
	assert.Equal(t, 1.0, d(hlo.F8E4M3FN, 0x00, 0x80), "+0 and -0")
	assert.Equal(t, 3.0, d(hlo.F8E4M3FN, 0x01, 0x81), "±smallest subnormal: -0 and +0 lie between")
	assert.Equal(t, 0.0, d(hlo.F8E4M3FN, 0x7f, 0xff), "two NaNs")
	assert.True(t, math.IsInf(d(hlo.F8E4M3FN, 0x7f, 0x7e), 1), "NaN and a number")
	assert.Equal(t, 1.0, d(hlo.F8E5M2, 0x7b, 0x7c), "max and inf")
	assert.True(t, math.IsInf(d(hlo.F8E4M3FNUZ, 0x80, 0x00), 1), "fnuz NaN is 0x80")
	assert.Equal(t, 3.0, d(hlo.F8E8M0FNU, 0x7f, 0x82), "2^0 and 2^3")
	assert.Equal(t, 1.0, d(hlo.F4E2M1FN, 0x7, 0x6))
	assert.Equal(t, vkxla.ErrorSpec{ULP: 1}, vkxla.Tolerance(hlo.OpExp, hlo.F8E5M2))
	assert.Equal(t, vkxla.ErrorSpec{}, vkxla.Tolerance(hlo.OpConvert, hlo.F8E5M2))
}

// TestF8ChainedOnDevice: f8 results used inside the kernel, never stored, must be
// rounded in registers: converts to f32 of sums, products and quotients, and a
// compare of a difference.
func TestF8ChainedOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range gpuF8 {
		m, err := hlo.ParseModule(fmt.Sprintf(`HloModule chained
ENTRY e {
  x = %[1]v[256] parameter(0)
  y = %[1]v[256] parameter(1)
  a = %[1]v[256] add(x, y)
  m = %[1]v[256] multiply(x, y)
  d = %[1]v[256] divide(x, y)
  s = %[1]v[256] subtract(x, y)
  wa = f32[256] convert(a)
  wm = f32[256] convert(m)
  wd = f32[256] convert(d)
  gs = pred[256] compare(s, x), direction=GT
  ROOT t = (f32[256], f32[256], f32[256], pred[256]) tuple(wa, wm, wd, gs)
}`, dt))
		require.NoError(t, err)
		x, y := hlo.NewLiteral(hlo.MakeShape(dt, 256)), hlo.NewLiteral(hlo.MakeShape(dt, 256))
		for i := range 256 {
			x.SetBits(i, uint64(i))
			y.SetBits(i, uint64((i*89+7)%256))
		}
		checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y)
	}
}

// TestF8MoreOpsOnDevice: the rest of what f8Limit lets through — iota (values
// rounded to the type), bitcast-convert both ways, pad, dynamic-slice,
// dynamic-update-slice and gather — against cpuref bit for bit.
func TestF8MoreOpsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule more
ENTRY e {
  x = f8e4m3fn[40] parameter(0)
  u = u8[40] parameter(1)
  i = s32[] parameter(2)
  io = f8e5m2[600] iota(), iota_dimension=0
  io4 = f8e4m3fn[600] iota(), iota_dimension=0
  bu = u8[40] bitcast-convert(x)
  ub = f8e5m2[40] bitcast-convert(u)
  z = f8e4m3fn[] constant(-0.5)
  p = f8e4m3fn[47] pad(x, z), padding=3_4
  ds = f8e4m3fn[5] dynamic-slice(x, i), dynamic_slice_sizes={5}
  up = f8e4m3fn[3] slice(x), slice={[0:3]}
  dus = f8e4m3fn[40] dynamic-update-slice(x, up, i)
  idx = s32[4,1] constant({{3}, {0}, {39}, {17}})
  g = f8e4m3fn[4] gather(x, idx), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  ROOT t = (f8e5m2[600], f8e4m3fn[600], u8[40], f8e5m2[40], f8e4m3fn[47], f8e4m3fn[5], f8e4m3fn[40], f8e4m3fn[4]) tuple(io, io4, bu, ub, p, ds, dus, g)
}`)
	require.NoError(t, err)
	x := hlo.NewLiteral(hlo.MakeShape(hlo.F8E4M3FN, 40))
	u := hlo.NewLiteral(hlo.MakeShape(hlo.U8, 40))
	for i := range 40 {
		x.SetBits(i, uint64(i*13+5)%256)
		u.SetBits(i, uint64(i*29+1)%256)
	}
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, u, hlo.ScalarLiteral(int32(11)))
}

// TestNibbleArithmeticOnDevice runs every integer unary and binary elementwise op,
// compare in each direction, select and clamp on all pairs of s4, u4, s2 and u2
// values and compares with cpuref exactly: results wrap in 4 bits, also where a
// result feeds another op of the kernel (a convert to s32, a compare).
func TestNibbleArithmeticOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range []hlo.DType{hlo.S4, hlo.U4, hlo.S2, hlo.U2} {
		x, y := hlo.NewLiteral(hlo.MakeShape(dt, 256)), hlo.NewLiteral(hlo.MakeShape(dt, 256))
		for i := range 256 { // every pair (s2, u2: each 16 times)
			x.SetBits(i, uint64(i%16))
			y.SetBits(i, uint64(i/16))
		}
		var body strings.Builder
		var roots, shapes []string
		for op := hlo.Opcode(1); op != hlo.OpInvalid; op++ {
			info := op.Info()
			if (info.Kind != hlo.KindUnary && info.Kind != hlo.KindBinary) || !info.Types.Allows(dt) {
				continue
			}
			args := "x"
			if info.Kind == hlo.KindBinary {
				args = "x, y"
			}
			name := strings.ReplaceAll(op.String(), "-", "_")
			fmt.Fprintf(&body, "  %s = %v[256] %v(%s)\n", name, dt, op, args)
			roots, shapes = append(roots, name), append(shapes, fmt.Sprintf("%v[256]", dt))
		}
		for _, dir := range []string{"EQ", "NE", "LT", "LE", "GT", "GE"} {
			fmt.Fprintf(&body, "  c%s = pred[256] compare(x, y), direction=%s\n", dir, dir)
			roots, shapes = append(roots, "c"+dir), append(shapes, "pred[256]")
		}
		body.WriteString("  sel = " + dt.String() + "[256] select(cLT, x, y)\n")
		body.WriteString("  lo = " + dt.String() + "[] constant(0)\n  hi = " + dt.String() + "[] constant(1)\n")
		body.WriteString("  cl = " + dt.String() + "[256] clamp(lo, x, hi)\n")
		roots, shapes = append(roots, "sel", "cl"), append(shapes, dt.String()+"[256]", dt.String()+"[256]")
		text := fmt.Sprintf("HloModule nib\nENTRY e {\n  x = %[1]v[256] parameter(0)\n  y = %[1]v[256] parameter(1)\n%s  ROOT t = (%s) tuple(%s)\n}",
			dt, body.String(), strings.Join(shapes, ", "), strings.Join(roots, ", "))
		m, err := hlo.ParseModule(text)
		require.NoError(t, err, text)
		t.Run(dt.String(), func(t *testing.T) { checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y) })
		// Results used inside the kernel, never stored: they must be wrapped in registers.
		chained, err := hlo.ParseModule(fmt.Sprintf(`HloModule chained
ENTRY e {
  x = %[1]v[256] parameter(0)
  y = %[1]v[256] parameter(1)
  a = %[1]v[256] add(x, y)
  m = %[1]v[256] multiply(x, y)
  n = %[1]v[256] negate(x)
  s = %[1]v[256] shift-left(x, y)
  q = %[1]v[256] not(y)
  wa = s32[256] convert(a)
  wm = f32[256] convert(m)
  gn = pred[256] compare(n, x), direction=GT
  ws = s32[256] convert(s)
  wq = s32[256] convert(q)
  ROOT t = (s32[256], f32[256], pred[256], s32[256], s32[256]) tuple(wa, wm, gn, ws, wq)
}`, dt))
		require.NoError(t, err)
		t.Run(dt.String()+"/chained", func(t *testing.T) { checkAgainstCPU(t, rt, chained, vkxla.ErrorSpec{}, x, y) })
	}
}

// TestTwoBitOnDevice: s2 and u2 (four to a byte) with odd sizes through converts,
// movement, and a multi-output kernel that writes s2, s4 and f32 results together
// (groups of four elements: one s2 byte, two s4 bytes), against cpuref.
func TestTwoBitOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule two
ENTRY e {
  a = s2[3,5] parameter(0)
  w = s32[11] parameter(1)
  f = f32[11] parameter(2)
  af = f32[3,5] convert(a)
  ws = s2[11] convert(w)
  wu = u2[11] convert(w)
  fs = s2[11] convert(f)
  w4 = s4[11] convert(w)
  sum = s2[11] add(ws, fs)
  tr = s2[5,3] transpose(a), dimensions={1,0}
  sl = s2[2,3] slice(a), slice={[1:3], [1:4]}
  cat = u2[22] concatenate(wu, wu), dimensions={0}
  rev = s2[11] reverse(ws), dimensions={0}
  ROOT t = (f32[3,5], s2[11], u2[11], s2[11], s4[11], s2[11], s2[5,3], s2[2,3], u2[22], s2[11]) tuple(af, ws, wu, fs, w4, sum, tr, sl, cat, rev)
}`)
	require.NoError(t, err)
	a, err := hlo.FromInt64s(hlo.S2, []int64{3, 5}, []int64{-2, -1, 0, 1, 1, 0, -1, -2, 1, -1, 0, 1, -2, 0, 1})
	require.NoError(t, err)
	w, err := hlo.FromInt64s(hlo.S32, []int64{11}, []int64{9, -9, 16, 7, -8, 100, -100, 15, -1, 2, 3})
	require.NoError(t, err)
	f, err := hlo.FromFloat64s(hlo.F32, []int64{11}, []float64{100, -100, 2.75, -2.75, math.NaN(), 1.5, -2.5, 15.5, 0.5, -1, 1})
	require.NoError(t, err)
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, a, w, f)
}

// TestF64ToLowFloatOnDevice: f64 values just either side of every rounding tie of
// each low-precision float (and on it) convert with one rounding, as cpuref does:
// through an f32 rounded to odd, where plain f32 rounding would land on the tie and
// round twice.
func TestF64ToLowFloatOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range gpuF8 {
		var vals []float64
		for b := range uint64(256) {
			if v := hlo.MinifloatToFloat64(dt, b); !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
				vals = append(vals, v)
			}
		}
		sort.Float64s(vals)
		var in []float64
		for i := 0; i+1 < len(vals); i++ {
			mid := (vals[i] + vals[i+1]) / 2
			tiny := mid * 0x1p-40 // far below f32 precision: f32 rounding would erase it
			in = append(in, mid, mid+tiny, mid-tiny, -(mid + tiny))
		}
		top := vals[len(vals)-1]
		in = append(in, top*1.5, 1e300, -1e300, math.Inf(1), math.NaN(), 1e-300, -1e-300, 0x1p-127*1.5+0x1p-170)
		x, err := hlo.FromFloat64s(hlo.F64, []int64{int64(len(in))}, in)
		require.NoError(t, err)
		m, err := hlo.ParseModule(fmt.Sprintf("HloModule f64\nENTRY e {\n  x = f64[%[1]d] parameter(0)\n  ROOT c = %[2]v[%[1]d] convert(x)\n}", len(in), dt))
		require.NoError(t, err)
		t.Run(dt.String(), func(t *testing.T) { checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x) })
	}
}

// TestLowPrecisionInputsOfOtherKernelsOnDevice: fusion puts a convert of
// low-precision values (one input per consumer, so each may fuse) into a reduce, a
// row-reduce or a dot kernel, which then reads them through its own strategy's
// loads; sums of converted f8, f4 and s4 values against
// cpuref (inputs small integers and halves, so the f32 sums are exact in any order).
func TestLowPrecisionInputsOfOtherKernelsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range []hlo.DType{hlo.F8E4M3FN, hlo.F8E5M2FNUZ, hlo.F4E2M1FN, hlo.S4, hlo.U2} {
		acc := hlo.F32
		if dt.IsInteger() {
			acc = hlo.S32
		}
		m, err := hlo.ParseModule(fmt.Sprintf(`HloModule fused
add {
  a = %[2]v[] parameter(0)
  b = %[2]v[] parameter(1)
  ROOT s = %[2]v[] add(a, b)
}
ENTRY e {
  p1 = %[1]v[64,33] parameter(0)
  p2 = %[1]v[64,33] parameter(1)
  p3 = %[1]v[64,33] parameter(2)
  p4 = %[1]v[64,33] parameter(3)
  w = %[1]v[33,9] parameter(4)
  x1 = %[2]v[64,33] convert(p1)
  x2 = %[2]v[64,33] convert(p2)
  x3 = %[2]v[64,33] convert(p3)
  x4 = %[2]v[64,33] convert(p4)
  wc = %[2]v[33,9] convert(w)
  z = %[2]v[] constant(0)
  all = %[2]v[] reduce(x1, z), dimensions={0,1}, to_apply=add
  rows = %[2]v[64] reduce(x2, z), dimensions={1}, to_apply=add
  cols = %[2]v[33] reduce(x3, z), dimensions={0}, to_apply=add
  d = %[2]v[64,9] dot(x4, wc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (%[2]v[], %[2]v[64], %[2]v[33], %[2]v[64,9]) tuple(all, rows, cols, d)
}`, dt, acc))
		require.NoError(t, err)
		x, w := hlo.NewLiteral(hlo.MakeShape(dt, 64, 33)), hlo.NewLiteral(hlo.MakeShape(dt, 33, 9))
		for i := range x.NumElements() {
			setSmall(x, i, dt, i*7)
		}
		for i := range w.NumElements() {
			setSmall(w, i, dt, i*3+1)
		}
		t.Run(dt.String(), func(t *testing.T) { checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, x, x, x, w) })
	}
}

// setSmall stores a small value picked by seed: an integer in the type's range, or
// one of a few halves every float type here holds exactly.
func setSmall(l *hlo.Literal, i int, dt hlo.DType, seed int) {
	if dt.IsInteger() {
		l.SetInt64(i, int64(seed%3)-1+int64(seed%2)) // -1, 0, 1, 2 wrap in s2/u2 as cpuref does
		return
	}
	l.SetFloat64(i, []float64{0, 0.5, 1, -1, 1.5, -2, 3}[seed%7])
}
