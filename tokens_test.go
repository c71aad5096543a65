package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// orderedEffects is a program as JAX dumps one with ordered effects: a token
// parameter threaded through after-all, an opt-barrier, an identity custom-call
// and a while loop, and returned with the values. tokenless is the same
// computation with every token taken out.
const orderedEffects = `HloModule jit_ordered_effects
cond.7 {
  p.8 = (s32[], token[], f32[64]{0}) parameter(0)
  i.9 = s32[] get-tuple-element(p.8), index=0
  n.10 = s32[] constant(3)
  ROOT lt.11 = pred[] compare(i.9, n.10), direction=LT
}
body.12 {
  p.13 = (s32[], token[], f32[64]{0}) parameter(0)
  i.14 = s32[] get-tuple-element(p.13), index=0
  one.15 = s32[] constant(1)
  next.16 = s32[] add(i.14, one.15)
  tok.17 = token[] get-tuple-element(p.13), index=1
  after-all.18 = token[] after-all(tok.17)
  x.19 = f32[64]{0} get-tuple-element(p.13), index=2
  sine.20 = f32[64]{0} sine(x.19)
  ROOT tuple.21 = (s32[], token[], f32[64]{0}) tuple(next.16, after-all.18, sine.20)
}
ENTRY main.30 {
  Arg_0.1 = token[] parameter(0)
  Arg_1.2 = f32[64]{0} parameter(1)
  after-all.3 = token[] after-all(Arg_0.1, Arg_0.1)
  fresh.4 = token[] after-all()
  tuple.5 = (token[], f32[64]{0}, token[]) tuple(after-all.3, Arg_1.2, fresh.4)
  opt-barrier.6 = (token[], f32[64]{0}, token[]) opt-barrier(tuple.5)
  tok.22 = token[] get-tuple-element(opt-barrier.6), index=0
  sharded.23 = token[] custom-call(tok.22), custom_call_target="Sharding"
  x.24 = f32[64]{0} get-tuple-element(opt-barrier.6), index=1
  zero.25 = s32[] constant(0)
  init.26 = (s32[], token[], f32[64]{0}) tuple(zero.25, sharded.23, x.24)
  while.27 = (s32[], token[], f32[64]{0}) while(init.26), condition=cond.7, body=body.12
  tok.28 = token[] get-tuple-element(while.27), index=1
  y.29 = f32[64]{0} get-tuple-element(while.27), index=2
  ROOT tuple.31 = (token[], f32[64]{0}) tuple(tok.28, y.29)
}`

const tokenless = `HloModule jit_ordered_effects
cond.7 {
  p.8 = (s32[], f32[64]{0}) parameter(0)
  i.9 = s32[] get-tuple-element(p.8), index=0
  n.10 = s32[] constant(3)
  ROOT lt.11 = pred[] compare(i.9, n.10), direction=LT
}
body.12 {
  p.13 = (s32[], f32[64]{0}) parameter(0)
  i.14 = s32[] get-tuple-element(p.13), index=0
  one.15 = s32[] constant(1)
  next.16 = s32[] add(i.14, one.15)
  x.19 = f32[64]{0} get-tuple-element(p.13), index=1
  sine.20 = f32[64]{0} sine(x.19)
  ROOT tuple.21 = (s32[], f32[64]{0}) tuple(next.16, sine.20)
}
ENTRY main.30 {
  Arg_1.2 = f32[64]{0} parameter(0)
  tuple.5 = (f32[64]{0}) tuple(Arg_1.2)
  opt-barrier.6 = (f32[64]{0}) opt-barrier(tuple.5)
  x.24 = f32[64]{0} get-tuple-element(opt-barrier.6), index=0
  zero.25 = s32[] constant(0)
  init.26 = (s32[], f32[64]{0}) tuple(zero.25, x.24)
  while.27 = (s32[], f32[64]{0}) while(init.26), condition=cond.7, body=body.12
  y.29 = f32[64]{0} get-tuple-element(while.27), index=1
  ROOT tuple.31 = (f32[64]{0}) tuple(y.29)
}`

// TestTokens: the program runs on the device as cpuref runs it (the token output
// is an empty token[] literal), and its plan is the tokenless program's to the
// byte: no token is given memory or copied.
func TestTokens(t *testing.T) {
	rt := newRuntime(t)
	g := &gen{rng: rand.New(rand.NewPCG(7, 7))}
	x := uniform(g, hlo.MakeShape(hlo.F32, 64), -1, 1, 0)
	tok := hlo.NewLiteral(hlo.Scalar(hlo.Token))
	m, err := hlo.ParseModule(orderedEffects)
	require.NoError(t, err)
	checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpSin, hlo.F32), tok, x)

	plain, err := hlo.ParseModule(tokenless)
	require.NoError(t, err)
	stats := func(m *hlo.Module) vkxla.MemoryStats {
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(t, err)
		defer func() { require.NoError(t, exe.Close()) }()
		return exe.MemoryStats()
	}
	assert.Equal(t, stats(plain), stats(m))
	out, err := func() ([]*hlo.Literal, error) {
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(t, err)
		defer func() { require.NoError(t, exe.Close()) }()
		return exe.Run(context.Background(), tok, x)
	}()
	require.NoError(t, err)
	assert.Equal(t, hlo.Scalar(hlo.Token), out[0].Shape())
	assert.Empty(t, out[0].Bytes())
}

// TestTokensOnDevice: a token uploads, feeds RunOnDevice, and comes back as a
// device tensor of no bytes.
func TestTokensOnDevice(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m, err := hlo.ParseModule(orderedEffects)
	require.NoError(t, err)
	exe, err := rt.Compile(ctx, m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	tok, err := rt.Upload(ctx, hlo.NewLiteral(hlo.Scalar(hlo.Token)))
	require.NoError(t, err)
	defer func() { require.NoError(t, tok.Close()) }()
	x := hlo.NewLiteral(hlo.MakeShape(hlo.F32, 64))
	outs, err := exe.RunOnDevice(ctx, tok, x)
	require.NoError(t, err)
	for _, o := range outs {
		defer func() { require.NoError(t, o.Close()) }()
	}
	got, err := outs[0].ToHost(ctx)
	require.NoError(t, err)
	assert.Equal(t, hlo.Scalar(hlo.Token), got.Shape())
	assert.Empty(t, got.Bytes())
}

// The differential suite's case of after-all: the ordered-effects program.
func init() {
	opCases[hlo.OpAfterAll] = func(t testing.TB, g *gen) []opCase {
		return []opCase{textCase(t, "ordered effects", orderedEffects, vkxla.Tolerance(hlo.OpSin, hlo.F32),
			hlo.NewLiteral(hlo.Scalar(hlo.Token)), uniform(g, hlo.MakeShape(hlo.F32, 64), -1, 1, 0))}
	}
}
