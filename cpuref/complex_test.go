package cpuref

import (
	"errors"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// specialComplex are the operands of the complex elementwise tests: ordinary
// values, both sides of the branch cut on the negative real axis (imaginary part
// +0 and −0), signed zeros, tiny and huge parts, infinities and NaNs.
var specialComplex = []complex128{
	complex(1, 2), complex(3, -4), complex(-0.5, 0.25), complex(0, 1), complex(0, -1),
	complex(-1, 0), complex(-1, negZ64), complex(-4, 0), complex(-4, negZ64),
	complex(0, 0), complex(negZ64, 0), complex(0, negZ64), complex(negZ64, negZ64),
	complex(1e-8, 2e-8), complex(30, 40), complex(-30, 1),
	complex(inf64, 0), complex(-inf64, 1), complex(1, inf64), complex(inf64, -inf64),
	complex(nan64, 0), complex(0, nan64), complex(inf64, nan64), complex(nan64, nan64),
}

func complexVec[T complex64 | complex128](vals []complex128) *hlo.Literal {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = T(v)
	}
	return vec(out...)
}

// cmplxUnary are the math/cmplx definitions the unary ops must match.
var cmplxUnary = map[hlo.Opcode]func(complex128) complex128{
	hlo.OpExp: cmplx.Exp, hlo.OpLog: cmplx.Log, hlo.OpSqrt: cmplx.Sqrt,
	hlo.OpRsqrt: func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) },
	hlo.OpSin:   cmplx.Sin, hlo.OpCos: cmplx.Cos,
}

// TestComplexUnaryMatchesCmplx: on c128 every transcendental is math/cmplx's, bit
// for bit (NaN for NaN); on c64 it is math/cmplx of the c64 operand, each part
// rounded once to f32.
func TestComplexUnaryMatchesCmplx(t *testing.T) {
	for op, f := range cmplxUnary {
		got := evalUnaryOp(t, op, complexVec[complex128](specialComplex))
		want := make([]complex128, len(specialComplex))
		for i, z := range specialComplex {
			want[i] = f(z)
		}
		assertLit(t, complexVec[complex128](want), got, "%v c128", op)

		got = evalUnaryOp(t, op, complexVec[complex64](specialComplex))
		for i, z := range specialComplex {
			want[i] = f(complex128(complex64(z)))
		}
		assertLit(t, complexVec[complex64](want), got, "%v c64", op)
	}
}

// TestComplexBranchCuts checks by hand the values either side of the cut on the
// negative real axis, where the sign of a zero imaginary part picks the side.
func TestComplexBranchCuts(t *testing.T) {
	x := vec(complex(-1, 0), complex(-1, negZ64), complex(-4, 0), complex(-4, negZ64))
	assertLit(t, vec(complex(0, math.Pi), complex(0, -math.Pi), complex(math.Log(4), math.Pi), complex(math.Log(4), -math.Pi)),
		evalUnaryOp(t, hlo.OpLog, x), "log")
	assertLit(t, vec(complex(0, 1), complex(0, -1), complex(0, 2), complex(0, -2)), evalUnaryOp(t, hlo.OpSqrt, x), "sqrt")
	// sqrt(−0 ± 0i) keeps the imaginary zero's sign, with a +0 real part.
	assertLit(t, vec(complex(0, 0), complex(0, negZ64)), evalUnaryOp(t, hlo.OpSqrt, vec(complex(negZ64, 0), complex(negZ64, negZ64))))
	assertLit(t, vec(complex(-inf64, 0)), evalUnaryOp(t, hlo.OpLog, vec(complex(0, 0))), "log 0")
}

