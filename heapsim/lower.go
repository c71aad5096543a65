package heapsim

import (
	"fmt"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
)

// Value is where an instruction's result lives: one plan range per array leaf of its
// shape, in flattened tuple order.
type Value struct {
	Shape  hlo.Shape
	Leaves []int
}

// tupleElement returns the leaves of element i of a tuple value.
func (v Value) tupleElement(i int) Value {
	start := 0
	for _, e := range v.Shape.Elems[:i] {
		start += len(e.Leaves())
	}
	elem := v.Shape.Elems[i]
	return Value{Shape: elem, Leaves: v.Leaves[start : start+len(elem.Leaves())]}
}

// StepKind says what a step of a block does.
type StepKind uint8

// The step kinds.
const (
	StepDispatch StepKind = iota
	StepCopy
	StepWhile
	StepConditional
	// StepCollective is a collective of a multi-device program (or replica-id,
	// partition-id), which the host computes between the device's segments.
	StepCollective
)

func (k StepKind) String() string {
	return [...]string{"dispatch", "copy", "while", "conditional", "collective"}[k]
}

// Step is one action of a compiled computation, in execution order.
type Step struct {
	Kind StepKind
	Name string // the HLO instruction it comes from
	// StepDispatch
	Kernel *KernelRef
	Args   []int // plan ranges bound to the kernel's bindings
	Groups [3]uint32
	Push   []byte
	// Copies says the dispatch only copies range Src to range Dst (codegen's
	// CopiesInPlaceInput): it is dropped when they share memory.
	Copies bool
	// StepCopy (and a dispatch that copies): bytes from range Src to range Dst
	Src, Dst int
	// StepWhile: run Cond; while its Pred leaf is true, run Body.
	Cond, Body *Block
	Pred       int
	// StepConditional: run Branches[Index] (pred: false → 1, true → 0, as XLA).
	Index     int
	IndexType hlo.DType
	Branches  []*Block
	// StepCollective: Instr computes Outs (its result's leaves) from Args (its
	// operands, one array each) on the host.
	Instr *hlo.Instruction
	Outs  []int
	// at is the step's position on the timeline (timeline.go), for the plan text.
	at int
}

// Block is a compiled computation: its steps. The root records each block's
// steps into command buffer segments and control steps.
type Block struct {
	Steps []Step
}

// lowering compiles one module into blocks over one arena plan. Outputs are
// written in place over inputs that die at their kernel (shareInPlace), and
// buffers whose lifetimes do not overlap share addresses (place).
type lowering struct {
	kernelsOf Kernels
	limits    alloc.Limits
	plan      alloc.Plan
	kernels   *kernelSet
	constants []constantUpload
	kinds     []rangeKind
	// ext says, per range, whether it is a parameter leaf in the caller's memory
	// (alias.go); a range shares its owner's.
	ext []extKind
	// host marks the buffers in host memory (offload.go).
	host []bool
	// shares[r] is the range whose memory range r is written over in place (see
	// shareInPlace), or -1 when r has memory of its own.
	shares []int
	// inPlace lists the dispatches whose outputs may share a dying input's memory.
	inPlace []inPlaceCandidate
	// carries lists loop-state leaves and the body results copied into them at
	// the end of every iteration (inplace.go updates the state in place).
	carries []loopCarry
	// cur is the block being lowered; home[r] the block range r was made for
	// (nil: made by Compile itself), which decides whether a buffer is remade by
	// every loop iteration (timeline.go).
	cur  *Block
	home []*Block
	// liveBound is the memory lower bound for this step order, livePeak the
	// buffers (owners) live when it is reached (place).
	liveBound int64
	livePeak  []int
	peakAt    int
	// lives is every range's lifetime on the timeline (an owner's covers the
	// ranges written in place over it).
	lives []lifetime
}

// rangeKind classifies plan ranges for MemoryStats.
type rangeKind uint8

const (
	rangeTemp rangeKind = iota
	rangeParam
	rangeConstant
	rangeOutput
)

func (k rangeKind) String() string {
	return [...]string{"temporary", "parameter", "constant", "output"}[k]
}

type constantUpload struct {
	rng int
	lit *hlo.Literal
}

// newRange adds a buffer of size bytes to the plan; place gives it its offset once
// every buffer and its lifetime are known (reuse.go). Zero-size
// buffers still get one aligned word, so every binding has a positive range.
func (l *lowering) newRange(name string, size int64, kind rangeKind) int {
	return l.addRange(name, max(size, 4), kind)
}

// isToken reports a token's range: the only one of no bytes (newRange gives every
// other at least a word).
func (l *lowering) isToken(r int) bool { return l.plan.Ranges[r].Size == 0 }

