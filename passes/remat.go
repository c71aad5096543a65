package passes

import (
	"cmp"
	"maps"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Rematerialize trades compute for memory when Config.MemoryBudget is set, as XLA's
// HloRematerialization and JAX's checkpointing do: while the entry's modelled peak
// (the schedule pass's memory model) is over the budget, it picks a buffer that is
// live at the peak but not read there, and recomputes it (with the producers of
// its operands that are dead at the peak, up to maxChain instructions) just before
// its next reader instead of keeping it: the original is freed after its last read
// before the peak, and the copy lives from its recomputation on. Candidates are
// ranked by their size less the values the copy keeps alive across the peak that
// would otherwise be dead there; the best few are simulated on the model
// (trialPeak) and the one that saves the most modelled peak bytes per unit of
// recomputation is applied. The pass stops when the model is within the budget or no candidate
// lowers the peak, so the peak only falls; the runtime measures the real plan and
// reports a budget it cannot meet.
//
// Candidates are array-valued instructions whose recomputation is a kernel like
// any other: not parameters, constants (the runtime keeps them resident anyway),
// tuples, control flow or multi-output instructions. Loop bodies are not
// rematerialised yet.
func Rematerialize(m *hlo.Module, cfg Config) (bool, error) {
	if cfg.MemoryBudget <= 0 {
		return false, nil
	}
	changed := false
	last := int64(-1)
	for range maxRemats {
		mm := newMemoryModel(m.Entry)
		at, live, peak := mm.peakPoint(m.Entry.Instructions)
		if peak <= cfg.MemoryBudget || at < 0 || (last >= 0 && peak >= last) {
			break // within the budget, only parameters, or the last recomputation did not help
		}
		last = peak
		b, next := bestRemat(m, mm, at, live, peak)
		if b == nil {
			break
		}
		newRematerializer(m).recompute(b, next)
		changed = true
	}
	return changed, nil
}

// candidatesTried bounds the candidates whose effect is simulated at each step.
const candidatesTried = 8

// bestRemat simulates the most promising candidates and returns the chain of the
// one that saves the most modelled peak bytes per unit of recomputation, and the
// position of its next reader; nil when none lowers the peak. Simulating the whole
// order catches what the estimate misses: a peak that moves to where the copies
// are made.
func bestRemat(m *hlo.Module, mm *memoryModel, at int, live map[*hlo.Instruction]bool, peak int64) ([]int, int) {
	var best []int
	bestNext, bestScore := -1, 0.0
	for _, cand := range candidates(mm, m.Entry.Instructions, at, live) {
		saved := peak - mm.trialPeak(m.Entry.Instructions, cand.chain, cand.next)
		if saved <= 0 {
			continue
		}
		// Bytes saved per unit of recomputation, as XLA ranks candidates: a cheap
		// transpose or broadcast goes before a product that saves as much.
		if score := float64(saved) / float64(chainCost(m.Entry, cand.chain)); score > bestScore {
			best, bestNext, bestScore = cand.chain, cand.next, score
		}
	}
	return best, bestNext
}

// trialPeak is the modelled peak of order with chain recomputed before position
// next, simulated without touching the module: the copies are stand-in
// instructions that read what the chain reads (earlier copies for chain members),
// and readers of the chain's last member from next on read its copy instead.
func (mm *memoryModel) trialPeak(order []*hlo.Instruction, chain []int, next int) int64 {
	t := &memoryModel{c: mm.c, size: maps.Clone(mm.size), readers: maps.Clone(mm.readers),
		refs: maps.Clone(mm.refs), pinned: mm.pinned}
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	var added []*hlo.Instruction
	for _, pos := range chain {
		x := order[pos]
		c := &hlo.Instruction{Name: x.Name + ".trial", Op: x.Op, Shape: x.Shape}
		var reads []*hlo.Instruction
		for _, op := range distinct(x.Operands) {
			if cp, ok := copies[op]; ok {
				reads = appendNew(reads, cp)
			} else {
				reads = appendNew(reads, mm.sources[op]...)
			}
		}
		for _, r := range reads {
			t.refs[r]++
		}
		t.size[c], t.readers[c] = mm.size[x], reads
		copies[x] = c
		added = append(added, c)
	}
	// As recompute rewires them: instructions from next on whose operand is b, or
	// a tuple or get-tuple-element made from next on that refers to b.
	b, cb := order[chain[len(chain)-1]], copies[order[chain[len(chain)-1]]]
	refersToB := map[*hlo.Instruction]bool{b: true}
	for _, in := range order[next:] {
		if !slices.ContainsFunc(in.Operands, func(op *hlo.Instruction) bool { return refersToB[op] }) {
			continue
		}
		if in.Op == hlo.OpTuple || in.Op == hlo.OpGetTupleElement {
			refersToB[in] = true
		}
		if i := slices.Index(t.readers[in], b); i >= 0 {
			reads := slices.Clone(t.readers[in])
			reads[i] = cb
			t.readers[in] = reads
			t.refs[b]--
			t.refs[cb]++
		}
	}
	trial := slices.Concat(order[:next], added, order[next:])
	return t.peak(trial)
}

// chainCost estimates the work of recomputing a chain: the elements each member
// produces, times the contracted extent for a dot (a fusion counts its fused
// instructions).
func chainCost(c *hlo.Computation, chain []int) int64 {
	var cost int64
	for _, pos := range chain {
		cost += instructionCost(c.Instructions[pos])
	}
	return max(cost, 1)
}

func instructionCost(in *hlo.Instruction) int64 {
	switch in.Op {
	case hlo.OpFusion:
		var cost int64
		for _, x := range in.Called[0].Instructions {
			if x.Op != hlo.OpParameter {
				cost += instructionCost(x)
			}
		}
		return cost
	case hlo.OpDot:
		k := int64(1)
		for _, d := range in.Attrs.Dot.LhsContracting {
			k *= in.Operands[0].Shape.Dims[d]
		}
		return in.Shape.NumElements() * k
	case hlo.OpReduce, hlo.OpConvolution, hlo.OpReduceWindow:
		return max(in.Shape.NumElements(), in.Operands[0].Shape.NumElements())
	}
	return max(in.Shape.NumElements(), 1)
}

// rematCandidate is a buffer live at the peak: the chain of positions to
// recompute (the buffer last), and the position of its next reader.
type rematCandidate struct {
	chain []int
	next  int
	gain  int64
}

// maxChain bounds the instructions recomputed for one buffer: a buffer whose
// operands are dead at the peak is recomputed with them (tanh(dot(a, w)) needs the
// dot again), as XLA's block rematerialisation does.
const maxChain = 4

// candidates lists the buffers live at the peak (position at) but not read there
// that could be recomputed before their next reader, best estimate first: the
// buffer's size less the values the recomputation keeps alive across the peak
// that would otherwise be dead there.
func candidates(mm *memoryModel, order []*hlo.Instruction, at int, live map[*hlo.Instruction]bool) []rematCandidate {
	var out []rematCandidate
	for _, b := range liveOrdered(live, mm) {
		if !rematerializable(b) || mm.pinned[b] || slices.Contains(mm.readers[order[at]], b) || b == order[at] {
			continue
		}
		next := nextReader(mm, order, at, b)
		if next < 0 {
			continue
		}
		chain, kept := recomputeChain(mm, b, live)
		if gain := mm.size[b] - kept; gain > 0 {
			out = append(out, rematCandidate{chain: chain, next: next, gain: gain})
		}
	}
	slices.SortStableFunc(out, func(a, b rematCandidate) int { return cmp.Compare(b.gain, a.gain) })
	return out[:min(len(out), candidatesTried)]
}

// recomputeChain collects b and, up to maxChain instructions, the producers of its
// operands that are dead at the peak and can be recomputed; it returns their
// positions in program order and the bytes of the dead values the chain still
// reads (kept alive across the peak).
func recomputeChain(mm *memoryModel, b *hlo.Instruction, live map[*hlo.Instruction]bool) ([]int, int64) {
	in := map[*hlo.Instruction]bool{b: true}
	queue := []*hlo.Instruction{b}
	var kept int64
	keptSeen := map[*hlo.Instruction]bool{}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, op := range distinct(x.Operands) {
			for _, s := range mm.sources[op] {
				switch {
				case live[s] || in[s]:
				case op == s && rematerializable(s) && len(in) < maxChain:
					in[s] = true
					queue = append(queue, s)
				case !keptSeen[s]:
					keptSeen[s] = true
					kept += mm.size[s]
				}
			}
		}
	}
	chain := make([]int, 0, len(in))
	for x := range in {
		chain = append(chain, mm.index[x])
	}
	slices.Sort(chain)
	return chain, kept
}

