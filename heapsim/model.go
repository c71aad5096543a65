// Package heapsim is vkxla's one memory model: liveness and heap simulation, after
// XLA's HeapSimulator, shared by the schedule pass, the remat pass and the planner's
// buffer assignment, so the model that decides is the model that is executed.
//
// Simulate lowers a module to the steps the runtime runs (a kernel's dispatches,
// copies, host-driven while and conditional blocks; tuples alias their elements'
// buffers), gives every step a position on one timeline (loop bodies and branches
// included), decides which outputs are written in place over dying inputs,
// places every buffer at an offset by lifetime and computes the statistics. What
// it knows about a kernel comes from Config.Kernels: code generation's facts
// (scratch buffers, inputs a kernel may write in place, its dispatches), memoised
// per fused computation by the planner (codegen.Memo), or a coarse stand-in
// (CoarseKernels) where no target is known. No device, no cgo.
package heapsim

import (
	"slices"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// Kernels returns the program a kernel computation lowers to: its dispatches,
// scratch buffers and in-place inputs. An error fails the simulation (wrap
// ErrUnsupported for what the target cannot run).
type Kernels func(kc *hlo.Computation) (*codegen.Program, error)

// Config is what the model needs to know besides the module.
type Config struct {
	// Kernels gives each kernel's facts; nil: CoarseKernels.
	Kernels Kernels
	// Limits are the allocation rules (alignment, block size); zero: DefaultLimits.
	Limits alloc.Limits
	// Donate lists entry parameters the caller gives up (jax.jit's donate_argnums;
	// every parameter the module's input_output_alias names is donated too), Borrow
	// parameters read in place from the caller's memory: the arena holds neither
	// (alias.go).
	Donate, Borrow []int
}

// DefaultLimits are 16-byte alignment (vkxla's floor) and blocks of 2 GiB, bindings
// of 128 MiB (lavapipe's).
var DefaultLimits = alloc.Limits{Alignment: 16, MaxBindingRange: 128 << 20, MaxBlockSize: 2 << 30}

// CoarseKernels stands in for code generation: one dispatch that reads every input
// and writes every output, no scratch, nothing written in place.
func CoarseKernels(kc *hlo.Computation) (*codegen.Program, error) {
	p := &codegen.Program{Name: kc.Name, Inputs: kc.ParamShapes()}
	if kc.Root.Shape.IsTuple() {
		p.Outputs = kc.Root.Shape.Elems
	} else {
		p.Outputs = []hlo.Shape{kc.Root.Shape}
	}
	d := codegen.Dispatch{Kernel: &codegen.Kernel{Name: kc.Name}, Groups: [3]uint32{1, 1, 1}}
	for i := range p.Inputs {
		d.Args = append(d.Args, codegen.Arg{Kind: codegen.ArgInput, Index: i})
	}
	for i := range p.Outputs {
		d.Args = append(d.Args, codegen.Arg{Kind: codegen.ArgOutput, Index: i})
	}
	p.Dispatches = []codegen.Dispatch{d}
	return p, nil
}

// Model is a module simulated: its steps, every buffer's place and lifetime, the
// statistics and what is live at the peak.
type Model struct {
	// Params are the entry parameters' buffers, Root the outputs'.
	Params []Value
	Root   Value
	// Main is the entry's steps.
	Main *Block
	// Stats is the memory the plan needs; LiveAtPeak the buffers live at its
	// (lower-bound) peak, largest first.
	Stats      MemoryStats
	LiveAtPeak []LiveBuffer
	l          *lowering
	// slots are the parameter leaves in the caller's memory, slotOf each range's
	// slot or -1 (alias.go).
	slots  []Slot
	slotOf []int
}

// Simulate runs the model on m as it is (its instruction order is the schedule).
func Simulate(m *hlo.Module, cfg Config) (*Model, error) {
	if cfg.Kernels == nil {
		cfg.Kernels = CoarseKernels
	}
	if cfg.Limits == (alloc.Limits{}) {
		cfg.Limits = DefaultLimits
	}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	l := &lowering{kernelsOf: cfg.Kernels, limits: cfg.Limits, kernels: newKernelSet()}
	params := make([]Value, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		params[i] = l.newValue(p.Name, p.Shape, rangeParam)
	}
	aliases, err := aliasesOf(m, cfg.Donate)
	if err != nil {
		return nil, err
	}
	if err := l.markExternal(params, cfg.Donate, cfg.Borrow, aliases); err != nil {
		return nil, err
	}
	l.hostParams(m.Entry, params)
	main, root, err := l.lowerComputation(m.Entry, params)
	if err != nil {
		return nil, err
	}
	root = l.ownOutputs(main, m.Entry.Root.Name, root, aliasedOutputs(aliases))
	root = l.aliasOutputs(main, m.Entry.Root.Name, root, params, aliases)
	tl := l.buildTimeline(main, root)
	l.shareInPlace(tl)
	l.place(tl)
	l.dropSelfCopies(main)
	slots, slotOf := l.slotsOf(params)
	return &Model{Params: params, Root: root, Main: main, Stats: memoryStats(l), LiveAtPeak: livePeak(l), l: l,
		slots: slots, slotOf: slotOf}, nil
}

// Kernels are the model's distinct kernels, in first-use order.
func (m *Model) Kernels() []*KernelRef { return m.l.kernels.all }

// Constant is a constant leaf uploaded once into its buffer.
type Constant struct {
	Range   int
	Literal *hlo.Literal
}

// Constants are the constant uploads.
func (m *Model) Constants() []Constant {
	out := make([]Constant, len(m.l.constants))
	for i, c := range m.l.constants {
		out[i] = Constant{Range: c.rng, Literal: c.lit}
	}
	return out
}

// Arena is the buffer assignment: every buffer's block, offset and size. A range
// in the caller's memory (SlotOf ≥ 0) is empty there: the arena holds none of it.
func (m *Model) Arena() *alloc.Plan {
	p := m.l.arenaPlan()
	return &p
}

// MarkRanges lets the planner annotate every buffer in place (how kernels reach
// it); Arena, which returns a copy, and the plan text carry the marks.
func (m *Model) MarkRanges(mark func(r *alloc.PlanRange)) {
	for i := range m.l.plan.Ranges {
		mark(&m.l.plan.Ranges[i])
	}
}

// BlockSizes is the size of each device allocation the plan needs (aligned).
func (m *Model) BlockSizes() []int64 { return alignedBlocks(m.l.arenaPlan(), m.l.limits) }

// arenaPlan is the plan without the ranges in the caller's memory or the host's
// (empty, at the start of block 0).
func (l *lowering) arenaPlan() alloc.Plan {
	p := alloc.Plan{Ranges: slices.Clone(l.plan.Ranges)}
	for r := range p.Ranges {
		if l.external(r) != extNone || l.onHost(r) {
			p.Ranges[r] = alloc.PlanRange{Name: p.Ranges[r].Name}
		}
	}
	return p
}

// String prints the steps, every buffer, the statistics and what is live at the
// peak.
func (m *Model) String() string { return planText(m.l, m.Main) }

// PeakStep is the name of the instruction of the entry's steps running when the
// live bytes peak (for a peak inside a loop or branch, the while or conditional):
// the last step at or before the peak whose name entry accepts (steps of an
// inlined call carry the callee's names). "" when there is none (the peak is
// before the first step: parameters only).
func (m *Model) PeakStep(entry func(name string) bool) string {
	name := ""
	for _, st := range m.Main.Steps {
		if st.at > m.l.peakAt {
			break
		}
		if entry(st.Name) {
			name = st.Name
		}
	}
	return name
}

// ownOutputs makes sure no output leaf is a parameter or constant range (an entry
// that returns its parameter, say), so outputs never alias inputs the caller
// writes on the next Run; such leaves are copied into output ranges. An output
// in host memory (the root reads a MoveToHost) stays there: Run reads it from the
// host buffers, and it holds no device memory. Aliased
// leaves are aliasOutputs' to place.
func (l *lowering) ownOutputs(b *Block, name string, root Value, aliased map[int]bool) Value {
	out := Value{Shape: root.Shape}
	for j, r := range root.Leaves {
		if aliased[j] {
			out.Leaves = append(out.Leaves, r)
			continue
		}
		if (l.kinds[r] == rangeParam || l.kinds[r] == rangeConstant) && !l.isToken(r) {
			dst := l.newRange(name+".out", l.plan.Ranges[r].Size, rangeOutput)
			b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: name, Src: r, Dst: dst})
			r = dst
		}
		l.kinds[r] = rangeOutput
		out.Leaves = append(out.Leaves, r)
	}
	return out
}

