package cpuref

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The compiled register program and the general evaluator must agree on every
// scalar computation: the program is only a faster way to run the same kernels.
func TestScalarProgramMatchesGeneralEvaluator(t *testing.T) {
	m := parse(t, withComps(`
f {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] convert(b)
  lo = f32[] constant(-1)
  hi = f32[] constant(1)
  cl = f32[] clamp(lo, a, hi)
  e = f32[] exponential(cl)
  prod = f32[] multiply(e, c)
  lt = pred[] compare(a, c), direction=LT
  s = f32[] select(lt, prod, a)
  n = s32[] convert(s)
  sh = s32[] shift-left(n, b)
  bits = s32[] bitcast-convert(s)
  x = s32[] xor(sh, bits)
  ROOT t = (f32[], s32[]) tuple(s, x)
}`, `
  ROOT z = f32[] constant(0)`))
	ev := newEvaluator(context.Background(), Limits{})
	compiled, err := ev.scalarFunc(m.Computation("f"))
	require.NoError(t, err)
	require.NotNil(t, compiled.prog)
	general := *compiled
	general.prog = nil

	as := []float32{-2, -0.5, negZ32, 0, 0.7, 3, nan32, inf32, -inf32, 3e9}
	bs := []int32{-3, 0, 2, 5, 40, math.MinInt32}
	got, want := make([]uint64, 2), make([]uint64, 2)
	for _, a := range as {
		for _, b := range bs {
			args := []uint64{uint64(math.Float32bits(a)), uint64(uint32(b))}
			require.NoError(t, compiled.call(args, got))
			require.NoError(t, general.call(args, want))
			assert.Equal(t, want, got, "a=%v b=%v", a, b)
		}
	}
}
