package plan_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// The program of issue 18 (after a public JAX bug report on scan memory): ten
// chained scans, each of `steps` steps of x ← sin(x) over f32[rows, cols], the
// loss Σ x, differentiated (value and grad). Differentiating a scan stacks every
// step's input state: one [steps, rows, cols] stack per scan, the unit the memory
// figures are counted in.
type scanProgram struct {
	steps, rows, cols int64
	scans             int
	// variant: how the step or the scan is checkpointed.
	variant scanVariant
}

type scanVariant int

const (
	scanPlain        scanVariant = iota
	scanCheckpointed             // jax.checkpoint around each scan
	stepCheckpointed             // jax.checkpoint around the step function, inside the body
)

func (p scanProgram) state() hlo.Shape { return hlo.MakeShape(hlo.F32, p.rows, p.cols) }

// stackBytes is one scan's stack: steps copies of the state.
func (p scanProgram) stackBytes() int64 { return p.steps * p.rows * p.cols * 4 }

// loop builds one scan: a while over (i, x) counting i up to steps.
func (p scanProgram) loop(t testing.TB, b *hlo.Builder, x *hlo.Instruction, k int) *hlo.Instruction {
	t.Helper()
	tuple := hlo.MakeTuple(hlo.Scalar(hlo.S32), p.state())
	cb := hlo.NewBuilder(fmt.Sprintf("scan%d.cond", k))
	cs := cb.Parameter(tuple, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(cs, 0), cb.ScalarConstant(hlo.S32, float64(p.steps)), hlo.CmpLT))
	if err != nil {
		t.Fatal(err)
	}
	bb := hlo.NewBuilder(fmt.Sprintf("scan%d.body", k))
	bs := bb.Parameter(tuple, "s")
	i, xi := bb.GetTupleElement(bs, 0), bb.GetTupleElement(bs, 1)
	var next *hlo.Instruction
	if p.variant == stepCheckpointed {
		next = bb.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return b.Sin(a[0]) }, xi)
	} else {
		next = bb.Sin(xi)
	}
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), next))
	if err != nil {
		t.Fatal(err)
	}
	return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x)), 1)
}

// module is value_and_grad of the chained scans with respect to x.
func (p scanProgram) module(t testing.TB) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder(fmt.Sprintf("scans%d", p.scans))
	x := b.Parameter(p.state(), "x")
	for k := range p.scans {
		if p.variant == scanCheckpointed {
			x = b.Checkpoint(hlo.NothingSaveable(), func(cb *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
				return p.loop(t, cb, a[0], k)
			}, x)
			continue
		}
		x = p.loop(t, b, x, k)
	}
	loss := b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{0, 1})
	m, err := b.Build(loss)
	if err != nil {
		t.Fatal(err)
	}
	g, err := autodiff.ValueAndGrad(m, []int{0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// stacks is bytes in units of the program's stack.
func (p scanProgram) stacks(bytes int64) float64 { return float64(bytes) / float64(p.stackBytes()) }

// stateBytes is one state: a stack is steps of them.
func (p scanProgram) stateBytes() int64 { return p.rows * p.cols * 4 }

// planScan plans p's module for the CI device's facts.
func planScan(t *testing.T, p scanProgram, o plan.Options) *plan.Plan {
	t.Helper()
	pl, err := plan.Build(p.module(t), testTarget(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.3f stacks: %v; live at the peak: %s", p.stacks(pl.Stats.PeakBytes), pl.Stats, largest(pl.LiveAtPeak))
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
var scanTable = scanProgram{steps: 1000, rows: 30, cols: 100, scans: 10}

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
	assert.LessOrEqual(t, pl.Stats.PeakBytes, 10*p.stackBytes()+8*p.stateBytes(), "ten stacks and a few states")
	assert.Equal(t, int64(120064256), pl.Stats.PeakBytes, "peak bytes are deterministic")
	assert.Equal(t, pl.Stats.LowerBoundBytes, pl.Stats.PeakBytes, "the placement reaches the live bound")
}

// TestScanCheckpointedPlan: with jax.checkpoint around each scan the forward pass
// keeps only each scan's input, and the backward pass recomputes one scan's
// stack at a time, which its backward loop takes over: one stack and a few
// states (the report: 2 stacks for XLA; vkxla's plan held 3.01 before).
func TestScanCheckpointedPlan(t *testing.T) {
	p := scanTable
	p.variant = scanCheckpointed
	pl := planScan(t, p, plan.Options{})
	assert.LessOrEqual(t, pl.Stats.PeakBytes, 2*p.stackBytes(), "at most two stacks")
	assert.LessOrEqual(t, pl.Stats.PeakBytes, p.stackBytes()+16*p.stateBytes(), "one stack and a few states")
	assert.Equal(t, int64(12148272), pl.Stats.PeakBytes, "peak bytes are deterministic")
}

// TestScanStepCheckpointedPlan: jax.checkpoint on the step function inside the
// scan's body must save less than the plain scan. That needs autodiff to apply
// checkpoint policies inside while bodies (issue 18 item 2, branch loopad): until
// it is merged the differentiated body ignores the region and the plan equals the
// plain one (10.005 stacks).
func TestScanStepCheckpointedPlan(t *testing.T) {
	t.Skip("ISSUE 18 ITEM 2 (branch loopad): remove this skip when autodiff applies checkpoint policies inside while bodies")
	plain := planScan(t, scanTable, plan.Options{})
	p := scanTable
	p.variant = stepCheckpointed
	pl := planScan(t, p, plan.Options{})
	assert.Less(t, pl.Stats.PeakBytes, plain.Stats.PeakBytes, "checkpointing the step saves memory")
}