// addRange adds a buffer of exactly size bytes: a token's has none, as no
// kernel binds one (hlo.Token).
func (l *lowering) addRange(name string, size int64, kind rangeKind) int {
	l.plan.Ranges = append(l.plan.Ranges, alloc.PlanRange{Name: name, Size: size})
	l.kinds = append(l.kinds, kind)
	l.ext = append(l.ext, extNone)
	l.host = append(l.host, false)
	l.shares = append(l.shares, -1)
	l.home = append(l.home, l.cur)
	return len(l.plan.Ranges) - 1
}

// newValue places every leaf of shape.
func (l *lowering) newValue(name string, shape hlo.Shape, kind rangeKind) Value {
	v := Value{Shape: shape}
	for i, leaf := range shape.Leaves() {
		n := name
		if shape.IsTuple() {
			n = fmt.Sprintf("%s.%d", name, i)
		}
		if leaf.DType == hlo.Token {
			v.Leaves = append(v.Leaves, l.addRange(n, 0, kind))
			continue
		}
		v.Leaves = append(v.Leaves, l.newRange(n, leaf.ByteSize(), kind))
	}
	return v
}

// lowerComputation compiles c with its parameters already placed at params.
func (l *lowering) lowerComputation(c *hlo.Computation, params []Value) (*Block, Value, error) {
	b := &Block{}
	outer := l.cur
	l.cur = b
	defer func() { l.cur = outer }()
	vals := make(map[*hlo.Instruction]Value, len(c.Instructions))
	for i, p := range c.Params {
		vals[p] = params[i]
	}
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		v, err := l.lowerInstruction(b, in, vals)
		if err != nil {
			return nil, Value{}, fmt.Errorf("computation %s, instruction %s: %w", c.Name, in.Name, err)
		}
		vals[in] = v
	}
	return b, vals[c.Root], nil
}

func operandValues(in *hlo.Instruction, vals map[*hlo.Instruction]Value) []Value {
	out := make([]Value, len(in.Operands))
	for i, op := range in.Operands {
		out[i] = vals[op]
	}
	return out
}

// lowerInstruction places in's result and appends the steps that compute it.
func (l *lowering) lowerInstruction(b *Block, in *hlo.Instruction, vals map[*hlo.Instruction]Value) (Value, error) {
	ops := operandValues(in, vals)
	switch in.Op {
	case hlo.OpConstant:
		v := l.newValue(in.Name, in.Shape, rangeConstant)
		for i, leaf := range in.Attrs.Literal.Leaves() {
			l.constants = append(l.constants, constantUpload{rng: v.Leaves[i], lit: leaf})
		}
		return v, nil
	case hlo.OpTuple:
		v := Value{Shape: in.Shape}
		for _, op := range ops {
			v.Leaves = append(v.Leaves, op.Leaves...)
		}
		return v, nil
	case hlo.OpGetTupleElement:
		return ops[0].tupleElement(int(in.Attrs.TupleIndex)), nil
	case hlo.OpOptBarrier:
		// The identity: its result is its operand's buffers. The schedule and remat
		// passes run before the barriers are expanded and model them like this.
		return ops[0], nil
	case hlo.OpCall:
		blk, v, err := l.lowerComputation(in.Called[0], ops)
		if err != nil {
			return Value{}, err
		}
		l.rehome(blk, b, len(b.Steps))
		b.Steps = append(b.Steps, blk.Steps...)
		return v, nil
	case hlo.OpWhile:
		return l.lowerWhile(b, in, ops[0])
	case hlo.OpConditional:
		return l.lowerConditional(b, in, ops)
	}
	if in.Info().ExpandedBy == hlo.CollectiveExpander {
		return l.lowerCollective(b, in, ops)
	}
	if toHost, ok := hlo.Placement(in); ok {
		return l.lowerPlacement(b, in, ops[0], toHost)
	}
	return l.lowerKernel(b, in, ops)
}

// lowerCollective makes a collective that a multi-device program keeps (the
// passes expand those of a one-device program) a host step. An async -done is
// its -start's result, in place: the -start step computed it.
func (l *lowering) lowerCollective(b *Block, in *hlo.Instruction, ops []Value) (Value, error) {
	switch in.Op {
	case hlo.OpAllReduceDone:
		return ops[0], nil
	case hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone:
		return ops[0].tupleElement(1), nil
	}
	st := Step{Kind: StepCollective, Name: in.Name, Instr: in}
	for _, op := range ops {
		if !op.Shape.IsArray() {
			return Value{}, fmt.Errorf("%w: %s takes a tuple operand %v", ErrUnsupported, in.Op, op.Shape)
		}
		st.Args = append(st.Args, op.Leaves[0])
	}
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	st.Outs = out.Leaves
	b.Steps = append(b.Steps, st)
	l.noteHostInPlace(b, st)
	return out, nil
}