// maxRemats bounds the recomputations of one module.
const maxRemats = 256

type rematerializer struct {
	m     *hlo.Module
	c     *hlo.Computation
	names nameSet
}

func newRematerializer(m *hlo.Module) *rematerializer {
	return &rematerializer{m: m, c: m.Entry, names: moduleNames(m)}
}

// peakPoint returns the position of the (first) peak, the buffers live there and
// the peak bytes.
func (mm *memoryModel) peakPoint(order []*hlo.Instruction) (int, map[*hlo.Instruction]bool, int64) {
	at, peak := -1, int64(-1)
	mm.simulate(order, nil, func(i int, bytes int64) {
		if bytes > peak {
			at, peak = i, bytes
		}
	})
	// Run again to the peak, recording the live buffers there (once, not at every
	// new maximum).
	buffers := map[*hlo.Instruction]bool{}
	var live map[*hlo.Instruction]bool
	mm.simulate(order, buffers, func(i int, _ int64) {
		if i == at {
			live = maps.Clone(buffers)
		}
	})
	return at, live, peak
}

// liveOrdered lists the live buffers in program order (deterministic choices).
func liveOrdered(live map[*hlo.Instruction]bool, mm *memoryModel) []*hlo.Instruction {
	list := slices.Collect(maps.Keys(live))
	slices.SortFunc(list, func(a, b *hlo.Instruction) int { return cmp.Compare(mm.index[a], mm.index[b]) })
	return list
}