func TestComplexArithmetic(t *testing.T) {
	x := vec(complex64(complex(1, 2)), complex(3, -4), complex(0, 0), complex(-1, 0))
	y := vec(complex64(complex(3, 4)), complex(1, 1), complex(negZ32, 0), complex(0, 1))
	assertLit(t, vec(complex64(complex(4, 6)), complex(4, -3), complex(0, 0), complex(-1, 1)), evalBinaryOp(t, hlo.OpAdd, x, y))
	assertLit(t, vec(complex64(complex(-2, -2)), complex(2, -5), complex(0, 0), complex(-1, -1)), evalBinaryOp(t, hlo.OpSubtract, x, y))
	// (1+2i)(3+4i) = −5+10i; (3−4i)(1+i) = 7−i; 0·(−0) = (0·−0 − 0·0) + (0·0 + 0·−0)i
	// = −0 + 0i; (−1)(i) = (−1·0 − 0·1) + (−1·1 + 0·0)i = −0 − i.
	assertLit(t, vec(complex64(complex(-5, 10)), complex(7, -1), complex(negZ32, 0), complex(negZ32, -1)), evalBinaryOp(t, hlo.OpMultiply, x, y))
	// (1+2i)/(3+4i) = (11+2i)/25; (3−4i)/(1+i) = (−1−7i)/2.
	got := evalBinaryOp(t, hlo.OpDivide, vec(complex(1, 2), complex(3, -4)), vec(complex(3, 4), complex(1, 1)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(11.0/25, 2.0/25), complex(-0.5, -3.5)), 0, 1e-15))
	// i² = −1, and (−1)^½ = i on the principal branch.
	got = evalBinaryOp(t, hlo.OpPower, vec(complex(0, 1), complex(-1, 0)), vec(complex(2, 0), complex(0.5, 0)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(complex(-1, 0), complex(0, 1)), 1e-15, 0))
	assertLit(t, vec(cmplx.Pow(complex(1, 2), complex(-0.5, 3))), evalBinaryOp(t, hlo.OpPower, vec(complex(1, 2)), vec(complex(-0.5, 3))))
}

func TestComplexNegateAbsSign(t *testing.T) {
	x := vec(complex(3, -4), complex(0, 0), complex(negZ64, 1), complex(inf64, nan64), complex(nan64, 1), complex(-1e300, 1e300))
	assertLit(t, vec(complex(-3, 4), complex(negZ64, negZ64), complex(0, -1), complex(-inf64, nan64), complex(nan64, -1), complex(1e300, -1e300)),
		evalUnaryOp(t, hlo.OpNegate, x))
	// abs is hypot: no overflow for 1e300, +inf beside a NaN.
	assertLit(t, vec(5, 0, 1, inf64, nan64, math.Hypot(1e300, 1e300)), evalUnaryOp(t, hlo.OpAbs, x))
	assertLit(t, vec(complex(0.6, -0.8), complex(0, 0), complex(negZ64, 1), complex(nan64, nan64), complex(nan64, nan64),
		complex(-1e300/math.Hypot(1e300, 1e300), 1e300/math.Hypot(1e300, 1e300))), evalUnaryOp(t, hlo.OpSign, x))
	assertLit(t, vec(float32(5), 0), evalUnaryOp(t, hlo.OpAbs, vec(complex64(complex(3, -4)), 0)), "abs of c64 is f32")
}

// TestComplexExpm1Log1p: near 0 the results keep their relative accuracy (the
// series z + z²/2 and z − z²/2, exact to f64 at |z| ~ 1e−10); far from it they are
// exp(z) − 1 and log(1 + z).
func TestComplexExpm1Log1p(t *testing.T) {
	z := complex(1e-10, -2e-10)
	far := complex(2, 3)
	got := evalUnaryOp(t, hlo.OpExpm1, vec(z, far))
	assert.NoError(t, hlo.LiteralsClose(got, vec(z+z*z/2, cmplx.Exp(far)-1), 0, 1e-15))
	got = evalUnaryOp(t, hlo.OpLog1p, vec(z, far, complex(-2, 0), complex(-2, negZ64)))
	assert.NoError(t, hlo.LiteralsClose(got, vec(z-z*z/2, cmplx.Log(1+far), complex(0, math.Pi), complex(0, -math.Pi)), 0, 1e-15))
	// log(1 + z) at z = ±0 ± 0i: log|1| = +0, and the imaginary zero keeps its sign.
	assertLit(t, vec(complex(0, 0), complex(0, negZ64)), evalUnaryOp(t, hlo.OpLog1p, vec(complex(0, 0), complex(negZ64, negZ64))))
}

func TestRealImagComplex(t *testing.T) {
	x := vec(complex(1.5, -2), complex(negZ64, nan64))
	assertLit(t, vec(1.5, negZ64), evalUnaryOp(t, hlo.OpReal, x))
	assertLit(t, vec(-2, nan64), evalUnaryOp(t, hlo.OpImag, x))
	got := evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Complex(xs[0], xs[1]) },
		vec(float32(1), negZ32, nan32), vec(float32(-2), 0, inf32))
	assertLit(t, vec(complex64(complex(1, -2)), complex(negZ32, 0), complex(nan32, inf32)), got)
	// real and imag of a real operand: the operand and zeros (XLA's rule).
	assertLit(t, vec(float32(0), 0), evalUnaryOp(t, hlo.OpImag, vec(float32(3), nan32)))
}

