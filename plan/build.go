package plan

import (
	"fmt"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
	"github.com/vkxla/vkxla/spirv/codegen"
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
	// Stop reports why planning must stop (a context ended, a runtime closing); it
	// is asked after the passes and after every kernel. nil: never.
	Stop func() error
}

// Plan is an executable's plan: its kernels and steps, every buffer's place and
// lifetime, and its memory statistics. The root records it onto the device as it
// is; nothing in it needs a device.
type Plan struct {
	// Module is the module after the passes.
	Module *hlo.Module
	// Params are the entry parameters' buffers, Root the outputs'.
	Params []Value
	Root   Value
	// Main is the entry's steps.
	Main *Block
	// Stats is the memory the plan needs; LiveAtPeak the buffers live at its peak,
	// largest first.
	Stats      MemoryStats
	LiveAtPeak []LiveBuffer
	l          *lowering
}

// Constant is a constant leaf uploaded once into its buffer.
type Constant struct {
	Range   int
	Literal *hlo.Literal
}

// Kernels are the plan's distinct kernels, in first-use order.
func (p *Plan) Kernels() []*KernelRef { return p.l.kernels.all }

// Constants are the constant uploads.
func (p *Plan) Constants() []Constant {
	out := make([]Constant, len(p.l.constants))
	for i, c := range p.l.constants {
		out[i] = Constant{Range: c.rng, Literal: c.lit}
	}
	return out
}

// Arena is the buffer assignment: every buffer's block, offset and size.
func (p *Plan) Arena() *alloc.Plan { return &p.l.plan }

// Limits are the allocation limits the plan was placed under.
func (p *Plan) Limits() alloc.Limits { return p.l.limits }

// BlockSizes is the size of each device allocation the plan needs (aligned).
func (p *Plan) BlockSizes() []int64 { return alignedBlocks(p.l.plan, p.l.limits) }

// Lowered is every kernel computation and the dispatches it became (only with
// Options.KeepLowered).
func (p *Plan) Lowered() string { return p.l.lowered.String() }

// String prints the plan: the steps, every buffer, the statistics and what is live
// at the peak.
func (p *Plan) String() string { return planText(p.l, p.Main) }

// budgetAttempts bounds the optimise-and-lower rounds under a memory budget.
const budgetAttempts = 4

// Build runs the pass pipeline on a copy of m and plans the result for t. Under a
// memory budget the remat pass aims at the budget in its own memory model; when
// the real plan (in-place outputs, alignment, resident constants) still exceeds
// it, the pass aims lower by the excess and the module is planned again, a few
// times at most.
func Build(m *hlo.Module, t Target, o Options) (*Plan, error) {
	aim := o.MemoryBudget
	for attempt := 1; ; attempt++ {
		p, err := buildOnce(m, t, o, aim)
		if err != nil {
			return nil, err
		}
		st := p.Stats
		if o.MemoryBudget <= 0 || st.PeakBytes <= o.MemoryBudget {
			return p, nil
		}
		aim -= st.PeakBytes - o.MemoryBudget
		if attempt == budgetAttempts || aim <= 0 {
			return nil, fmt.Errorf("%w: the plan needs %d bytes of device memory, over the budget of %d bytes, after rematerialisation (%v); largest live at the peak: %s",
				ErrOverBudget, st.PeakBytes, o.MemoryBudget, st, largest(p.LiveAtPeak, 4))
		}
	}
}

// buildOnce runs the passes (remat aiming at aim bytes) and lowers the result.
func buildOnce(m *hlo.Module, t Target, o Options, aim int64) (*Plan, error) {
	opt := m.Clone()
	pc := passes.Config{Disabled: o.Disabled, MaxFusionParams: t.MaxFusionParams, MemoryBudget: aim, AfterPass: o.AfterPass}
	if err := passes.Run(opt, pc); err != nil {
		return nil, err
	}
	if o.Stop != nil {
		if err := o.Stop(); err != nil {
			return nil, err
		}
	}
	return Lower(opt, t, o)
}

// Lower plans an optimised module as it is (no passes).
func Lower(opt *hlo.Module, t Target, o Options) (*Plan, error) {
	if err := t.Limits.Validate(); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	l := &lowering{target: t.Codegen, limits: t.Limits, kernels: newKernelSet(), dumping: o.KeepLowered, stop: o.Stop}
	params := make([]Value, len(opt.Entry.Params))
	for i, p := range opt.Entry.Params {
		params[i] = l.newValue(p.Name, p.Shape, rangeParam)
	}
	main, root, err := l.lowerComputation(opt.Entry, params)
	if err != nil {
		return nil, err
	}
	root = l.ownOutputs(main, opt.Entry.Root.Name, root)
	tl := l.buildTimeline(main, root)
	l.shareInPlace(tl)
	l.place(tl)
	l.dropSelfCopies(main)
	return &Plan{Module: opt, Params: params, Root: root, Main: main, Stats: memoryStats(l), LiveAtPeak: livePeak(l), l: l}, nil
}

// ownOutputs makes sure no output leaf is a parameter or constant range (an entry
// that returns its parameter, say), so outputs never alias inputs the caller
// writes on the next Run; such leaves are copied into output ranges.
func (l *lowering) ownOutputs(b *Block, name string, root Value) Value {
	out := Value{Shape: root.Shape}
	for _, r := range root.Leaves {
		if l.kinds[r] == rangeParam || l.kinds[r] == rangeConstant {
			dst := l.newRange(name+".out", l.plan.Ranges[r].Size, rangeOutput)
			b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: name, Src: r, Dst: dst})
			r = dst
		}
		l.kinds[r] = rangeOutput
		out.Leaves = append(out.Leaves, r)
	}
	return out
}
