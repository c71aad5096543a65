package heapsim

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// The exact scheduler (and the beam scheduler, beam.go) finds, for a small entry computation, the order of its
// kernels with the least live bytes at the peak under the model's rules — what
// Stats.LowerBoundBytes measures for an order: parameters live until their last
// reader, constants always, root values to the end, scratch during its kernel, an
// output written over an input that dies at its kernel (codegen's InPlace) taking
// no bytes of its own, sizes aligned. It is dynamic programming over down-sets
// (the sets of kernels that can have run first): after a set S has run, the live
// values are those with a reader outside S or in the root, whatever S's order, and
// whether a kernel k can write in place depends only on S too (its input dies at k
// when every other reader is in S), so
//
//	best(S ∪ {k}) = min over ready k of max(best(S), live(S) + bytes k adds)
//
// It measures the schedule heuristic (docs/results.md); TestExactMatchesModel
// checks its cost of random orders against Simulate's LowerBoundBytes.

// MaxExactKernels bounds the kernels ExactSchedule takes (2^n states at most).
const MaxExactKernels = 22

// maxGraphKernels bounds the kernels of the graph both schedulers work on (sets of
// kernels are bit masks).
const maxGraphKernels = 64

// ErrNotExact: a computation the exact scheduler does not handle.
var ErrNotExact = errors.New("heapsim: not for the exact scheduler")

// exactGraph is an entry computation as the exact scheduler sees it.
type exactGraph struct {
	kernels []*hlo.Instruction
	bit     map[*hlo.Instruction]int
	// values: parameters, constants and kernels; readers as kernel masks.
	values  []exactValue
	valueOf map[*hlo.Instruction]int
	// per kernel: the values it reads (distinct), its output bytes, scratch bytes,
	// and the values it may write its output over (InPlace, same size).
	reads     [][]int
	out       []int64
	scratch   []int64
	inPlaceOf [][]int
	preds     []uint64
	base      int64 // parameters and constants: live before the first step
}

type exactValue struct {
	bytes    int64 // aligned
	readers  uint64
	pinned   bool // a root value: lives to the end
	constant bool
	kernel   int // -1 for parameters and constants
}

// ExactSchedule returns the order of m's entry with the least peak live bytes and
// that peak. The entry must be straight-line code of at most MaxExactKernels
// single-dispatch kernels over arrays (parameters, constants, kernels, and a root
// tuple of kernel values).
func ExactSchedule(m *hlo.Module, cfg Config) ([]*hlo.Instruction, int64, error) {
	g, err := newExactGraph(m.Entry, cfg)
	if err != nil {
		return nil, 0, err
	}
	n := len(g.kernels)
	if n > MaxExactKernels {
		return nil, 0, fmt.Errorf("%w: %d kernels, more than %d", ErrNotExact, n, MaxExactKernels)
	}
	full := uint64(1)<<n - 1
	best := make([]int64, 1<<n)
	from := make([]int8, 1<<n)
	for i := range best {
		best[i] = math.MaxInt64
	}
	best[0] = g.base
	// Sets in increasing order: every subset of a set is smaller than it.
	for s := uint64(0); s <= full; s++ {
		if best[s] == math.MaxInt64 {
			continue
		}
		live := g.live(s)
		for k := range n {
			bit := uint64(1) << k
			if s&bit != 0 || g.preds[k]&^s != 0 {
				continue
			}
			cost := max(best[s], live+g.adds(s, k))
			if t := s | bit; cost < best[t] {
				best[t], from[t] = cost, int8(k)
			}
		}
	}
	var rev []*hlo.Instruction
	for s := full; s != 0; s &^= 1 << from[s] {
		rev = append(rev, g.kernels[from[s]])
	}
	slices.Reverse(rev)
	return g.order(m.Entry, rev), best[full], nil
}

// ExactCost is the peak live bytes of m's entry in its own order under the exact
// scheduler's rules (what ExactSchedule minimises), for tests.
func ExactCost(m *hlo.Module, cfg Config) (int64, error) {
	g, err := newExactGraph(m.Entry, cfg)
	if err != nil {
		return 0, err
	}
	peak, s := g.base, uint64(0)
	for _, k := range g.kernels {
		i := g.bit[k]
		peak = max(peak, g.live(s)+g.adds(s, i))
		s |= 1 << i
	}
	return peak, nil
}

// live is the bytes of the values live after the kernels of s have run.
func (g *exactGraph) live(s uint64) int64 {
	var sum int64
	for _, v := range g.values {
		switch {
		case v.constant:
			sum += v.bytes
		case v.kernel >= 0 && s&(1<<v.kernel) == 0: // not made yet
		case v.pinned || v.readers&^s != 0:
			sum += v.bytes
		}
	}
	return sum
}

// liveAfter is live(s | k) from live(s): k's value if anything reads it later or
// the root holds it, less the values whose last reader k is.
func (g *exactGraph) liveAfter(s uint64, live int64, k int) int64 {
	after := s | 1<<k
	if kv := g.values[g.valueOf[g.kernels[k]]]; kv.pinned || kv.readers != 0 {
		live += kv.bytes
	}
	for _, v := range g.reads[k] {
		if x := g.values[v]; !x.constant && !x.pinned && x.readers&^after == 0 {
			live -= x.bytes
		}
	}
	return live
}

