package plan_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/scanprog"
	"github.com/vkxla/vkxla/plan"
)

// scanFull is issue 18's program at the report's size: ten scans of 1000 steps
// over f32[30000,100] (a state is 12 MB, a stack 12 GB). It is only planned.
var scanFull = scanprog.Program{Steps: 1000, Rows: 30000, Cols: 100, Scans: 10}

// TestScanSegmentedBudgetPlan: with every-k checkpointing (k = ⌈√1000⌉ = 32:
// 31 segments of 32 steps and a tail of 8) each scan's forward pass keeps 31
// states instead of 1000, and the backward pass recomputes one segment of 32
// at a time, so a budget of 25 % of the plain scan's peak is met, far below the
// one stack that whole-loop recomputation needs. A budget below the floor
// remat reaches on the segmented program is refused naming that floor.
func TestScanSegmentedBudgetPlan(t *testing.T) {
	p := scanFull
	plain := planScan(t, p, plan.Options{}).Stats.PeakBytes
	seg := p
	seg.Segmented = true
	budget := plain / 4
	pl := planScan(t, seg, plan.Options{MemoryBudget: budget})
	assert.LessOrEqual(t, pl.Stats.PeakBytes, budget, "25 %% of the plain peak")
	assert.Less(t, pl.Stats.PeakBytes, p.StackBytes(), "under one stack")
	assert.Equal(t, int64(5004004128), pl.Stats.PeakBytes, "peak bytes are deterministic")
	t.Logf("plain %d B, segmented under 25 %%: %d B (%.4f stacks)", plain, pl.Stats.PeakBytes, p.Stacks(pl.Stats.PeakBytes))

	m, err := seg.Module()
	require.NoError(t, err)
	tiny := 8 * p.StateBytes()
	_, err = plan.Build(m, testTarget(t), plan.Options{MemoryBudget: tiny})
	var over *plan.OverBudgetError
	require.True(t, errors.As(err, &over), "eight states are below the floor: %v", err)
	require.ErrorIs(t, err, plan.ErrOverBudget)
	assert.Equal(t, tiny, over.Budget)
	assert.Greater(t, over.Floor, tiny)
	assert.Contains(t, err.Error(), fmt.Sprintf("needs %d bytes", over.Floor))
	assert.Equal(t, int64(1008001536), over.Floor, "the floor: 84 states (one scan's 31 segment states, a 32-row segment, a few more)")
	t.Logf("floor %d B (%.1f states)", over.Floor, float64(over.Floor)/float64(p.StateBytes()))
}

// BenchmarkScanSegmentedPlans records the every-k figures of docs/results.md
// (go test -run '^$' -bench ScanSegmentedPlans -benchtime 1x ./plan): planned
// peaks at the report's full size in stacks, and each plan's time (derivative
// and plan) in seconds.
func BenchmarkScanSegmentedPlans(b *testing.B) {
	p := scanFull
	seg := p
	seg.Segmented = true
	seg10 := seg
	seg10.Every = 10
	timed := func(name string, q scanprog.Program, o plan.Options) int64 {
		start := time.Now()
		peak := planScan(b, q, o).Stats.PeakBytes
		b.ReportMetric(p.Stacks(peak), name+"-stacks")
		b.ReportMetric(time.Since(start).Seconds(), name+"-s")
		return peak
	}
	for range b.N {
		plain := timed("plain", p, plan.Options{})
		timed("plain-budget25%", p, plan.Options{MemoryBudget: plain / 4})
		timed("segmented", seg, plan.Options{})
		timed("segmented-k10", seg10, plan.Options{})
		timed("segmented-budget25%", seg, plan.Options{MemoryBudget: plain / 4})
		timed("segmented-budget1%", seg, plan.Options{MemoryBudget: plain / 100})
	}
}

// TestScanBuildSegmented: the budget path. BuildSegmented plans the whole-loop
// derivative first and then 2, 4, … segments, taking the fewest segments whose
// plan meets the budget: 25 % of the plain peak is met by whole loops (remat
// recomputes them), half a stack needs 4 segments of 250 steps, and 1 % needs 16
// segments (k = 63); a budget of eight states is refused naming the lowest floor
// found (84 states, at 32 segments).
func TestScanBuildSegmented(t *testing.T) {
	p := scanFull
	m, err := p.Module()
	require.NoError(t, err)
	pl, err := plan.Build(m, testTarget(t), plan.Options{})
	require.NoError(t, err)
	plain := pl.Stats.PeakBytes
	derive := func(every int64) (*hlo.Module, error) {
		q := p
		q.Segmented, q.Every = true, every
		return q.Module()
	}
	for _, c := range []struct {
		budget, every int64
	}{{plain / 4, 1000}, {p.StackBytes() / 2, 250}, {plain / 100, 63}} {
		pl, k, err := plan.BuildSegmented(derive, p.Steps, testTarget(t), plan.Options{MemoryBudget: c.budget})
		require.NoError(t, err, "budget %d", c.budget)
		assert.Equal(t, c.every, k, "budget %d: segment length", c.budget)
		assert.LessOrEqual(t, pl.Stats.PeakBytes, c.budget)
		t.Logf("budget %d B: k = %d, peak %d B (%.3f stacks)", c.budget, k, pl.Stats.PeakBytes, p.Stacks(pl.Stats.PeakBytes))
	}
	_, _, err = plan.BuildSegmented(derive, p.Steps, testTarget(t), plan.Options{MemoryBudget: 8 * p.StateBytes()})
	var over *plan.OverBudgetError
	require.True(t, errors.As(err, &over), "%v", err)
	assert.Equal(t, int64(1008001536), over.Floor, "the lowest floor found")
	_, _, err = plan.BuildSegmented(derive, 0, testTarget(t), plan.Options{})
	require.ErrorIs(t, err, plan.ErrInvalidArgument)
}
