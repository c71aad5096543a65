package cpuref

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// fusedProgram has a loop fusion (a+b)*a, an input fusion summing exp over rows, and
// a multi-output fusion (f+r, -r) whose elements the entry subtracts: f + 2r.
const fusedProgram = `HloModule fused
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}
fused_loop {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  s = f32[4] add(p0, p1)
  ROOT m = f32[4] multiply(s, p0)
}
fused_reduce {
  p0 = f32[4,3] parameter(0)
  p1 = f32[] parameter(1)
  e = f32[4,3] exponential(p0)
  ROOT r = f32[4] reduce(e, p1), dimensions={1}, to_apply=add
}
fused_pair {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  sum = f32[4] add(p0, p1)
  neg = f32[4] negate(p1)
  ROOT t = (f32[4], f32[4]) tuple(sum, neg)
}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  xs = f32[4,3] parameter(2)
  zero = f32[] constant(0)
  f = f32[4] fusion(a, b), kind=kLoop, calls=fused_loop
  rows = f32[4] fusion(xs, zero), kind=kInput, calls=fused_reduce
  pair = (f32[4], f32[4]) fusion(f, rows), kind=kLoop, calls=fused_pair
  g0 = f32[4] get-tuple-element(pair), index=0
  g1 = f32[4] get-tuple-element(pair), index=1
  ROOT out = f32[4] subtract(g0, g1)
}`

func TestFusion(t *testing.T) {
	ninf, negZero := float32(math.Inf(-1)), float32(math.Copysign(0, -1))
	a, b := vec[float32](1, 2, 3, 4), vec[float32](0, 1, -1, 2)
	// exp is exact at 0 (1) and -inf (0): the row sums are 3, 1, 1, 0.
	xs := mat(dims(4, 3), 0, 0, 0, ninf, 0, ninf, 0, ninf, ninf, ninf, ninf, ninf)
	// (a+b)*a = 1, 6, 6, 24; plus twice the row sums.
	want := vec[float32](7, 8, 8, 24)
	assertLit(t, want, evalText(t, fusedProgram, a, b, xs))

	// The kind changes nothing that is computed.
	for _, kind := range []string{"kInput", "kOutput", "kCustom"} {
		text := strings.ReplaceAll(fusedProgram, "kind=kLoop", "kind="+kind)
		assertLit(t, want, evalText(t, text, a, b, xs), kind)
	}

	// A multi-output fusion returns its tuple.
	m := parse(t, fusedProgram)
	m.Entry.Root = m.Computation("e").Root.Operands[0].Operands[0] // pair
	pair, err := Eval(m, a, b, xs)
	require.NoError(t, err)
	assertLit(t, hlo.TupleLiteral(vec[float32](4, 7, 7, 24), vec(-3, -1, -1, negZero)), pair)

	// A fusion without its computation is an error, not a panic.
	m = parse(t, fusedProgram)
	m.Computation("e").Root.Operands[0].Operands[0].Called = nil
	_, err = Eval(m, a, b, xs)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = EvalComputation(m.Entry, a, b, xs)
	assert.ErrorContains(t, err, "missing calls")
}
