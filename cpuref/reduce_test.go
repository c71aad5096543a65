package cpuref

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

var addF32Comp = addComp("f32")

// addComp is the scalar computation "add" adding two values of element type ty.
func addComp(ty string) string {
	return fmt.Sprintf(`
add {
  x = %[1]s[] parameter(0)
  y = %[1]s[] parameter(1)
  ROOT s = %[1]s[] add(x, y)
}
`, ty)
}

const (
	maxF32Comp = `
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
`
	geF32Comp = `
ge {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GE
}
`
)

// withComps builds a module from helper computations and an entry body.
func withComps(comps, body string) string {
	return "HloModule m\n" + comps + "\nENTRY e {\n" + body + "\n}"
}

func seq(n int, start float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = start + float32(i)
	}
	return v
}

func TestReduceSeveralDims(t *testing.T) {
	x := mat(dims(2, 3, 4), seq(24, 1)...)
	// Σ over i∈{0,1}, k∈{0..3} of 12i + 4j + k + 1 = 32j + 68.
	assertLit(t, vec(float32(68), 100, 132), evalText(t, withComps(addF32Comp, `
  x = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(x, z), dimensions={0,2}, to_apply=add`), x))
	assertLit(t, scalar(float32(300)), evalText(t, withComps(addF32Comp, `
  x = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add`), x))
	// Reducing the last dimension: row sums.
	assertLit(t, mat(dims(2, 3), float32(10), 26, 42, 58, 74, 90), evalText(t, withComps(addF32Comp, `
  x = f32[2,3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,3] reduce(x, z), dimensions={2}, to_apply=add`), x))
}

func TestReduceEdgeCases(t *testing.T) {
	// No reduced dimensions: every element is combined once with the init value.
	assertLit(t, vec(float32(11), 12), evalText(t, withComps(addF32Comp, `
  x = f32[2] parameter(0)
  z = f32[] constant(10)
  ROOT r = f32[2] reduce(x, z), dimensions={}, to_apply=add`), vec(float32(1), 2)))
	// A zero-sized reduced dimension gives the init value.
	assertLit(t, vec(-inf32, -inf32, -inf32), evalText(t, withComps(maxF32Comp, `
  x = f32[0,3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[3] reduce(x, z), dimensions={0}, to_apply=max`), mat[float32](dims(0, 3))))
	// NaN propagates through maximum.
	assertLit(t, scalar(nan32), evalText(t, withComps(maxF32Comp, `
  x = f32[3] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=max`), vec(float32(1), nan32, 3)))
	// Integer reductions wrap.
	assertLit(t, scalar(int32(math.MinInt32)), evalText(t, withComps(addComp("s32"), `
  x = s32[2] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add`), vec(int32(math.MaxInt32), 1)))
}

func TestReduceOrderIsRowMajorLeftFold(t *testing.T) {
	// Row-major: ((((0 + 1e8) + 1) + -1e8) + 1) = 1 in f32, since 1e8 + 1 rounds to
	// 1e8. Column-major order would give 2, a pairwise tree 0 or 2.
	x := mat(dims(2, 2), float32(1e8), 1, -1e8, 1)
	assertLit(t, scalar(float32(1)), evalText(t, withComps(addF32Comp, `
  x = f32[2,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add`), x))
}

func TestReduceAccumulatesInTheReducerType(t *testing.T) {
	// An f16 add reducer rounds every partial sum to f16: past 2048 adding 1 ties to
	// even and the sum stays at 2048.
	ones := make([]float32, 4096)
	for i := range ones {
		ones[i] = 1
	}
	out := evalText(t, withComps(addComp("f16"), `
  x = f16[4096] parameter(0)
  z = f16[] constant(0)
  ROOT r = f16[] reduce(x, z), dimensions={0}, to_apply=add`), f16s(ones...))
	assert.Equal(t, 2048.0, out.Float64(0))
}

const argmaxComp = `
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
`

func TestReduceTwoOperandArgmax(t *testing.T) {
	x := mat(dims(2, 3), float32(1), 5, 5, 7, -1, 7)
	out := evalText(t, withComps(argmaxComp, `
  x = f32[2,3] parameter(0)
  i = s32[2,3] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, i, ninf, zero), dimensions={1}, to_apply=argmax`), x)
	assertLit(t, hlo.TupleLiteral(vec(float32(5), 7), vec(int32(1), 0)), out, "ties keep the lower index")
}

func TestReduceWithNonScalarProgramReducer(t *testing.T) {
	// A reducer that calls another computation runs through the general evaluator;
	// the result is the same.
	comps := addF32Comp + `
add_via_call {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = f32[] call(x, y), to_apply=add
}`
	out := evalText(t, withComps(comps, `
  x = f32[2,3] parameter(0)
  z = f32[] constant(0.5)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=add_via_call`), iota6())
	assertLit(t, vec(float32(6.5), 15.5), out)

	m := parse(t, withComps(comps, `
  ROOT z = f32[] constant(0)`))
	ev := newEvaluator(context.Background(), Limits{})
	viaCall, err := ev.scalarFunc(m.Computation("add_via_call"))
	require.NoError(t, err)
	assert.Nil(t, viaCall.prog, "a reducer with a call is not compiled")
	add, err := ev.scalarFunc(m.Computation("add"))
	require.NoError(t, err)
	assert.NotNil(t, add.prog, "a plain add reducer is compiled")
}

