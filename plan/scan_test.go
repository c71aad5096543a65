package plan_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/internal/scanprog"
	"github.com/vkxla/vkxla/plan"
)

// The program of issue 18 (internal/scanprog): ten chained scans of 1000 steps,
// value and grad; its memory is counted in stacks (one scan's stacked states).

// planScan plans p's module for the CI device's facts.
func planScan(t testing.TB, p scanprog.Program, o plan.Options) *plan.Plan {
	t.Helper()
	m, err := p.Module()
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Build(m, testTarget(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.3f stacks: %v; live at the peak: %s", p.Stacks(pl.Stats.PeakBytes), pl.Stats, largest(pl.LiveAtPeak))
	return pl
}

func largest(bs []plan.LiveBuffer) string {
	text := ""
	for _, b := range bs[:min(4, len(bs))] {
		text += fmt.Sprintf("%s %d B; ", b.Name, b.Bytes)
	}
	return text
}

// scanTable is issue 18's program at a size the CI plans in a second: 1000 steps
// as in the report, rows cut from 30000 to 30, so a stack is 12 MB and the
// figures in stacks keep the report's ratios (a state is 1/1000 of a stack).
var scanTable = scanprog.Program{Steps: 1000, Rows: 30, Cols: 100, Scans: 10}

// TestScanPlainPlan: differentiating ten scans needs their ten stacks at the
// start of the backward pass, and no more: each stacking loop's state is its own
// zero fill (split-loop-fills, the state taking its initial value over), and each
// backward loop takes over its forward loop's stack instead of copying it. Before
// the loop state could take its initial value's memory, the plan held 11.0 stacks
// (the shared zero broadcast, and copies into every loop's state). What remains
// over ten stacks is a few states (the gradient, the value, the loop states).
func TestScanPlainPlan(t *testing.T) {
	p := scanTable
	pl := planScan(t, p, plan.Options{})
	assert.LessOrEqual(t, pl.Stats.PeakBytes, 10*p.StackBytes()+8*p.StateBytes(), "ten stacks and a few states")
	assert.Equal(t, int64(120064256), pl.Stats.PeakBytes, "peak bytes are deterministic")
	assert.Equal(t, pl.Stats.LowerBoundBytes, pl.Stats.PeakBytes, "the placement reaches the live bound")
}

// TestScanCheckpointedPlan: with jax.checkpoint around each scan the forward pass
// keeps only each scan's input, and the backward pass recomputes one scan's
// stack at a time, which its backward loop takes over: one stack and a few
// states (the report: 2 stacks for XLA; vkxla's plan held 3.01 before).
func TestScanCheckpointedPlan(t *testing.T) {
	p := scanTable
	p.Variant = scanprog.ScanCheckpointed
	pl := planScan(t, p, plan.Options{})
	assert.LessOrEqual(t, pl.Stats.PeakBytes, 2*p.StackBytes(), "at most two stacks")
	assert.LessOrEqual(t, pl.Stats.PeakBytes, p.StackBytes()+16*p.StateBytes(), "one stack and a few states")
	assert.Equal(t, int64(12148272), pl.Stats.PeakBytes, "peak bytes are deterministic")
}

// TestScanBudgetPlan: under WithMemoryBudget the remat pass recomputes whole
// forward loops just before the backward loops that read their stacks, so the
// forward pass keeps one stack at a time and the backward pass holds at most the
// stacks the budget allows: 50 %, 25 %, 20 % and 12 % of the plain peak are all
// met (each refused with ErrOverBudget before). 12 % is 1.2 stacks: one recomputed
// stack and a few states is the floor of whole-loop recomputation; a budget below
// it is refused naming that floor.
func TestScanBudgetPlan(t *testing.T) {
	p := scanTable
	plain := planScan(t, p, plan.Options{}).Stats.PeakBytes
	want := map[int64]int64{50: 48112256, 25: 24128256, 20: 12136272, 12: 12136272}
	for _, pct := range []int64{50, 25, 20, 12} {
		budget := plain * pct / 100
		pl := planScan(t, p, plan.Options{MemoryBudget: budget})
		assert.LessOrEqual(t, pl.Stats.PeakBytes, budget, "%d %% of the plain peak", pct)
		assert.Equal(t, want[pct], pl.Stats.PeakBytes, "%d %%: peak bytes are deterministic", pct)
	}
	m, err := p.Module()
	require.NoError(t, err)
	_, err = plan.Build(m, testTarget(t), plan.Options{MemoryBudget: p.StackBytes() / 2})
	var over *plan.OverBudgetError
	require.True(t, errors.As(err, &over), "half a stack is below the floor: %v", err)
	require.ErrorIs(t, err, plan.ErrOverBudget)
	assert.Equal(t, p.StackBytes()/2, over.Budget)
	assert.Greater(t, over.Floor, p.StackBytes(), "the floor holds a whole stack")
	assert.LessOrEqual(t, over.Floor, p.StackBytes()+16*p.StateBytes(), "and a few states")
	assert.Contains(t, err.Error(), fmt.Sprintf("needs %d bytes", over.Floor))
}

// BenchmarkScanPlans records issue 18's table in stacks (go test -bench
// ScanPlans ./plan): each variant's planned peak, and the plain scan under
// 50/25/20/12 % budgets. The planning time is the benchmark's own.
func BenchmarkScanPlans(b *testing.B) {
	p := scanTable
	ckpt := p
	ckpt.Variant = scanprog.ScanCheckpointed
	step := p
	step.Variant = scanprog.StepCheckpointed
	var plain int64
	for range b.N {
		plain = planScan(b, p, plan.Options{}).Stats.PeakBytes
		b.ReportMetric(p.Stacks(plain), "plain-stacks")
		b.ReportMetric(p.Stacks(planScan(b, ckpt, plan.Options{}).Stats.PeakBytes), "checkpointed-stacks")
		b.ReportMetric(p.Stacks(planScan(b, step, plan.Options{}).Stats.PeakBytes), "step-checkpointed-stacks")
		for _, pct := range []int64{50, 25, 20, 12} {
			pl := planScan(b, p, plan.Options{MemoryBudget: plain * pct / 100})
			b.ReportMetric(p.Stacks(pl.Stats.PeakBytes), fmt.Sprintf("budget%d%%-stacks", pct))
		}
	}
}

// TestScanStepCheckpointedPlan: jax.checkpoint (nothing_saveable) on the step
// function inside the scan's body. In JAX this saves memory because a plain
// scan's backward pass keeps every step's residuals (here cos x for each sin).
// vkxla's loop VJP keeps only each step's input state and recomputes the body in
// the backward loop: its plain scan already is the step-checkpointed scan. The
// step's only residual is its input, which any policy keeps, so the two plans
// are the same, byte for byte, not smaller. (A step policy that saves values —
// dots_saveable, a name — adds their stacks instead: autodiff's
// TestScanStepCheckpointSavesByPolicy.)
func TestScanStepCheckpointedPlan(t *testing.T) {
	plain := planScan(t, scanTable, plan.Options{})
	p := scanTable
	p.Variant = scanprog.StepCheckpointed
	pl := planScan(t, p, plan.Options{})
	assert.Equal(t, plain.Stats.PeakBytes, pl.Stats.PeakBytes, "the plain scan keeps what the checkpointed step keeps")
	assert.LessOrEqual(t, pl.Stats.PeakBytes, 10*p.StackBytes()+8*p.StateBytes(), "ten stacks and a few states")
}
