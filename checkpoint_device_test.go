package vkxla_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// TestCheckpointedTrainingStepsOnDevice runs one step of checkpointed training
// steps (hlo.Builder.Checkpoint regions: their gradients recompute behind
// opt-barriers) on the GPU against cpuref: an MLP with regions of two layers that
// save nothing and a transformer LM whose blocks save their dots.
func TestCheckpointedTrainingStepsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	x, labels := train.Blobs(1, hlo.F32, 16, 4, 3, 0.5)
	tokens, targets := train.OneHotSequences(2, hlo.F32, 2, 6, 7)
	lm := train.LMConfig{Vocab: 7, Seq: 6, Dim: 8, Heads: 2, Hidden: 16, Batch: 2, Blocks: 2,
		Remat: train.Remat{Every: 1, Policy: hlo.DotsSaveable()}}
	cases := []struct {
		model train.Model
		batch []*hlo.Literal
	}{
		{train.CheckpointedMLP("mlp", hlo.F32, 16, train.Remat{Every: 2, Policy: hlo.NothingSaveable()}, 4, 16, 16, 16, 3),
			[]*hlo.Literal{x, labels}},
		{train.TransformerLM("lm", hlo.F32, lm), []*hlo.Literal{tokens, targets}},
	}
	for _, c := range cases {
		t.Run(c.model.Name, func(t *testing.T) {
			step, err := train.Build(c.model, train.SGD{LR: 0.1, Momentum: 0.9})
			require.NoError(t, err)
			in := append(step.Init(5), c.batch...)
			spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
			checkAgainstCPU(t, rt, step.Module, spec, in...)
		})
	}
}

// TestCheckpointedMLPPeak: the plan of a deep MLP's training step (16 ReLU layers
// of width 16, batch 256: activations of 16 KiB against 1 KiB of weights per
// layer) with and without regions of four layers that save nothing. Without, the
// backward pass starts with every layer's activations live (16 of them, and ReLU's
// rule reads both its input and its output); with, it holds the four regions'
// inputs and one region's recomputed activations: the plan needs less than 60%.
// A budget of 90% of the checkpointed plan is met on top, and that step matches
// cpuref on the GPU.
func TestCheckpointedMLPPeak(t *testing.T) {
	rt := newRuntime(t)
	sizes := []int64{16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16}
	build := func(r train.Remat) *train.Step {
		step, err := train.Build(train.CheckpointedMLP("mlp", hlo.F32, 256, r, sizes...), train.SGD{LR: 0.1})
		require.NoError(t, err)
		return step
	}
	peak := func(step *train.Step, opts ...vkxla.CompileOption) int64 {
		exe, err := rt.Compile(context.Background(), step.Module, opts...)
		require.NoError(t, err)
		defer func() { require.NoError(t, exe.Close()) }()
		return exe.MemoryStats().PeakBytes
	}
	const act = 256 * 16 * 4
	plain := peak(build(train.Remat{}))
	step := build(train.Remat{Every: 4, Policy: hlo.NothingSaveable()})
	ckpt := peak(step)
	t.Logf("peak %d bytes without checkpointing, %d with (%.0f%%)", plain, ckpt, 100*float64(ckpt)/float64(plain))
	require.GreaterOrEqual(t, plain, int64(16*act))
	require.Less(t, ckpt*10, plain*6)

	budget := vkxla.WithMemoryBudget(ckpt * 9 / 10)
	require.LessOrEqual(t, peak(step, budget), ckpt*9/10)
	x, labels := train.Blobs(1, hlo.F32, 256, 16, 16, 0.5)
	checkCompiledAgainstCPU(t, rt, step.Module, []vkxla.CompileOption{budget},
		vkxla.ProgramTolerance(step.Module, hlo.F32), append(step.Init(5), x, labels)...)
}