func TestReduceMillionElements(t *testing.T) {
	ones := make([]float32, 1<<20)
	for i := range ones {
		ones[i] = 1
	}
	out := evalText(t, withComps(addF32Comp, `
  x = f32[1048576] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add`), vec(ones...))
	assertLit(t, scalar(float32(1<<20)), out)
}

func BenchmarkReduceMillionElements(b *testing.B) {
	m, err := hlo.ParseModule(withComps(addF32Comp, `
  x = f32[1048576] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add`))
	require.NoError(b, err)
	x := vec(make([]float32, 1<<20)...)
	for b.Loop() {
		_, err := Eval(m, x)
		require.NoError(b, err)
	}
}

func TestReduceWindow(t *testing.T) {
	rw := func(window string, x *hlo.Literal, init float32, outLen int) *hlo.Literal {
		t.Helper()
		n := x.Shape().Dims[0]
		return evalText(t, withComps(addF32Comp, `
  x = f32[`+itoa(n)+`] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[`+itoa(int64(outLen))+`] reduce-window(x, z), window={`+window+`}, to_apply=add`), x, scalar(init))
	}
	x4 := vec(float32(1), 2, 3, 4)
	assertLit(t, vec(float32(3), 5, 7), rw("size=2", x4, 0, 3))
	assertLit(t, vec(float32(3), 7), rw("size=2 stride=2", x4, 0, 2))
	x3 := vec(float32(1), 2, 3)
	assertLit(t, vec(float32(3), 6, 5), rw("size=3 pad=1_1", x3, 0, 3))
	// Padding contributes nothing, even with an init value that is not the identity.
	assertLit(t, vec(float32(13), 16, 15), rw("size=3 pad=1_1", x3, 10, 3))
	// Base dilation 2: 1 _ 2 _ 3, windows of 2.
	assertLit(t, vec(float32(1), 2, 2, 3), rw("size=2 lhs_dilate=2", x3, 0, 4))
	// Window dilation 2: taps 0 and 2.
	assertLit(t, vec(float32(4), 6, 8), rw("size=2 rhs_dilate=2", vec(float32(1), 2, 3, 4, 5), 0, 3))
	// Stride with low padding: [p 1] [2 3] [4 5].
	assertLit(t, vec(float32(1), 5, 9), rw("size=2 stride=2 pad=1_0", vec(float32(1), 2, 3, 4, 5), 0, 3))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestReduceWindowMaxPool2D(t *testing.T) {
	x := mat(dims(4, 4), seq(16, 0)...)
	assertLit(t, mat(dims(2, 2), float32(5), 7, 13, 15), evalText(t, withComps(maxF32Comp, `
  x = f32[4,4] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, z), window={size=2x2 stride=2x2}, to_apply=max`), x))
}

func TestReduceWindowTwoOperands(t *testing.T) {
	out := evalText(t, withComps(`
summax {
  as = f32[] parameter(0)
  am = f32[] parameter(1)
  xs = f32[] parameter(2)
  xm = f32[] parameter(3)
  s = f32[] add(as, xs)
  m = f32[] maximum(am, xm)
  ROOT r = (f32[], f32[]) tuple(s, m)
}`, `
  x = f32[3] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  ROOT r = (f32[2], f32[2]) reduce-window(x, x, zero, ninf), window={size=2}, to_apply=summax`), vec(float32(1), 3, 2))
	assertLit(t, hlo.TupleLiteral(vec(float32(4), 5), vec(float32(3), 3)), out)
}

func selectAndScatter(t *testing.T, operand, source *hlo.Literal, window string, init float32) *hlo.Literal {
	t.Helper()
	return evalText(t, withComps(addF32Comp+geF32Comp, `
  x = `+operand.Shape().String()+` parameter(0)
  s = `+source.Shape().String()+` parameter(1)
  z = f32[] parameter(2)
  ROOT r = `+operand.Shape().String()+` select-and-scatter(x, s, z), window={`+window+`}, select=ge, scatter=add`),
		operand, source, scalar(init))
}

func TestSelectAndScatter(t *testing.T) {
	src := vec(float32(10), 20)
	assertLit(t, vec(float32(0), 10, 20, 0), selectAndScatter(t, vec(float32(1), 5, 3, 2), src, "size=2 stride=2", 0))
	// Overlapping windows both select 5 and add up.
	assertLit(t, vec(float32(0), 30, 0), selectAndScatter(t, vec(float32(1), 5, 3), src, "size=2", 0))
	// GE keeps the first of equal values.
	assertLit(t, vec(float32(7), 0), selectAndScatter(t, vec(float32(2), 2), vec(float32(7)), "size=2", 0))
	// Padding is never selected: windows [pad 1] and [5 3].
	assertLit(t, vec(float32(10), 20, 0), selectAndScatter(t, vec(float32(1), 5, 3), src, "size=2 stride=2 pad=1_1", 0))
	// 2-D, init 1: the maxima 9 at (0,1) and 8 at (1,2).
	x := mat(dims(2, 4), float32(1), 9, 3, 4, 5, 6, 8, 2)
	assertLit(t, mat(dims(2, 4), float32(1), 11, 1, 1, 1, 1, 21, 1),
		selectAndScatter(t, x, mat(dims(1, 2), float32(10), 20), "size=2x2 stride=2x2", 1))
}
