package vkxla_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// rng on the device: the expansion (state parameter, Philox bits, values) against
// cpuref's definition from the same seed's state, and the per-handle state.

func init() {
	opCases[hlo.OpRng] = rngCases
	opCases[hlo.OpRngGetAndUpdateState] = rngStateCases
}

// rngCases draw every type the device has, uniform and (floats) normal, in shapes
// with odd and even split dimensions, two draws per module so the second starts
// at the first's delta. Uniform draws are exact; normal ones allow the Box–Muller
// transform's error (vkxla.Tolerance(rng)).
func rngCases(t testing.TB, g *gen) []opCase {
	var cases []opCase
	for _, dt := range g.dtypes {
		if !slicesContains(hlo.RngTypes, dt) {
			continue
		}
		dists := []hlo.RngDistribution{hlo.RngUniform}
		if dt.IsFloat() {
			dists = append(dists, hlo.RngNormal)
		}
		for _, dist := range dists {
			for _, dims := range [][]int64{{}, {7}, {5, 3}, {2, 1000}} {
				b := hlo.NewBuilder("rng")
				lo, hi := b.Parameter(hlo.Scalar(dt), "a"), b.Parameter(hlo.Scalar(dt), "b")
				s := hlo.MakeShape(dt, dims...)
				root := b.Tuple(b.Rng(lo, hi, dist, s), b.Rng(lo, hi, dist, s))
				la, lb := rngBounds(dt, dist)
				spec := vkxla.ErrorSpec{}
				if dist == hlo.RngNormal {
					spec = vkxla.Tolerance(hlo.OpRng, dt)
				}
				cases = append(cases, opCase{name: fmt.Sprintf("%v/%v/%v", dist, dt, dims),
					module: mustBuild(t, b, root), inputs: []*hlo.Literal{la, lb}, spec: spec})
			}
		}
	}
	return cases
}

func slicesContains(xs []hlo.DType, x hlo.DType) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// rngBounds are a and b: a range with negative and positive values (a mean and
// standard deviation for rng_normal).
func rngBounds(dt hlo.DType, dist hlo.RngDistribution) (*hlo.Literal, *hlo.Literal) {
	la, lb := hlo.NewLiteral(hlo.Scalar(dt)), hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dist == hlo.RngNormal:
		la.SetFloat64(0, 0.5)
		lb.SetFloat64(0, 2)
	case dt.IsFloat():
		la.SetFloat64(0, -1.5)
		lb.SetFloat64(0, 3.25)
	case dt.IsUnsigned():
		la.SetUint64(0, 7)
		lb.SetUint64(0, 1<<31+12345)
	default:
		la.SetInt64(0, -1000)
		lb.SetInt64(0, 77777)
	}
	return la, lb
}

// rngStateCases return the states themselves (and a draw between them).
func rngStateCases(t testing.TB, _ *gen) []opCase {
	b := hlo.NewBuilder("rng_state")
	s1 := b.RngGetAndUpdateState(5)
	draw := b.Rng(b.ScalarConstant(hlo.F32, 0), b.ScalarConstant(hlo.F32, 1), hlo.RngUniform, hlo.MakeShape(hlo.F32, 3))
	s2 := b.RngGetAndUpdateState(0)
	s3 := b.RngGetAndUpdateState(1 << 40)
	return []opCase{{name: "three states", module: mustBuild(t, b, b.Tuple(s1, draw, s2, s3))}}
}

const rngModuleText = `HloModule dropout
ENTRY main {
  x = f32[64] parameter(0)
  zero = f32[] constant(0)
  one = f32[] constant(1)
  u = f32[64]{0} rng(zero, one), distribution=rng_uniform
  half = f32[] constant(0.5)
  halves = f32[64] broadcast(half), dimensions={}
  keep = pred[64] compare(u, halves), direction=LT
  zeros = f32[64] broadcast(zero), dimensions={}
  ROOT y = f32[64] select(keep, x, zeros)
}`

