package vkxla

import (
	"fmt"
	"strings"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// value is where an instruction's result lives: one plan range per array leaf of its
// shape, in flattened tuple order.
type value struct {
	shape  hlo.Shape
	leaves []int
}

// tupleElement returns the leaves of element i of a tuple value.
func (v value) tupleElement(i int) value {
	start := 0
	for _, e := range v.shape.Elems[:i] {
		start += len(e.Leaves())
	}
	elem := v.shape.Elems[i]
	return value{shape: elem, leaves: v.leaves[start : start+len(elem.Leaves())]}
}

// stepKind says what a step of a block does.
type stepKind uint8

const (
	stepDispatch stepKind = iota
	stepCopy
	stepWhile
	stepConditional
)

// step is one action of a compiled computation, in execution order.
type step struct {
	kind stepKind
	name string // the HLO instruction it comes from
	// stepDispatch
	kernel *kernelRef
	args   []int // plan ranges bound to the kernel's bindings
	groups [3]uint32
	push   []byte
	// copies says the dispatch only copies range src to range dst (codegen's
	// CopiesInPlaceInput): it is dropped when they share memory.
	copies bool
	// stepCopy (and a dispatch that copies): bytes from range src to range dst
	src, dst int
	// stepWhile: run cond; while its pred leaf is true, run body.
	cond, body *block
	pred       int
	// stepConditional: run branches[index] (pred: false → 1, true → 0, as XLA).
	index     int
	indexType hlo.DType
	branches  []*block
}

// block is a compiled computation: its steps, and (after recording) the command
// buffer segments and control steps that execute them.
type block struct {
	steps    []step
	segments []segment
}

// lowering compiles one module into blocks over one arena plan. Outputs are
// written in place over inputs that die at their kernel (shareInPlace), and
// buffers whose lifetimes do not overlap share addresses (place).
type lowering struct {
	target    codegen.Target
	limits    arena.Limits
	plan      arena.Plan
	kernels   *kernelSet
	constants []constantUpload
	kinds     []rangeKind
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
	cur  *block
	home []*block
	// liveBound is the memory lower bound for this step order, livePeak the
	// buffers (owners) live when it is reached (place).
	liveBound int64
	livePeak  []int
	// lowered lists every kernel computation with the dispatches it became, kept
	// only when dumping (VKXLA_DUMP).
	dumping bool
	lowered strings.Builder
	// stop reports why the compile must stop (its context ended, the runtime is
	// closing); it is asked after every kernel. nil: never.
	stop func() error
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
	size = max(size, 4)
	l.plan.Ranges = append(l.plan.Ranges, arena.PlanRange{Name: name, Size: size})
	l.kinds = append(l.kinds, kind)
	l.shares = append(l.shares, -1)
	l.home = append(l.home, l.cur)
	return len(l.plan.Ranges) - 1
}

// newValue places every leaf of shape.
func (l *lowering) newValue(name string, shape hlo.Shape, kind rangeKind) value {
	v := value{shape: shape}
	for i, leaf := range shape.Leaves() {
		n := name
		if shape.IsTuple() {
			n = fmt.Sprintf("%s.%d", name, i)
		}
		v.leaves = append(v.leaves, l.newRange(n, leaf.ByteSize(), kind))
	}
	return v
}

// lowerComputation compiles c with its parameters already placed at params.
func (l *lowering) lowerComputation(c *hlo.Computation, params []value) (*block, value, error) {
	b := &block{}
	outer := l.cur
	l.cur = b
	defer func() { l.cur = outer }()
	vals := make(map[*hlo.Instruction]value, len(c.Instructions))
	for i, p := range c.Params {
		vals[p] = params[i]
	}
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		v, err := l.lowerInstruction(b, in, vals)
		if err != nil {
			return nil, value{}, fmt.Errorf("computation %s, instruction %s: %w", c.Name, in.Name, err)
		}
		vals[in] = v
	}
	return b, vals[c.Root], nil
}

func operandValues(in *hlo.Instruction, vals map[*hlo.Instruction]value) []value {
	out := make([]value, len(in.Operands))
	for i, op := range in.Operands {
		out[i] = vals[op]
	}
	return out
}

