package autodiff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
)

// compiled runs the full pass pipeline on a gradient module (in place) and
// returns the memory model's peak of the result.
func compiled(t *testing.T, m *hlo.Module, cfg passes.Config) int64 {
	t.Helper()
	require.NoError(t, passes.Run(m, cfg))
	model, err := heapsim.Simulate(m, cfg.Memory)
	require.NoError(t, err)
	return model.Stats.PeakBytes
}

// The deep MLP of the pipeline tests: 16 tanh layers of width 16 over a batch of
// 512 in f32, so that each activation (32 KiB) is much larger than a layer's
// weights (1 KiB).
const (
	deepLayers = 16
	deepBatch  = 512
	deepWidth  = 16
	actBytes   = deepBatch * deepWidth * 4
)

// deepGrad is the gradient (weights and biases) of the deep MLP's loss, its
// layers in checkpointed regions of `every` under p (nil: none).
func deepGrad(t *testing.T, every int, p *hlo.CheckpointPolicy) *hlo.Module {
	t.Helper()
	m := mlpLossOf(t, hlo.F32, deepLayers, every, deepBatch, deepWidth, p)
	g, err := Grad(m, allParams(m)[1:], nil)
	require.NoError(t, err)
	return g
}

// TestCheckpointSurvivesThePipeline: after every pass, the recomputed forward
// dots of save-nothing regions are still there (one per layer beyond the plain
// gradient's) and the peak is lower. The control takes the barriers out before
// the passes: CSE then merges the recomputation back into the forward pass and
// the peak is the plain gradient's again, which is what the barrier prevents.
func TestCheckpointSurvivesThePipeline(t *testing.T) {
	nothing := hlo.NothingSaveable()
	plain := deepGrad(t, 1, nil)
	plainPeak := compiled(t, plain, passes.Config{})
	ckpt := deepGrad(t, 4, &nothing)
	ckptPeak := compiled(t, ckpt, passes.Config{})
	require.Zero(t, countOp(ckpt, hlo.OpOptBarrier), "the barriers are gone before code generation")
	require.Equal(t, countOp(plain, hlo.OpDot)+deepLayers, countOp(ckpt, hlo.OpDot), "each forward dot recomputed once")
	require.Less(t, ckptPeak, plainPeak)

	control := deepGrad(t, 4, &nothing)
	withoutBarriers(t, control)
	controlPeak := compiled(t, control, passes.Config{})
	require.Equal(t, countOp(plain, hlo.OpDot), countOp(control, hlo.OpDot), "without barriers CSE merges the recomputation")
	require.Equal(t, plainPeak, controlPeak)
}

// TestCheckpointPeakBytes: the memory model's peak of the deep MLP's gradient
// after the pipeline, without and with save-nothing regions of s layers. Without,
// every layer's activation is live when the backward pass starts: at least
// 16 activations. With, the backward pass holds the regions' inputs (16/s, the
// first being x, a parameter) and one region's recomputed activations (s) besides
// a few cotangents and the weights: at most 16/s + s + 4 activations, the √n
// trade-off (s = 4 is best).
func TestCheckpointPeakBytes(t *testing.T) {
	nothing := hlo.NothingSaveable()
	plainPeak := compiled(t, deepGrad(t, 1, nil), passes.Config{})
	require.GreaterOrEqual(t, plainPeak, int64(deepLayers*actBytes))
	peaks := map[int]int64{}
	for _, s := range []int{2, 4, 8} {
		peak := compiled(t, deepGrad(t, s, &nothing), passes.Config{})
		require.LessOrEqual(t, peak, int64((deepLayers/s+s+4)*actBytes), "regions of %d layers", s)
		require.Less(t, peak, plainPeak)
		peaks[s] = peak
		t.Logf("regions of %d layers: peak %d bytes (%.0f%% of %d without checkpointing)", s, peak, 100*float64(peak)/float64(plainPeak), plainPeak)
	}
	require.Less(t, peaks[4], peaks[2])
	require.Less(t, peaks[4], peaks[8])
}

// TestCheckpointUnderBudget: WithMemoryBudget's remat works on top of
// checkpointing: a budget of 90% of the checkpointed gradient's own peak is met
// (the remat pass models the barriers as aliases: it skipped every module that
// held one before), and the budgeted module computes the same bits on cpuref.
func TestCheckpointUnderBudget(t *testing.T) {
	nothing := hlo.NothingSaveable()
	free := deepGrad(t, 4, &nothing)
	freePeak := compiled(t, free, passes.Config{})
	budget := freePeak * 9 / 10
	budgeted := deepGrad(t, 4, &nothing)
	peak := compiled(t, budgeted, passes.Config{MemoryBudget: budget})
	require.LessOrEqual(t, peak, budget)
	in := randomInputs(budgeted, 3)
	want, err := cpuref.Eval(free, in...)
	require.NoError(t, err)
	got, err := cpuref.Eval(budgeted, in...)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got, want))
}

// withoutBarriers replaces every opt-barrier of m's entry by its operands: the
// get-tuple-elements of a barrier by the values the barrier fenced.
func withoutBarriers(t *testing.T, m *hlo.Module) {
	t.Helper()
	fenced := func(x *hlo.Instruction) *hlo.Instruction {
		if x.Op == hlo.OpGetTupleElement && x.Operands[0].Op == hlo.OpOptBarrier {
			return x.Operands[0].Operands[0].Operands[x.Attrs.TupleIndex]
		}
		return x
	}
	for _, in := range m.Entry.Instructions {
		for i, o := range in.Operands {
			in.Operands[i] = fenced(o)
		}
	}
	m.Entry.Root = fenced(m.Entry.Root)
	require.NoError(t, hlo.Verify(m))
}