// Each handle has its own stream: two runs of a handle draw differently, two
// handles of one cached compilation draw differently, and a seed makes a handle's
// runs repeat those of any handle seeded alike, run after run, on the state cpuref
// computes (advanced by the program's 64 units per run).
func TestRngStatePerHandle(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m, err := hlo.ParseModule(rngModuleText)
	require.NoError(t, err)
	x := hlo.NewLiteral(hlo.MakeShape(hlo.F32, 64))
	for i := range 64 {
		x.SetFloat64(i, float64(i+1))
	}
	compile := func() *vkxla.Executable {
		exe, err := rt.Compile(ctx, m)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, exe.Close()) })
		return exe
	}
	run := func(exe *vkxla.Executable) *hlo.Literal {
		out, err := exe.Run(ctx, x)
		require.NoError(t, err)
		return out[0]
	}
	h1, h2 := compile(), compile()
	require.Equal(t, 1, rt.CacheStats().Hits, "the second compile is a cache hit")

	a1, a2, b1 := run(h1), run(h1), run(h2)
	assert.Error(t, hlo.LiteralsEqual(a1, a2), "two runs of a handle drew alike")
	assert.Error(t, hlo.LiteralsEqual(a1, b1), "two handles drew alike")

	require.NoError(t, h1.SeedRng(99))
	require.NoError(t, h2.SeedRng(99))
	state := hlo.RngSeedState(99)
	for r := range 3 {
		want, next, err := cpuref.Limits{}.EvalWithRngState(ctx, m, state, x)
		require.NoError(t, err)
		g1, g2 := run(h1), run(h2)
		require.NoError(t, hlo.LiteralsEqual(g1, want), "run %d of handle 1", r)
		require.NoError(t, hlo.LiteralsEqual(g2, want), "run %d of handle 2", r)
		state = next
		s1, err := h1.RngState()
		require.NoError(t, err)
		assert.Equal(t, hlo.AdvanceRngState(hlo.RngSeedState(99), uint64(64*(r+1))), s1)
		assert.Equal(t, state, s1)
	}

	// RunOnDevice feeds and advances the state the same way.
	require.NoError(t, h1.SeedRng(99))
	outs, err := h1.RunOnDevice(ctx, x)
	require.NoError(t, err)
	got, err := outs[0].ToHost(ctx)
	require.NoError(t, err)
	require.NoError(t, outs[0].Close())
	want, _, err := cpuref.Limits{}.EvalWithRngState(ctx, m, hlo.RngSeedState(99), x)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got, want))

	require.NoError(t, h1.Close())
	assert.ErrorIs(t, h1.SeedRng(1), vkxla.ErrClosed)
}

// rng inside a while body draws afresh each iteration, on the device as in
// cpuref, and the handle keeps the state the loop ended at (3 iterations of 4
// units). rng in a called computation is refused at compile time, naming it.
func TestRngInLoop(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m, err := hlo.ParseModule(`HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
  a = f32[] constant(0)
  b = f32[] constant(1)
  noise = f32[4] rng(a, b), distribution=rng_normal
  y = f32[4] add(x, noise)
  ROOT t = (s32[], f32[4]) tuple(j, y)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
}`)
	require.NoError(t, err)
	x := hlo.MustFromSlice([]int64{4}, []float32{1, 2, 3, 4})
	checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpRng, hlo.F32), x)

	exe, err := rt.Compile(ctx, m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	require.NoError(t, exe.SeedRng(5))
	_, err = exe.Run(ctx, x)
	require.NoError(t, err)
	_, next, err := cpuref.Limits{}.EvalWithRngState(ctx, m, hlo.RngSeedState(5), x)
	require.NoError(t, err)
	got, err := exe.RngState()
	require.NoError(t, err)
	assert.Equal(t, hlo.AdvanceRngState(hlo.RngSeedState(5), 12), got)
	assert.Equal(t, next, got)

	called, err := hlo.ParseModule(`HloModule c
draws {
  p = f32[4] parameter(0)
  a = f32[] constant(0)
  b = f32[] constant(1)
  noise = f32[4] rng(a, b), distribution=rng_uniform
  ROOT s = f32[4] add(p, noise)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=draws
}`)
	require.NoError(t, err)
	_, err = rt.Compile(ctx, called)
	require.ErrorIs(t, err, vkxla.ErrUnsupported)
	assert.Contains(t, err.Error(), "noise")
}
