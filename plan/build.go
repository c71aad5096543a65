// Package plan is vkxla's planner: it turns a module and a target description
// (plain data) into the executable's plan — the pass pipeline, kernel steps,
// lifetimes on the timeline, in-place decisions, buffer offsets, statistics, live
// at the peak — without a device. The root records a Plan onto the device as it is.
// The memory model (package heapsim) is the one the schedule and remat passes
// decide with; the passes ask code generation's kernel facts as a pure query
// (codegen.Facts: no SPIR-V is emitted for the trials), and the final lowering
// emits each distinct kernel computation once (codegen.Memo).
package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// The plan's parts are the memory model's (package heapsim).
type (
	Value       = heapsim.Value
	Step        = heapsim.Step
	StepKind    = heapsim.StepKind
	Block       = heapsim.Block
	KernelRef   = heapsim.KernelRef
	Constant    = heapsim.Constant
	MemoryStats = heapsim.MemoryStats
	LiveBuffer  = heapsim.LiveBuffer
	Slot        = heapsim.Slot
)

// The step kinds.
const (
	StepDispatch    = heapsim.StepDispatch
	StepCopy        = heapsim.StepCopy
	StepWhile       = heapsim.StepWhile
	StepConditional = heapsim.StepConditional
	StepCollective  = heapsim.StepCollective
)

// Sentinel errors (heapsim's and the planner's).
var (
	ErrUnsupported = heapsim.ErrUnsupported
	ErrOverBudget  = heapsim.ErrOverBudget
	// ErrInvalidArgument: a bad argument to a planner function (BuildSegmented).
	ErrInvalidArgument = errors.New("plan: invalid argument")
)

// Target is what planning needs to know about the device, as plain data: the code
// generator's facts, the allocation limits, and how many buffers a fused kernel may
// bind.
type Target struct {
	Codegen codegen.Target
	Limits  alloc.Limits
	// MaxFusionParams bounds a fused kernel's inputs (passes.Config).
	MaxFusionParams int
}

// Options are the compile options that change the plan.
type Options struct {
	// Disabled names passes to skip (passes.Config.Disabled).
	Disabled []string
	// MemoryBudget, when positive, is the most device memory the plan may need
	// (PeakBytes); Build fails with ErrOverBudget when rematerialisation cannot
	// meet it.
	MemoryBudget int64
	// AfterPass is called after every pass that changed the module (dumps).
	AfterPass func(i int, name string, m *hlo.Module)
	// KeepLowered keeps every kernel computation and the dispatches it became
	// (Plan.Lowered), for VKXLA_DUMP.
	KeepLowered bool
	// Donate and Borrow are entry parameters in the caller's memory: donated
	// (jax.jit's donate_argnums; the module's input_output_alias donates the
	// parameters it names too) or read in place. The arena holds none of them
	// (heapsim.Config, heapsim/alias.go).
	Donate, Borrow []int
	// Devices is how many devices run the program together (replicas ×
	// partitions; 0 or 1: one). A program for several keeps its collectives as
	// host steps (StepCollective); each device gets the same plan.
	Devices int
	// Stop reports why planning must stop (a context ended, a runtime closing); it
	// is asked after the passes and after every kernel of the final lowering.
	// nil: never.
	Stop func() error
}

// Plan is an executable's plan: the module after the passes and the memory model
// of it that the root records (steps, kernels, every buffer's place and lifetime,
// statistics).
type Plan struct {
	Module *hlo.Module
	*heapsim.Model
	lowered string
}

// Lowered is every kernel computation and the dispatches it became (only with
// Options.KeepLowered).
func (p *Plan) Lowered() string { return p.lowered }