// Point is the live bytes (aligned, buffers with memory of their own) while one
// step runs.
type Point struct {
	At    int    // timeline position
	Step  string // the instruction the step comes from
	Kind  StepKind
	Bytes int64
}

// LiveBytes is the live bytes before the first step (the inputs staged) and at
// every step, loop bodies and branches included, in timeline order: the memory
// timeline whose largest value is Stats.LowerBoundBytes.
func (m *Model) LiveBytes() []Point {
	pts := []Point{{At: -1, Step: "(inputs)", Bytes: m.l.liveAt(-1)}}
	var walk func(b *Block)
	walk = func(b *Block) {
		for _, st := range b.Steps {
			pts = append(pts, Point{At: st.at, Step: st.Name, Kind: st.Kind, Bytes: m.l.liveAt(st.at)})
			for _, nested := range append([]*Block{st.Cond, st.Body}, st.Branches...) {
				if nested != nil {
					walk(nested)
				}
			}
		}
	}
	walk(m.Main)
	return pts
}

// PeakAt is the timeline position where the live bytes peak.
func (m *Model) PeakAt() int { return m.l.peakAt }

// liveAt sums the aligned sizes of the owners live at position t.
func (l *lowering) liveAt(t int) int64 {
	var sum int64
	for r, lt := range l.lives {
		if l.inArena(r) && lt.first <= t && t <= lt.last {
			sum += l.align(l.plan.Ranges[r].Size)
		}
	}
	return sum
}
