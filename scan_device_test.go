package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/scanprog"
)

// TestScanGradOnDevice runs issue 18's differentiated scans (internal/scanprog,
// three scans of 20 steps over f32[8,16]) on the GPU against cpuref: plainly,
// with each scan checkpointed, and under a budget of half the plain peak, where
// the remat pass recomputes forward loops before their backward loops and the
// loop states take over their initial values' memory.
func TestScanGradOnDevice(t *testing.T) {
	rt := newRuntime(t)
	plain := scanprog.Program{Steps: 20, Rows: 8, Cols: 16, Scans: 3}
	ckpt := plain
	ckpt.Variant = scanprog.ScanCheckpointed
	x := randomLiteral(rand.New(rand.NewPCG(18, 18)), plain.State(), unitDomain)
	m, err := plain.Module()
	require.NoError(t, err)
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	peak := exe.MemoryStats().PeakBytes
	require.NoError(t, exe.Close())
	budget := peak / 2
	checkCompiledAgainstCPU(t, rt, m, []vkxla.CompileOption{vkxla.WithMemoryBudget(budget)}, spec, x)
	checkAgainstCPU(t, rt, m, spec, x)
	mc, err := ckpt.Module()
	require.NoError(t, err)
	checkAgainstCPU(t, rt, mc, vkxla.ProgramTolerance(mc, hlo.F32), x)
}
