package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
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

// TestScanStepCheckpointOnDevice: a scan whose step, checkpointed under
// dots_saveable, is dropout(tanh(W·x)) with its mask drawn by rng: the forward
// loop stacks each step's W·x and draw, the backward loop takes them (autodiff's
// loop keeps). The gradient on the GPU equals cpuref's.
func TestScanStepCheckpointOnDevice(t *testing.T) {
	rt := newRuntime(t)
	ws, xs := hlo.MakeShape(hlo.F32, 16, 16), hlo.MakeShape(hlo.F32, 16)
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), xs, ws)
	cb := hlo.NewBuilder("scan.cond")
	c := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(c, 0), cb.ScalarConstant(hlo.S32, 6), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("scan.body")
	s := bb.Parameter(state, "s")
	i, x, w := bb.GetTupleElement(s, 0), bb.GetTupleElement(s, 1), bb.GetTupleElement(s, 2)
	next := bb.Checkpoint(hlo.DotsSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
		u := b.Rng(b.ScalarConstant(hlo.F32, 0), b.ScalarConstant(hlo.F32, 1), hlo.RngUniform, xs)
		keep := b.Convert(b.Compare(u, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), 16), hlo.CmpLT), hlo.F32)
		return b.Mul(b.Tanh(b.Dot(a[0], a[1])), b.Add(keep, keep))
	}, w, x)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), next, w))
	require.NoError(t, err)
	b := hlo.NewBuilder("scan")
	px, pw := b.Parameter(xs, "x"), b.Parameter(ws, "w")
	out := b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), px, pw)), 1)
	fwd, err := b.Build(b.Reduce([]*hlo.Instruction{out}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{0}))
	require.NoError(t, err)
	m, err := autodiff.Grad(fwd, []int{0, 1}, nil)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(18, 2))
	checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, hlo.F32), randomLiteral(r, xs, unitDomain), randomLiteral(r, ws, unitDomain))
}
