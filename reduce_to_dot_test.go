package vkxla_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// The sums of broadcast products GoMLX writes for the gradients of DotGeneral (x ⊗ g
// reduced over the batch), run through passes.ReduceToDot as GEMMs, against cpuref
// of the module as written, fused and unfused; and the optimised module holds a
// dot and no reduce.
var broadcastProductCases = []dumpCase{
	{"weight gradient xᵀ·g of a 256×32 → 64 layer", `HloModule dot_vjp_weight
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[256,32]{1,0} parameter(0)
  g = f32[256,64]{1,0} parameter(1)
  bx = f32[256,32,64]{2,1,0} broadcast(x), dimensions={0,1}
  bg = f32[256,32,64]{2,1,0} broadcast(g), dimensions={0,2}
  p = f32[256,32,64]{2,1,0} multiply(bx, bg)
  z = f32[] constant(0)
  ROOT r = f32[32,64]{1,0} reduce(p, z), dimensions={0}, to_apply=add
}`, 1},
	{"input gradient g·Wᵀ, result transposed", `HloModule dot_vjp_input
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  g = f32[128,64]{1,0} parameter(0)
  w = f32[32,64]{1,0} parameter(1)
  bg = f32[32,128,64]{2,1,0} broadcast(g), dimensions={1,2}
  bw = f32[32,128,64]{2,1,0} broadcast(w), dimensions={0,2}
  p = f32[32,128,64]{2,1,0} multiply(bg, bw)
  z = f32[] constant(0)
  ROOT r = f32[32,128]{1,0} reduce(p, z), dimensions={2}, to_apply=add
}`, 0},
	{"batched, one operand not broadcast", `HloModule batched_product
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  q = f32[4,16,8]{2,1,0} parameter(0)
  k = f32[4,24,8]{2,1,0} parameter(1)
  bk = f32[4,16,24,8]{3,2,1,0} broadcast(k), dimensions={0,2,3}
  bq = f32[4,16,24,8]{3,2,1,0} broadcast(q), dimensions={0,1,3}
  p = f32[4,16,24,8]{3,2,1,0} multiply(bq, bk)
  z = f32[] constant(0)
  ROOT r = f32[4,16,24]{2,1,0} reduce(p, z), dimensions={3}, to_apply=add
}`, 1},
}

func TestReduceToDotOnDevice(t *testing.T) {
	runTextCases(t, broadcastProductCases)
	rt := newRuntime(t)
	for _, c := range broadcastProductCases {
		m, err := hlo.ParseModule(c.text)
		require.NoError(t, err, c.name)
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(t, err, c.name)
		text := hlo.Print(exe.OptimizedModule())
		require.NoError(t, exe.Close())
		require.Contains(t, text, " dot(", c.name)
		require.NotContains(t, text, " reduce(", c.name)
	}
}
