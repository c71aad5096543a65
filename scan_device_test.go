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
	m := stepScans(t, 1, 6, 16, hlo.DotsSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
		xs := a[1].Shape
		u := b.Rng(b.ScalarConstant(hlo.F32, 0), b.ScalarConstant(hlo.F32, 1), hlo.RngUniform, xs)
		keep := b.Convert(b.Compare(u, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), 16), hlo.CmpLT), hlo.F32)
		return b.Mul(b.Tanh(b.Dot(a[0], a[1])), b.Add(keep, keep))
	})
	r := rand.New(rand.NewPCG(18, 2))
	checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, hlo.F32), randomLiteral(r, m.Entry.Params[0].Shape, unitDomain),
		randomLiteral(r, m.Entry.Params[1].Shape, unitDomain))
}

// stepScans is the gradient of sum(x) after `scans` scans in a row of n steps
// x ← step(W, x) over f32[rows], each step a checkpointed region under policy.
func stepScans(t *testing.T, scans int, n, rows int64, policy hlo.CheckpointPolicy, step func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction) *hlo.Module {
	ws, xs := hlo.MakeShape(hlo.F32, rows, rows), hlo.MakeShape(hlo.F32, rows)
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), xs, ws)
	cb := hlo.NewBuilder("scan.cond")
	c := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(c, 0), cb.ScalarConstant(hlo.S32, float64(n)), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("scan.body")
	s := bb.Parameter(state, "s")
	i, x, w := bb.GetTupleElement(s, 0), bb.GetTupleElement(s, 1), bb.GetTupleElement(s, 2)
	next := bb.Checkpoint(policy, step, w, x)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), next, w))
	require.NoError(t, err)
	b := hlo.NewBuilder("scans")
	px, pw := b.Parameter(xs, "x"), b.Parameter(ws, "w")
	out := px
	for range scans {
		out = b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), out, pw)), 1)
	}
	fwd, err := b.Build(b.Reduce([]*hlo.Instruction{out}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{0}))
	require.NoError(t, err)
	m, err := autodiff.Grad(fwd, []int{0, 1}, nil)
	require.NoError(t, err)
	return m
}

// tanhStep is x ← tanh(W·x).
func tanhStep(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
	return b.Tanh(b.Dot(a[0], a[1]))
}

// TestScanStepOffloadOnDevice: each scan's steps saved by
// offload_dot_with_no_batch_dims stack their W·x products as dots_saveable does,
// but each stack waits in host memory between its forward and its backward loop:
// the plan holds 2 stacks (n·rows f32 each) on the host and needs less device
// memory than dots_saveable's, and the gradient is dots_saveable's, bit for bit,
// and cpuref's.
func TestScanStepOffloadOnDevice(t *testing.T) {
	const n, rows = 64, 256
	rt := newRuntime(t)
	ctx := context.Background()
	offloaded := stepScans(t, 2, n, rows, hlo.OffloadDotWithNoBatchDims(), tanhStep)
	onDevice := stepScans(t, 2, n, rows, hlo.DotsSaveable(), tanhStep)
	r := rand.New(rand.NewPCG(18, 3))
	in := []*hlo.Literal{randomLiteral(r, offloaded.Entry.Params[0].Shape, unitDomain), randomLiteral(r, offloaded.Entry.Params[1].Shape, unitDomain)}
	run := func(m *hlo.Module) ([]*hlo.Literal, vkxla.MemoryStats) {
		exe, err := rt.Compile(ctx, m)
		require.NoError(t, err)
		defer func() { require.NoError(t, exe.Close()) }()
		out, err := exe.Run(ctx, in...)
		require.NoError(t, err)
		return out, exe.MemoryStats()
	}
	got, off := run(offloaded)
	want, dev := run(onDevice)
	t.Logf("device peak %d B offloaded (host %d B), %d B dots_saveable", off.PeakBytes, off.HostBytes, dev.PeakBytes)
	const stack = n * rows * 4
	require.Equal(t, int64(2*stack), off.HostBytes, "the two scans' stacks of W·x")
	require.Zero(t, dev.HostBytes)
	require.Less(t, off.PeakBytes, dev.PeakBytes)
	for i := range want {
		require.Equal(t, want[i].Bytes(), got[i].Bytes(), "output %d", i)
	}
	checkAgainstCPU(t, rt, offloaded, vkxla.ProgramTolerance(offloaded, hlo.F32), in...)
}
