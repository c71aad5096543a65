package plan_test

import (
	"fmt"
	"testing"

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

func TestScanMemoryProbe(t *testing.T) {
	for _, v := range []scanVariant{scanPlain, scanCheckpointed, stepCheckpointed} {
		p := scanProgram{steps: 1000, rows: 30, cols: 100, scans: 10, variant: v}
		pl, err := plan.Build(p.module(t), testTarget(t), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("variant %d: %.3f stacks (%v)", v, p.stacks(pl.Stats.PeakBytes), pl.Stats)
		for _, lb := range pl.LiveAtPeak[:min(6, len(pl.LiveAtPeak))] {
			t.Logf("  %+v", lb)
		}
	}
}