func TestComplexCompare(t *testing.T) {
	x := vec(complex64(complex(1, 2)), complex(0, 0), complex(nan32, 0), complex(1, 2))
	y := vec(complex64(complex(1, 2)), complex(negZ32, negZ32), complex(nan32, 0), complex(1, 3))
	cmp := func(dir hlo.ComparisonDirection) *hlo.Literal {
		return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Compare(xs[0], xs[1], dir) }, x, y)
	}
	assertLit(t, vec(true, true, false, false), cmp(hlo.CmpEQ))
	assertLit(t, vec(false, false, true, true), cmp(hlo.CmpNE))
}

func TestComplexConvert(t *testing.T) {
	conv := func(x *hlo.Literal, to hlo.DType) *hlo.Literal {
		return evalOp(t, func(b *hlo.Builder, xs []*hlo.Instruction) *hlo.Instruction { return b.Convert(xs[0], to) }, x)
	}
	assertLit(t, vec(complex64(complex(-3, 0)), complex(16777216, 0)), conv(vec(int32(-3), 16777217), hlo.C64), "s32 → c64 rounds as s32 → f32")
	assertLit(t, vec(complex64(complex(1, 0)), 0), conv(vec(true, false), hlo.C64))
	assertLit(t, vec(complex(float64(float32(0.1)), float64(float32(-0.2)))), conv(vec(complex64(complex(0.1, -0.2))), hlo.C128))
	assertLit(t, vec(complex64(complex(float32(0.1), float32(-0.2)))), conv(vec(complex(0.1, -0.2)), hlo.C64), "c128 → c64 rounds each part")
	assertLit(t, vec(complex(nan64, 0), complex(negZ64, 0)), conv(vec(nan64, negZ64), hlo.C128))

	// complex → real is refused by the verifier, and by the kernel on unverified IR.
	m := oneInstruction(hlo.OpConvert, hlo.MakeShape(hlo.F32, 1), hlo.Attributes{}, vec(complex64(1)))
	_, err := Eval(m, vec(complex64(1)))
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = EvalComputation(m.Entry, vec(complex64(1)))
	assert.ErrorContains(t, err, "complex to real")
}

// TestComplexReduce sums c64 values through a reduce (the scalar-program path, on
// 64-bit words) and c128 values through reduce_wide.go's fold, and refuses c128 in
// a kernel with no c128 path (all-reduce), naming the reason.
func TestComplexReduce(t *testing.T) {
	text := func(dt string) string {
		return `HloModule m
add {
  a = ` + dt + `[] parameter(0)
  b = ` + dt + `[] parameter(1)
  ROOT s = ` + dt + `[] add(a, b)
}
ENTRY e {
  x = ` + dt + `[2,3] parameter(0)
  z = ` + dt + `[] constant((0, 0))
  ROOT r = ` + dt + `[2] reduce(x, z), dimensions={1}, to_apply=add
}`
	}
	x := mat(dims(2, 3), complex64(complex(1, 2)), complex(3, 4), complex(5, 6), complex(-1, 0), complex(0, -1), complex(0.5, 0.5))
	assertLit(t, vec(complex64(complex(9, 12)), complex(-0.5, -0.5)), evalText(t, text("c64"), x))

	x128 := mat(dims(2, 3), complex(1, 2), complex(3, 4), complex(5, 6), complex(-1, 0), complex(0, -1), complex(0.5, 0.5))
	assertLit(t, vec(complex(9, 12), complex(-0.5, -0.5)), evalText(t, text("c128"), x128))

	// A variadic reduce: the c128 sum and the s32 count of its terms.
	pair := `HloModule m
add {
  a = c128[] parameter(0)
  n = s32[] parameter(1)
  b = c128[] parameter(2)
  m = s32[] parameter(3)
  s = c128[] add(a, b)
  one = s32[] constant(1)
  c = s32[] add(n, one)
  ROOT t = (c128[], s32[]) tuple(s, c)
}
ENTRY e {
  x = c128[2,3] parameter(0)
  y = s32[2,3] parameter(1)
  z = c128[] constant((0, 0))
  k = s32[] constant(0)
  ROOT r = (c128[3], s32[3]) reduce(x, y, z, k), dimensions={0}, to_apply=add
}`
	got := evalText(t, pair, x128, mat(dims(2, 3), make([]int32, 6)...))
	assertLit(t, hlo.TupleLiteral(vec(complex(0, 2), complex(3, 3), complex(5.5, 6.5)), vec(int32(2), 2, 2)), got)

	window := `HloModule m
add {
  a = c128[] parameter(0)
  b = c128[] parameter(1)
  ROOT s = c128[] add(a, b)
}
ENTRY e {
  x = c128[4] parameter(0)
  ROOT r = c128[4] all-reduce(x), replica_groups={}, to_apply=add
}`
	_, err := Eval(parse(t, window), vec(make([]complex128, 4)...))
	require.Error(t, err)
	assert.True(t, errors.Is(err, hlo.ErrUnsupported), "%v", err)
	assert.Contains(t, err.Error(), "16-byte elements")
}