// lowerInstruction places in's result and appends the steps that compute it.
func (l *lowering) lowerInstruction(b *block, in *hlo.Instruction, vals map[*hlo.Instruction]value) (value, error) {
	ops := operandValues(in, vals)
	switch in.Op {
	case hlo.OpConstant:
		v := l.newValue(in.Name, in.Shape, rangeConstant)
		for i, leaf := range in.Attrs.Literal.Leaves() {
			l.constants = append(l.constants, constantUpload{rng: v.leaves[i], lit: leaf})
		}
		return v, nil
	case hlo.OpTuple:
		v := value{shape: in.Shape}
		for _, op := range ops {
			v.leaves = append(v.leaves, op.leaves...)
		}
		return v, nil
	case hlo.OpGetTupleElement:
		return ops[0].tupleElement(int(in.Attrs.TupleIndex)), nil
	case hlo.OpCall:
		blk, v, err := l.lowerComputation(in.Called[0], ops)
		if err != nil {
			return value{}, err
		}
		l.rehome(blk, b, len(b.steps))
		b.steps = append(b.steps, blk.steps...)
		return v, nil
	case hlo.OpWhile:
		return l.lowerWhile(b, in, ops[0])
	case hlo.OpConditional:
		return l.lowerConditional(b, in, ops)
	}
	return l.lowerKernel(b, in, ops)
}

// rehome moves the ranges and in-place candidates of block from to block to, where
// from's steps are inlined starting at step offset (a call).
func (l *lowering) rehome(from, to *block, offset int) {
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

// copyValue appends copies of every leaf of src into dst (skipping aliases).
func (l *lowering) copyValue(b *block, name string, src, dst value) {
	for i := range src.leaves {
		if src.leaves[i] != dst.leaves[i] {
			b.steps = append(b.steps, step{kind: stepCopy, name: name, src: src.leaves[i], dst: dst.leaves[i]})
		}
	}
}

// lowerWhile gives the loop state ranges of its own: the initial value is copied in,
// condition and body read the state in place, and the body's result is copied back
// at the end of each iteration.
func (l *lowering) lowerWhile(b *block, in *hlo.Instruction, init value) (value, error) {
	state := l.newValue(in.Name+".state", in.Shape, rangeTemp)
	l.copyValue(b, in.Name, init, state)
	cond, pred, err := l.lowerComputation(in.Called[0], []value{state})
	if err != nil {
		return value{}, err
	}
	body, next, err := l.lowerComputation(in.Called[1], []value{state})
	if err != nil {
		return value{}, err
	}
	l.copyBack(body, in.Name, next, state)
	for i, r := range next.leaves {
		if l.home[r] == body && r != state.leaves[i] {
			l.carries = append(l.carries, loopCarry{state: state.leaves[i], next: r, body: body})
		}
	}
	b.steps = append(b.steps, step{kind: stepWhile, name: in.Name, cond: cond, body: body, pred: pred.leaves[0]})
	return state, nil
}

// lowerConditional compiles every branch with its operand in place; the host reads
// the branch index and runs one branch, which copies its result into the output.
func (l *lowering) lowerConditional(b *block, in *hlo.Instruction, ops []value) (value, error) {
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	st := step{kind: stepConditional, name: in.Name, index: ops[0].leaves[0], indexType: ops[0].shape.DType}
	for i, comp := range in.Called {
		blk, res, err := l.lowerComputation(comp, []value{ops[i+1]})
		if err != nil {
			return value{}, err
		}
		l.copyValue(blk, in.Name, res, out)
		st.branches = append(st.branches, blk)
	}
	b.steps = append(b.steps, st)
	return out, nil
}

// copyBack copies a loop body's result into the loop state. A result leaf that is
// another state leaf (a body that swaps tuple elements) goes through a temporary
// first, so no copy reads a leaf an earlier copy already overwrote.
func (l *lowering) copyBack(b *block, name string, next, state value) {
	src := value{shape: next.shape, leaves: append([]int(nil), next.leaves...)}
	position := make(map[int]int, len(state.leaves))
	for i, r := range state.leaves {
		position[r] = i
	}
	for i, r := range src.leaves {
		if j, ok := position[r]; ok && j != i {
			tmp := l.newRange(name+".swap", l.plan.Ranges[r].Size, rangeTemp)
			b.steps = append(b.steps, step{kind: stepCopy, name: name, src: r, dst: tmp})
			src.leaves[i] = tmp
		}
	}
	l.copyValue(b, name, src, state)
}
