package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/hlo"
)

// TestLongChainSplitsIntoKernels: a 600-op elementwise chain (negate, add, multiply)
// runs as kernels of passes.DefaultMaxFusedInstructions ops (256, 256 and 88: three
// dispatches, each 256-op kernel generated, validated and compiled by the driver)
// and equals cpuref bit for bit: every op of the chain is correctly rounded on both.
func TestLongChainSplitsIntoKernels(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("chain")
	m := mustBuild(t, b, bench.Chain(b, 600, 64))
	rng := rand.New(rand.NewPCG(6, 0))
	x, y := randomLiteral(rng, m.Entry.Params[0].Shape, unitDomain), randomLiteral(rng, m.Entry.Params[1].Shape, unitDomain)
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, x, y)

	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	kernels := 0
	for _, in := range exe.OptimizedModule().Entry.Instructions {
		if in.Op == hlo.OpFusion {
			kernels++
		}
	}
	require.Equal(t, 3, kernels, "fused kernels of the optimized module")
	_, err = exe.Run(context.Background(), x, y)
	require.NoError(t, err)
	if !rt.Device().Caps().TimestampsSupported {
		t.Log("the device has no timestamps: dispatches not counted")
		return
	}
	p, err := exe.Profile()
	require.NoError(t, err)
	require.Len(t, p.Kernels, 3, "%v", p.Kernels)
	for _, k := range p.Kernels {
		require.Equal(t, 1, k.Dispatches, "%v", p.Kernels)
	}
	require.Equal(t, exe.Module().Entry.Root.Name, p.Kernels[2].Instruction)
}
