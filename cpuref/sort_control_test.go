package cpuref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

const (
	ltF32 = `
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
`
	ltTotal = `
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
`
	// Orders by the s32 key only, so equal keys keep their relative order when stable.
	byKey = `
bykey {
  ka = s32[] parameter(0)
  kb = s32[] parameter(1)
  va = f32[] parameter(2)
  vb = f32[] parameter(3)
  ROOT c = pred[] compare(ka, kb), direction=LT
}
`
)

func TestSortOneOperand(t *testing.T) {
	assertLit(t, vec(float32(-2), 0, 1, 3), evalText(t, withComps(ltF32, `
  x = f32[4] parameter(0)
  ROOT s = f32[4] sort(x), dimensions={0}, to_apply=lt`), vec(float32(3), -2, 1, 0)))
	// TOTALORDER places -0 before +0 and NaN last.
	assertLit(t, vec(-inf32, negZ32, 0, 1, nan32), evalText(t, withComps(ltTotal, `
  x = f32[5] parameter(0)
  ROOT s = f32[5] sort(x), dimensions={0}, to_apply=lt`), vec(nan32, 1, 0, negZ32, -inf32)))
	// Along dimension 0 and along dimension 1 of a matrix.
	x := mat(dims(2, 3), float32(3), 1, 2, 0, 5, -1)
	assertLit(t, mat(dims(2, 3), float32(0), 1, -1, 3, 5, 2), evalText(t, withComps(ltF32, `
  x = f32[2,3] parameter(0)
  ROOT s = f32[2,3] sort(x), dimensions={0}, to_apply=lt`), x))
	assertLit(t, mat(dims(2, 3), float32(1), 2, 3, -1, 0, 5), evalText(t, withComps(ltF32, `
  x = f32[2,3] parameter(0)
  ROOT s = f32[2,3] sort(x), dimensions={1}, to_apply=lt`), x))
	assertLit(t, mat[float32](dims(0, 3)), evalText(t, withComps(ltF32, `
  x = f32[0,3] parameter(0)
  ROOT s = f32[0,3] sort(x), dimensions={1}, to_apply=lt`), mat[float32](dims(0, 3))))
}

func TestSortTwoOperandsIsStable(t *testing.T) {
	out := evalText(t, withComps(byKey, `
  k = s32[6] parameter(0)
  v = f32[6] parameter(1)
  ROOT s = (s32[6], f32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=bykey`),
		vec(int32(2), 1, 2, 1, 0, 2), vec(float32(0), 1, 2, 3, 4, 5))
	assertLit(t, hlo.TupleLiteral(vec(int32(0), 1, 1, 2, 2, 2), vec(float32(4), 1, 3, 0, 2, 5)), out)
}

func TestWhileSumsOneToTen(t *testing.T) {
	out := evalText(t, `HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ten = s32[] constant(10)
  ROOT c = pred[] compare(i, ten), direction=LE
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  sum = s32[] add(acc, i)
  ROOT t = (s32[], s32[]) tuple(next, sum)
}
ENTRY e {
  one = s32[] constant(1)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(one, zero)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT sum = s32[] get-tuple-element(w), index=1
}`)
	assertLit(t, scalar(int32(55)), out)
}

const branches = `
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
double {
  x = f32[] parameter(0)
  ROOT d = f32[] add(x, x)
}
square {
  x = f32[] parameter(0)
  ROOT s = f32[] multiply(x, x)
}
`

func TestConditionalByIndex(t *testing.T) {
	m := parse(t, withComps(branches, `
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x, x), branch_computations={neg, double, square}`))
	for _, c := range []struct {
		index int32
		want  float32
	}{{0, -3}, {1, 6}, {2, 9}, {3, 9}, {100, 9}, {-1, 9}} {
		out, err := Eval(m, scalar(c.index), scalar(float32(3)))
		require.NoError(t, err)
		assertLit(t, scalar(c.want), out, "index %d (out of range picks the last branch)", c.index)
	}
}

func TestConditionalByPred(t *testing.T) {
	m := parse(t, withComps(branches, `
  p = pred[] parameter(0)
  x = f32[] parameter(1)
  y = f32[] parameter(2)
  ROOT c = f32[] conditional(p, x, y), true_computation=neg, false_computation=square`))
	out, err := Eval(m, scalar(true), scalar(float32(3)), scalar(float32(5)))
	require.NoError(t, err)
	assertLit(t, scalar(float32(-3)), out)
	out, err = Eval(m, scalar(false), scalar(float32(3)), scalar(float32(5)))
	require.NoError(t, err)
	assertLit(t, scalar(float32(25)), out)
}

func TestCallAndTuples(t *testing.T) {
	out := evalText(t, withComps(`
swap {
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[2]) tuple(b, a)
}`, `
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(a, b)
  ROOT c = (s32[], f32[2]) call(t), to_apply=swap`), vec(float32(1), 2), scalar(int32(7)))
	assertLit(t, hlo.TupleLiteral(scalar(int32(7)), vec(float32(1), 2)), out)

	// A tuple-shaped entry parameter.
	m := parse(t, oneOp(`
  p = (f32[], (s8[], pred[])) parameter(0)
  q = (s8[], pred[]) get-tuple-element(p), index=1
  ROOT r = pred[] get-tuple-element(q), index=1`))
	out, err := Eval(m, hlo.TupleLiteral(scalar(float32(1)), hlo.TupleLiteral(scalar(int8(2)), scalar(true))))
	require.NoError(t, err)
	assertLit(t, scalar(true), out)
	_, err = Eval(m, hlo.TupleLiteral(scalar(float32(1)), scalar(int8(2))))
	assert.Error(t, err)
}