// noteHostInPlace lets a host step's results take the memory of operands that die
// there: the host reads every operand before it writes any result, so any pair of
// equal size may share (an all-reduce of the gradients then needs no second copy
// of them). Operand k and result k come first, the pairing a reader expects.
func (l *lowering) noteHostInPlace(b *Block, st Step) {
	c := inPlaceCandidate{block: b, step: len(b.Steps) - 1}
	for k, a := range st.Args {
		if k < len(st.Outs) {
			c.pairs = append(c.pairs, [2]int{a, st.Outs[k]})
		}
	}
	for _, a := range st.Args {
		for _, o := range st.Outs {
			c.pairs = append(c.pairs, [2]int{a, o})
		}
	}
	l.inPlace = append(l.inPlace, c)
}

// rehome moves the ranges and in-place candidates of block from to block to, where
// from's steps are inlined starting at step offset (a call).
func (l *lowering) rehome(from, to *Block, offset int) {
	for r, h := range l.home {
		if h == from {
			l.home[r] = to
		}
	}
	for i := range l.inPlace {
		if c := &l.inPlace[i]; c.block == from {
			c.block, c.step = to, c.step+offset
		}
	}
}

// copyValue appends copies of every leaf of src into dst (skipping aliases and
// tokens, which hold no bytes).
func (l *lowering) copyValue(b *Block, name string, src, dst Value) {
	for i := range src.Leaves {
		if src.Leaves[i] != dst.Leaves[i] && !l.isToken(src.Leaves[i]) {
			b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: name, Src: src.Leaves[i], Dst: dst.Leaves[i]})
		}
	}
}

// lowerWhile gives the loop state ranges of its own: the initial Value is copied in,
// condition and body read the state in place, and the body's result is copied back
// at the end of each iteration.
func (l *lowering) lowerWhile(b *Block, in *hlo.Instruction, init Value) (Value, error) {
	state := l.newValue(in.Name+".state", in.Shape, rangeTemp)
	copied := len(b.Steps)
	l.copyValue(b, in.Name, init, state)
	l.noteStateTakesInit(b, copied)
	cond, pred, err := l.lowerComputation(in.Called[0], []Value{state})
	if err != nil {
		return Value{}, err
	}
	body, next, err := l.lowerComputation(in.Called[1], []Value{state})
	if err != nil {
		return Value{}, err
	}
	l.copyBack(body, in.Name, next, state)
	for i, r := range next.Leaves {
		if l.home[r] == body && r != state.Leaves[i] {
			l.carries = append(l.carries, loopCarry{state: state.Leaves[i], next: r, body: body})
		}
	}
	b.Steps = append(b.Steps, Step{Kind: StepWhile, Name: in.Name, Cond: cond, Body: body, Pred: pred.Leaves[0]})
	return state, nil
}

// lowerConditional compiles every branch with its operand in place; the host reads
// the branch index and runs one branch, which copies its result into the output.
func (l *lowering) lowerConditional(b *Block, in *hlo.Instruction, ops []Value) (Value, error) {
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	st := Step{Kind: StepConditional, Name: in.Name, Index: ops[0].Leaves[0], IndexType: ops[0].Shape.DType}
	for i, comp := range in.Called {
		blk, res, err := l.lowerComputation(comp, []Value{ops[i+1]})
		if err != nil {
			return Value{}, err
		}
		l.copyValue(blk, in.Name, res, out)
		st.Branches = append(st.Branches, blk)
	}
	b.Steps = append(b.Steps, st)
	return out, nil
}

// copyBack copies a loop body's result into the loop state. A result leaf that is
// another state leaf (a body that swaps tuple elements) goes through a temporary
// first, so no copy reads a leaf an earlier copy already overwrote.
func (l *lowering) copyBack(b *Block, name string, next, state Value) {
	src := Value{Shape: next.Shape, Leaves: append([]int(nil), next.Leaves...)}
	position := make(map[int]int, len(state.Leaves))
	for i, r := range state.Leaves {
		position[r] = i
	}
	for i, r := range src.Leaves {
		if j, ok := position[r]; ok && j != i && !l.isToken(r) {
			tmp := l.newRange(name+".swap", l.plan.Ranges[r].Size, rangeTemp)
			b.Steps = append(b.Steps, Step{Kind: StepCopy, Name: name, Src: r, Dst: tmp})
			src.Leaves[i] = tmp
		}
	}
	l.copyValue(b, name, src, state)
}