// Build runs the pass pipeline on a copy of m and plans the result for t. The
// schedule and remat passes decide with the same model (heapsim, with this
// target's kernels and limits) that places the buffers, so a budget the remat pass
// meets is met by the plan; one it cannot meet fails with ErrOverBudget.
func Build(m *hlo.Module, t Target, o Options) (*Plan, error) {
	if err := rejectUnsupported(m, t.Codegen); err != nil {
		return nil, err
	}
	memo := codegen.NewMemo(t.Codegen)
	opt := m.Clone()
	pc := passes.Config{Disabled: o.Disabled, MaxFusionParams: t.MaxFusionParams, Bindings: t.Codegen.Bindings, MemoryBudget: o.MemoryBudget,
		AfterPass: o.AfterPass, Devices: o.Devices, Memory: heapsim.Config{Kernels: memo.Facts, Limits: t.Limits, Donate: o.Donate, Borrow: o.Borrow}}
	if err := passes.Run(opt, pc); err != nil {
		return nil, err
	}
	if o.Stop != nil {
		if err := o.Stop(); err != nil {
			return nil, err
		}
	}
	p, err := lower(opt, t, o, memo)
	if err != nil {
		return nil, err
	}
	if st := p.Stats; o.MemoryBudget > 0 && st.PeakBytes > o.MemoryBudget {
		return nil, &OverBudgetError{Budget: o.MemoryBudget, Floor: st.PeakBytes, Stats: st, Largest: heapsim.Largest(p.LiveAtPeak, 4)}
	}
	return p, nil
}

// OverBudgetError is the ErrOverBudget Build returns (errors.Is): the budget, and
// the floor rematerialisation reached — the plan's bytes when no recomputation it
// tried lowered them further — with the statistics and the largest buffers live
// at that peak, so a caller can ask again for what is reachable.
type OverBudgetError struct {
	Budget, Floor int64
	Stats         MemoryStats
	Largest       string
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("%v: the plan needs %d bytes of device memory, over the budget of %d bytes, after rematerialisation (the floor it reached; %v); largest live at the peak: %s",
		ErrOverBudget, e.Floor, e.Budget, e.Stats, e.Largest)
}

func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }

func lower(opt *hlo.Module, t Target, o Options, memo *codegen.Memo) (*Plan, error) {
	if err := t.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	var lowered strings.Builder
	kernels := func(kc *hlo.Computation) (*codegen.Program, error) {
		prog, err := memo.Lower(kc)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
		}
		if o.Stop != nil {
			if err := o.Stop(); err != nil {
				return nil, err
			}
		}
		if o.KeepLowered {
			noteLowered(&lowered, kc, prog)
		}
		return prog, nil
	}
	model, err := heapsim.Simulate(opt, heapsim.Config{Kernels: kernels, Limits: t.Limits, Donate: o.Donate, Borrow: o.Borrow})
	if err != nil {
		return nil, err
	}
	model.MarkRanges(func(r *alloc.PlanRange) { markPath(r, t.Codegen) })
	return &Plan{Module: opt, Model: model, lowered: lowered.String()}, nil
}

// markPath states on every buffer of the plan how kernels reach it, by the rule
// code generation follows (codegen.Target.Path): a buffer larger than one binding
// is split across bindings (Split) or read through its device address
// (Addressed). The arena checks the marks (alloc.Plan.Validate) and the recorder
// binds accordingly.
// (Marking the copy that Model.Arena returns was lost: donation made Arena a copy.)
func markPath(r *alloc.PlanRange, t codegen.Target) {
	switch t.Path(r.Size) {
	case codegen.PathSplit:
		r.Split = true
	case codegen.PathAddress:
		r.Addressed = true
	}
}

// noteLowered records a kernel computation and its dispatches for VKXLA_DUMP.
func noteLowered(sb *strings.Builder, c *hlo.Computation, p *codegen.Program) {
	sb.WriteString(c.String())
	for _, d := range p.Dispatches {
		fmt.Fprintf(sb, "  // dispatch %s: local size %v, groups %v, args %v\n", d.Kernel.Name, d.Kernel.LocalSize, d.Groups, d.Args)
	}
	if len(p.Scratch) > 0 {
		fmt.Fprintf(sb, "  // scratch bytes %v\n", p.Scratch)
	}
	sb.WriteString("\n")
}