// adds is the bytes kernel k adds while it runs after s: its output, unless an
// input dies at k and may be written over, and its scratch.
func (g *exactGraph) adds(s uint64, k int) int64 {
	after := s | 1<<k
	for _, v := range g.inPlaceOf[k] {
		if x := g.values[v]; !x.pinned && !x.constant && x.readers&^after == 0 {
			return g.scratch[k]
		}
	}
	return g.out[k] + g.scratch[k]
}

// order places the kernels in the given order, the other instructions (parameters,
// constants, the root tuple) where the computation has them relative to the start
// and the end.
func (g *exactGraph) order(c *hlo.Computation, kernels []*hlo.Instruction) []*hlo.Instruction {
	var head, tail []*hlo.Instruction
	for _, in := range c.Instructions {
		if _, ok := g.bit[in]; ok {
			continue
		}
		if in == c.Root {
			tail = append(tail, in)
		} else {
			head = append(head, in)
		}
	}
	return slices.Concat(head, kernels, tail)
}

func newExactGraph(c *hlo.Computation, cfg Config) (*exactGraph, error) {
	if cfg.Kernels == nil {
		cfg.Kernels = CoarseKernels
	}
	if cfg.Limits.Alignment == 0 {
		cfg.Limits = DefaultLimits
	}
	align := func(n int64) int64 {
		return (max(n, 4) + cfg.Limits.Alignment - 1) / cfg.Limits.Alignment * cfg.Limits.Alignment
	}
	g := &exactGraph{bit: map[*hlo.Instruction]int{}, valueOf: map[*hlo.Instruction]int{}}
	for _, in := range c.Instructions {
		switch {
		case in.Op == hlo.OpParameter || in.Op == hlo.OpConstant:
			if !in.Shape.IsArray() {
				return nil, fmt.Errorf("%w: %s is a tuple", ErrNotExact, in.Name)
			}
			g.valueOf[in] = len(g.values)
			g.values = append(g.values, exactValue{bytes: align(in.Shape.ByteSize()), constant: in.Op == hlo.OpConstant, kernel: -1})
			g.base += align(in.Shape.ByteSize())
		case in == c.Root && in.Op == hlo.OpTuple:
		case in.Op == hlo.OpTuple || in.Op == hlo.OpGetTupleElement || in.Op == hlo.OpWhile || in.Op == hlo.OpConditional || in.Op == hlo.OpCall || !in.Shape.IsArray():
			return nil, fmt.Errorf("%w: %s (%s)", ErrNotExact, in.Name, in.Op)
		default:
			if err := g.addKernel(in, cfg, align); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range c.Outputs() {
		v, ok := g.valueOf[r]
		if !ok || g.values[v].kernel < 0 {
			return nil, fmt.Errorf("%w: root value %s is not a kernel's", ErrNotExact, r.Name)
		}
		g.values[v].pinned = true
	}
	return g, nil
}

// addKernel adds in as a kernel: its reads, bytes and in-place inputs, from the
// program cfg.Kernels gives, by the rules of lowerKernel and noteInPlace.
func (g *exactGraph) addKernel(in *hlo.Instruction, cfg Config, align func(int64) int64) error {
	kc := hlo.Alone(in)
	if in.Op == hlo.OpFusion {
		kc = fusedKernel(in)
	}
	prog, err := cfg.Kernels(kc)
	if err != nil {
		return err
	}
	if len(prog.Dispatches) != 1 || len(prog.Outputs) != 1 || prog.Dispatches[0].CopiesInPlaceInput || in.Shape.ByteSize() == 0 {
		return fmt.Errorf("%w: %s is not one dispatch with one output", ErrNotExact, in.Name)
	}
	k := len(g.kernels)
	if k == maxGraphKernels {
		return fmt.Errorf("%w: more than %d kernels", ErrNotExact, maxGraphKernels)
	}
	g.bit[in] = k
	g.kernels = append(g.kernels, in)
	var reads, inPlace []int
	var preds uint64
	for i, op := range in.Operands {
		v, ok := g.valueOf[op]
		if !ok {
			return fmt.Errorf("%w: %s reads %s, not an array value before it", ErrNotExact, in.Name, op.Name)
		}
		if !slices.Contains(reads, v) {
			reads = append(reads, v)
			g.values[v].readers |= 1 << k
		}
		if x := g.values[v]; x.kernel >= 0 {
			preds |= 1 << x.kernel
		}
		if prog.InPlace != nil && prog.InPlace[i] && sameFootprint(prog.Inputs[i], prog.Outputs[0]) &&
			!readElsewhereOps(prog.InPlace, in.Operands, i) && max(op.Shape.ByteSize(), 4) == max(in.Shape.ByteSize(), 4) {
			inPlace = append(inPlace, v)
		}
	}
	var scratch int64
	for _, s := range prog.Scratch {
		scratch += align(s)
	}
	g.reads = append(g.reads, reads)
	g.out = append(g.out, align(in.Shape.ByteSize()))
	g.scratch = append(g.scratch, scratch)
	g.inPlaceOf = append(g.inPlaceOf, inPlace)
	g.preds = append(g.preds, preds)
	g.valueOf[in] = len(g.values)
	g.values = append(g.values, exactValue{bytes: align(in.Shape.ByteSize()), kernel: k})
	return nil
}

// readElsewhereOps is readElsewhere on operands: another slot, not read in place,
// reads input i's value.
func readElsewhereOps(inPlace []bool, ops []*hlo.Instruction, i int) bool {
	for k := range ops {
		if k != i && !inPlace[k] && ops[k] == ops[i] {
			return true
		}
	}
	return false
}