// nextReader is the position of the first instruction after at that reads b, or -1.
// order is the model's own (its computation's instructions), so the positions of
// each buffer's readers are known once (readPositions) and searched.
func nextReader(mm *memoryModel, order []*hlo.Instruction, at int, b *hlo.Instruction) int {
	if mm.readPos == nil {
		mm.readPos = map[*hlo.Instruction][]int{}
		for i, in := range order {
			for _, s := range mm.readers[in] {
				mm.readPos[s] = append(mm.readPos[s], i)
			}
		}
	}
	pos := mm.readPos[b]
	if i, _ := slices.BinarySearch(pos, at+1); i < len(pos) {
		return pos[i]
	}
	return -1
}

func rematerializable(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() || !in.SideEffectFree() {
		return false
	}
	switch in.Op {
	case hlo.OpParameter, hlo.OpConstant, hlo.OpWhile, hlo.OpConditional, hlo.OpCall:
		return false
	}
	return true
}

// recompute inserts copies of chain (positions in program order, the buffer to
// recompute last, each member's operands either earlier members or values live
// there) before position next, and makes every instruction from there on read the
// copy of the last member.
func (r *rematerializer) recompute(chain []int, next int) {
	c := r.c
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	var clones []*hlo.Instruction
	for _, pos := range chain {
		in := c.Instructions[pos]
		clone := &hlo.Instruction{Name: r.names.fresh(in.Name + ".remat"), Op: in.Op, Shape: in.Shape.Clone(),
			Attrs: in.Attrs.Clone(), Called: in.Called}
		if in.Op == hlo.OpFusion {
			clone.Called = []*hlo.Computation{r.cloneFused(in.Called[0])}
		}
		for _, op := range in.Operands {
			clone.Operands = append(clone.Operands, cmp.Or(copies[op], op))
		}
		copies[in] = clone
		clones = append(clones, clone)
	}
	b, last := c.Instructions[chain[len(chain)-1]], clones[len(clones)-1]
	for _, in := range c.Instructions[next:] {
		for k, op := range in.Operands {
			if op == b {
				in.Operands[k] = last
			}
		}
	}
	c.Instructions = slices.Insert(c.Instructions, next, clones...)
	c.Renumber()
}

// cloneFused copies a fused computation under fresh names (each fusion calls a
// computation of its own) and adds it to the module before the entry.
func (r *rematerializer) cloneFused(fc *hlo.Computation) *hlo.Computation {
	nc := hlo.CloneComputation(fc, r.names.fresh)
	r.m.Computations = slices.Insert(r.m.Computations, slices.Index(r.m.Computations, r.c), nc)
	return nc
}