// TestOffloadedMLPStep: the same 16-layer MLP step as one checkpointed region
// whose policy keeps every layer's output in host memory
// (save_and_offload_only_these_names): the forward pass moves each output to the
// host as it is made, the backward pass moves each back and recomputes its layer
// when the gradient reaches it. The host holds the 16 outputs (16 KiB each); the
// device plan needs under a quarter of the plain step's; the step matches cpuref
// on the GPU. The plain step under a 20% budget is met by the budget mode
// (host-offload after remat) and matches cpuref too.
func TestOffloadedMLPStep(t *testing.T) {
	rt := newRuntime(t)
	sizes := []int64{16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16}
	build := func(r train.Remat) *train.Step {
		step, err := train.Build(train.CheckpointedMLP("mlp", hlo.F32, 256, r, sizes...), train.SGD{LR: 0.1})
		require.NoError(t, err)
		return step
	}
	stats := func(step *train.Step, opts ...vkxla.CompileOption) vkxla.MemoryStats {
		exe, err := rt.Compile(context.Background(), step.Module, opts...)
		require.NoError(t, err)
		defer func() { require.NoError(t, exe.Close()) }()
		return exe.MemoryStats()
	}
	const act = 256 * 16 * 4
	plain := stats(build(train.Remat{}))
	step := build(train.Remat{Every: 16, Name: "out", Policy: hlo.SaveAndOffloadOnlyTheseNames(nil, []string{"out"})})
	off := stats(step)
	t.Logf("device peak %d B plain, %d B offloaded (%.0f%%), host %d B", plain.PeakBytes, off.PeakBytes,
		100*float64(off.PeakBytes)/float64(plain.PeakBytes), off.HostBytes)
	require.Equal(t, int64(16*act), off.HostBytes, "the 16 layer outputs")
	require.Equal(t, 16, off.HostBuffers)
	require.Zero(t, plain.HostBytes)
	require.Less(t, off.PeakBytes*4, plain.PeakBytes)
	require.Equal(t, int64(594960), plain.PeakBytes) // deterministic: a change of either is a change of the plan
	require.Equal(t, int64(117792), off.PeakBytes)
	x, labels := train.Blobs(1, hlo.F32, 256, 16, 16, 0.5)
	checkAgainstCPU(t, rt, step.Module, vkxla.ProgramTolerance(step.Module, hlo.F32), append(step.Init(5), x, labels)...)

	// The plain step under a budget of 20%: remat alone stops above it; the
	// host-offload pass moves activations out across the peak until it fits.
	plainStep := build(train.Remat{})
	budget := vkxla.WithMemoryBudget(plain.PeakBytes / 5)
	_, err := rt.Compile(context.Background(), plainStep.Module, budget, vkxla.WithoutPasses("host-offload"))
	require.ErrorIs(t, err, vkxla.ErrOverBudget, "remat alone")
	moved := stats(plainStep, budget)
	t.Logf("budget %d B: device peak %d B, host %d B in %d buffers", plain.PeakBytes/5, moved.PeakBytes, moved.HostBytes, moved.HostBuffers)
	require.LessOrEqual(t, moved.PeakBytes, plain.PeakBytes/5)
	require.Positive(t, moved.HostBuffers)
	checkCompiledAgainstCPU(t, rt, plainStep.Module, []vkxla.CompileOption{budget},
		vkxla.ProgramTolerance(plainStep.Module, hlo.F32), append(plainStep.Init(5), x, labels)...)
}

// TestOffloadedTransformerStep: a 4-block transformer LM step, each block a
// nothing_saveable region, under a budget of 20 % of its plain peak. Moving
// activations alone stops above it; host-offload then keeps optimizer state and
// the updated parameters (the outputs of the fused update kernels) in host
// memory, and the step meets the budget with the unbudgeted step's results.
func TestOffloadedTransformerStep(t *testing.T) {
	rt := newRuntime(t)
	cfg := train.LMConfig{Blocks: 4, Seq: 32, Dim: 32, Heads: 2, Hidden: 128, Vocab: 32, Batch: 2}
	plainStep, err := train.Build(train.TransformerLM("lm", hlo.F32, cfg), train.SGD{LR: 0.01})
	require.NoError(t, err)
	cfg.Remat = train.Remat{Every: 1, Policy: hlo.NothingSaveable()}
	step, err := train.Build(train.TransformerLM("lm", hlo.F32, cfg), train.SGD{LR: 0.01})
	require.NoError(t, err)
	ctx := context.Background()
	plain, err := rt.Compile(ctx, plainStep.Module)
	require.NoError(t, err)
	plainPeak := plain.MemoryStats().PeakBytes
	require.NoError(t, plain.Close())
	budget := vkxla.WithMemoryBudget(plainPeak / 5)
	exe, err := rt.Compile(ctx, step.Module, budget)
	require.NoError(t, err)
	st := exe.MemoryStats()
	optimized := exe.OptimizedModule()
	require.NoError(t, exe.Close())
	t.Logf("plain peak %d B; budget %d B: device peak %d B (%.1f%%), host %d B in %d buffers", plainPeak, plainPeak/5,
		st.PeakBytes, 100*float64(st.PeakBytes)/float64(plainPeak), st.HostBytes, st.HostBuffers)
	require.LessOrEqual(t, st.PeakBytes, plainPeak/5)
	hostOutputs := 0
	for _, op := range optimized.Entry.Root.Operands {
		if toHost, ok := hlo.Placement(op); ok && toHost {
			hostOutputs++
		}
	}
	require.Positive(t, hostOutputs, "some updated parameters are returned from host memory")
	tokens, targets := train.OneHotSequences(3, hlo.F32, cfg.Batch, cfg.Seq, cfg.Vocab)
	checkCompiledAgainstCPU(t, rt, step.Module, []vkxla.CompileOption{budget},
		vkxla.ProgramTolerance(step.Module, hlo.F32), append(step.Init(4), tokens, targets)...)
}