// TestC128Movement: the data-movement ops on c128 (planar) give the values the
// same ops give on c64 (native 64-bit words), for values exact in both.
func TestC128Movement(t *testing.T) {
	body := `
  x = T[2,3] parameter(0)
  y = T[2,3] parameter(1)
  p = pred[2,3] parameter(2)
  i = s32[] parameter(3)
  z = T[] constant((-1, 0.5))
  tr = T[3,2] transpose(x), dimensions={1,0}
  sl = T[2,2] slice(x), slice={[0:2], [1:3]}
  cc = T[4,3] concatenate(x, y), dimensions={0}
  pd = T[3,5] pad(x, z), padding=0_1x1_1
  rv = T[2,3] reverse(x), dimensions={1}
  bc = T[2,2,3] broadcast(x), dimensions={1,2}
  rs = T[6] reshape(x)
  se = T[2,3] select(p, x, y)
  ds = T[1,2] dynamic-slice(x, i, i), dynamic_slice_sizes={1,2}
  du = T[2,3] dynamic-update-slice(x, ds, i, i)
  ROOT t = (T[3,2], T[2,2], T[4,3], T[3,5], T[2,3], T[2,2,3], T[6], T[2,3], T[1,2], T[2,3]) tuple(tr, sl, cc, pd, rv, bc, rs, se, ds, du)
}`
	run := func(dt string, x, y *hlo.Literal) *hlo.Literal {
		text := "HloModule m\nENTRY e {" + strings.ReplaceAll(body, "T[", dt+"[")
		return evalText(t, text, x, y, mat(dims(2, 3), true, false, true, false, true, false), scalar(int32(1)))
	}
	vals := []complex128{complex(1, 2), complex(3, -4), complex(5, 6), complex(-7, 8), complex(9, 0), complex(0, -10)}
	x64, x128 := complexVec[complex64](vals), complexVec[complex128](vals)
	y64, y128 := reshapeLit(t, complexVec[complex64](append(vals[3:], vals[:3]...))), reshapeLit(t, complexVec[complex128](append(vals[3:], vals[:3]...)))
	want := run("c64", reshapeLit(t, x64), y64)
	got := run("c128", reshapeLit(t, x128), y128)
	for i, w := range want.Elems() {
		g := got.Elems()[i]
		require.Equal(t, w.NumElements(), g.NumElements())
		for j := 0; j < w.NumElements(); j++ {
			assert.Equal(t, w.Complex128(j), g.Complex128(j), "tuple element %d, element %d", i, j)
		}
	}
}

func reshapeLit(t *testing.T, l *hlo.Literal) *hlo.Literal {
	out, err := hlo.LiteralFromBytes(hlo.MakeShape(l.DType(), 2, 3), l.Bytes())
	require.NoError(t, err)
	return out
}

// TestC64ProductInF32: the c64 product is the textbook formula in f32, each
// operation rounded (XLA's and the GPU's): (1e30 − 1e30i)² has products that
// overflow f32, so its real part is inf − inf = NaN, where f64 would give 0; c128
// computes the same numbers in f64.
func TestC64ProductInF32(t *testing.T) {
	z := complex(1e30, -1e30)
	assertLit(t, vec(complex(nan32, float32(math.Inf(-1)))), evalBinaryOp(t, hlo.OpMultiply, vec(complex64(z)), vec(complex64(z))))
	re, im := real(z), imag(z) // variables: Go's constant arithmetic would be exact
	assertLit(t, vec(complex(re*re-im*im, re*im+im*re)), evalBinaryOp(t, hlo.OpMultiply, vec(z), vec(z)))
}

// TestC64Sort sorts c64 values by a comparator on their real parts (the word
// path: the comparator takes the parts of 64-bit words apart).
func TestC64Sort(t *testing.T) {
	text := `HloModule m
lt {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ra = f32[] real(a)
  rb = f32[] real(b)
  ROOT l = pred[] compare(ra, rb), direction=LT
}
ENTRY e {
  x = c64[4] parameter(0)
  ROOT s = c64[4] sort(x), dimensions={0}, is_stable=true, to_apply=lt
}`
	x := vec(complex64(complex(3, -1)), complex(-2, 5), complex(3, 7), complex(0, 0))
	assertLit(t, vec(complex64(complex(-2, 5)), complex(0, 0), complex(3, -1), complex(3, 7)), evalText(t, text, x))
}
