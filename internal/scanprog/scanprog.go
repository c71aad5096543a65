// Package scanprog builds the program of issue 18 (after a public JAX bug report
// on the memory of scans): chained scans, each of Steps steps of x ← sin(x) over
// f32[Rows, Cols], the loss Σ x, differentiated (value and grad). Differentiating a
// scan stacks every step's input state: one [Steps, Rows, Cols] stack per scan,
// the unit its memory figures are counted in. The planner's, the passes' and the
// device tests share it.
package scanprog

import (
	"fmt"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
)

// Variant says how the step or the scan is checkpointed.
type Variant int

// The variants of the table.
const (
	Plain            Variant = iota
	ScanCheckpointed         // jax.checkpoint around each scan
	StepCheckpointed         // jax.checkpoint around the step function, inside the body
)

// Program is one instance.
type Program struct {
	Steps, Rows, Cols int64
	Scans             int
	Variant           Variant
	// Segmented differentiates each scan with every-k checkpointing
	// (autodiff.LoopCheckpoint): Every steps a segment, 0 for ⌈√Steps⌉.
	Segmented bool
	Every     int64
}

// State is one scan's state shape.
func (p Program) State() hlo.Shape { return hlo.MakeShape(hlo.F32, p.Rows, p.Cols) }

// StateBytes is one state; StackBytes one scan's stack, Steps states.
func (p Program) StateBytes() int64 { return p.Rows * p.Cols * 4 }

// StackBytes is one scan's stack.
func (p Program) StackBytes() int64 { return p.Steps * p.StateBytes() }

// Stacks is bytes in units of the stack.
func (p Program) Stacks(bytes int64) float64 { return float64(bytes) / float64(p.StackBytes()) }

// Forward is the program before differentiation: x ↦ Σ scans(x).
func (p Program) Forward() (*hlo.Module, error) {
	b := hlo.NewBuilder(fmt.Sprintf("scans%d", p.Scans))
	x := b.Parameter(p.State(), "x")
	for k := range p.Scans {
		if p.Variant == ScanCheckpointed {
			var inner error
			x = b.Checkpoint(hlo.NothingSaveable(), func(cb *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
				var y *hlo.Instruction
				y, inner = p.loop(cb, a[0], k)
				return y
			}, x)
			if inner != nil {
				return nil, inner
			}
			continue
		}
		var err error
		if x, err = p.loop(b, x, k); err != nil {
			return nil, err
		}
	}
	loss := b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{0, 1})
	return b.Build(loss)
}

// Module is value_and_grad of Forward with respect to x.
func (p Program) Module() (*hlo.Module, error) {
	m, err := p.Forward()
	if err != nil {
		return nil, err
	}
	var o *autodiff.Options
	if p.Segmented {
		o = &autodiff.Options{LoopCheckpoint: &autodiff.LoopCheckpoint{Every: p.Every}}
	}
	return autodiff.ValueAndGrad(m, []int{0}, o)
}

// loop builds scan k: a while over (i, x) counting i up to Steps.
func (p Program) loop(b *hlo.Builder, x *hlo.Instruction, k int) (*hlo.Instruction, error) {
	tuple := hlo.MakeTuple(hlo.Scalar(hlo.S32), p.State())
	cb := hlo.NewBuilder(fmt.Sprintf("scan%d.cond", k))
	cs := cb.Parameter(tuple, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(cs, 0), cb.ScalarConstant(hlo.S32, float64(p.Steps)), hlo.CmpLT))
	if err != nil {
		return nil, err
	}
	bb := hlo.NewBuilder(fmt.Sprintf("scan%d.body", k))
	bs := bb.Parameter(tuple, "s")
	i, xi := bb.GetTupleElement(bs, 0), bb.GetTupleElement(bs, 1)
	next := bb.Sin(xi)
	if p.Variant == StepCheckpointed {
		next = bb.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return b.Sin(a[0]) }, xi)
	}
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), next))
	if err != nil {
		return nil, err
	}
	return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x)), 1), nil
}
