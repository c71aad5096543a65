package passes

import (
	"cmp"
	"maps"
	"slices"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// Rematerialize trades compute for memory when Config.MemoryBudget is set, as XLA's
// HloRematerialization and JAX's checkpointing do: while the memory model's plan
// of the module (heapsim with Config.Memory: the model the planner places buffers
// with, in-place outputs, scratch buffers and alignment included) needs more than
// the budget, it picks a buffer that is live at the model's peak but not read
// there, and recomputes it (with the producers of its operands that are dead at
// the peak, up to maxChain instructions) just before its next reader instead of
// keeping it: the original is freed after its last read before the peak, and the
// copy lives from its recomputation on. Candidates are ranked by their size less
// the values the copy keeps alive across the peak that would otherwise be dead
// there; the best few are tried on a copy of the module in the model and the one
// that saves the most plan bytes per unit of recomputation is applied. The pass
// stops when the plan is within the budget or no candidate lowers it, so the
// plan's bytes only fall; a budget the model meets is met by the plan, and the
// planner reports one it cannot meet.
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
		model, err := heapsim.Simulate(m, cfg.Memory)
		if err != nil {
			break // the planner reports what the model cannot lower
		}
		peak := model.Stats.PeakBytes
		at := peakIndex(m.Entry, model)
		if peak <= cfg.MemoryBudget || at < 0 || (last >= 0 && peak >= last) {
			break // within the budget, only parameters, or the last recomputation did not help
		}
		last = peak
		mm := newMemoryModel(m.Entry)
		b, next := bestRemat(m, cfg.Memory, mm, at, mm.liveAt(m.Entry.Instructions, at), peak)
		if b == nil {
			break
		}
		newRematerializer(m).recompute(b, next)
		changed = true
	}
	return changed, nil
}

// peakIndex is the position in c (the entry) of the instruction running when the
// model's live bytes peak, or -1 when only parameters are live then.
func peakIndex(c *hlo.Computation, model *heapsim.Model) int {
	index := make(map[string]int, len(c.Instructions))
	for i, in := range c.Instructions {
		index[in.Name] = i
	}
	name := model.PeakStep(func(n string) bool { _, ok := index[n]; return ok })
	if name == "" {
		return -1
	}
	return index[name]
}

// candidatesTried bounds the candidates whose effect is simulated at each step.
const candidatesTried = 8

// bestRemat tries the most promising candidates in the model and returns the chain
// of the one that saves the most plan bytes per unit of recomputation, and the
// position of its next reader; nil when none lowers the plan's bytes. Simulating
// the whole module catches what the estimate misses: a peak that moves to where
// the copies are made.
func bestRemat(m *hlo.Module, mc heapsim.Config, mm *memoryModel, at int, live map[*hlo.Instruction]bool, peak int64) ([]int, int) {
	var best []int
	bestNext, bestScore := -1, 0.0
	for _, cand := range candidates(mm, m.Entry.Instructions, at, live) {
		trial, ok := trialPeak(m, mc, cand.chain, cand.next)
		if !ok || trial >= peak {
			continue
		}
		// Bytes saved per unit of recomputation, as XLA ranks candidates: a cheap
		// transpose or broadcast goes before a product that saves as much.
		if score := float64(peak-trial) / float64(chainCost(m.Entry, cand.chain)); score > bestScore {
			best, bestNext, bestScore = cand.chain, cand.next, score
		}
	}
	return best, bestNext
}

// trialPeak is the model's plan bytes for m with chain recomputed before position
// next, tried on a copy of m; false when the model cannot lower the copy.
func trialPeak(m *hlo.Module, mc heapsim.Config, chain []int, next int) (int64, bool) {
	t := m.Clone()
	newRematerializer(t).recompute(chain, next)
	return modelPeak(t, mc)
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

// instructionCost is the op table's cost model of the instruction.
func instructionCost(in *hlo.Instruction) int64 {
	switch in.Info().Cost {
	case hlo.CostCalled:
		var cost int64
		for _, x := range in.Called[0].Instructions {
			if x.Op != hlo.OpParameter {
				cost += instructionCost(x)
			}
		}
		return cost
	case hlo.CostContraction:
		k := int64(1)
		for _, d := range in.Attrs.Dot.LhsContracting {
			k *= in.Operands[0].Shape.Dims[d]
		}
		return in.Shape.NumElements() * k
	case hlo.CostWindow:
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
		if !rematerializable(b) || mm.pinned[b] || b == order[at] {
			continue
		}
		next := -1
		if b.Op == hlo.OpWhile {
			next = nextStackReader(order, at, b)
		} else if !slices.Contains(mm.readers[order[at]], b) {
			next = nextReader(mm, order, at, b)
		}
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
			if x.Op == hlo.OpWhile && op.Op == hlo.OpTuple && !in[op] {
				in[op] = true // a loop's own initial tuple: recomputed with it
				queue = append(queue, op)
				continue
			}
			for _, s := range mm.sources[op] {
				switch {
				case live[s] || in[s]:
				case op == s && rematerializable(s) && len(in) < maxChain:
					in[s] = true
					queue = append(queue, s)
				case !keptSeen[s]:
					// What stays live is what op reads: one element of a loop's
					// result (its state, not its stacks) when op takes one out.
					keptSeen[s] = true
					kept += min(mm.size[s], arrayBytes(op.Shape))
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
	names *nameSet
}

func newRematerializer(m *hlo.Module) *rematerializer {
	return &rematerializer{m: m, c: m.Entry, names: moduleNames(m)}
}

// liveAt returns the buffers live while order[at] runs (its result included).
func (mm *memoryModel) liveAt(order []*hlo.Instruction, at int) map[*hlo.Instruction]bool {
	buffers := map[*hlo.Instruction]bool{}
	var live map[*hlo.Instruction]bool
	mm.simulate(order, buffers, func(i int, _ int64) {
		if i == at {
			live = maps.Clone(buffers)
		}
	})
	return live
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
	if in.Op == hlo.OpWhile {
		return pureLoop(in)
	}
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
	rw := &rewirer{b: b, last: last, names: r.names, done: map[*hlo.Instruction]*hlo.Instruction{}}
	for _, in := range c.Instructions[next:] {
		for k, op := range in.Operands {
			if with := rw.replacement(op); with != nil {
				in.Operands[k] = with
			}
		}
	}
	c.Instructions = slices.Insert(c.Instructions, next, append(clones, rw.aliases...)...)
	c.Renumber()
}

// rewirer finds what a reader after the recomputation reads instead of an
// instruction: b's copy for b, and for a tuple, get-tuple-element or opt-barrier
// made before the recomputation that reaches b (a loop's result read through
// get-tuple-element, as the backward loop reads the forward loop's stacks), a copy
// of it that reaches b's copy.
type rewirer struct {
	b, last *hlo.Instruction
	names   *nameSet
	done    map[*hlo.Instruction]*hlo.Instruction // nil: reaches nothing recomputed
	aliases []*hlo.Instruction                    // the copies made, operands first
}

func (rw *rewirer) replacement(op *hlo.Instruction) *hlo.Instruction {
	if op == rw.b {
		return rw.last
	}
	if !isAlias(op) {
		return nil
	}
	if with, ok := rw.done[op]; ok {
		return with
	}
	var with *hlo.Instruction
	for k, x := range op.Operands {
		if y := rw.replacement(x); y != nil {
			if with == nil {
				with = &hlo.Instruction{Name: rw.names.fresh(op.Name + ".remat"), Op: op.Op, Shape: op.Shape.Clone(),
					Attrs: op.Attrs.Clone(), Operands: slices.Clone(op.Operands)}
			}
			with.Operands[k] = y
		}
	}
	if with != nil {
		rw.aliases = append(rw.aliases, with)
	}
	rw.done[op] = with
	return with
}

// cloneFused copies a fused computation under fresh names (each fusion calls a
// computation of its own) and adds it to the module before the entry.
func (r *rematerializer) cloneFused(fc *hlo.Computation) *hlo.Computation {
	nc := hlo.CloneComputation(fc, r.names.fresh)
	r.m.Computations = slices.Insert(r.m.Computations, slices.Index(r.m.Computations, r.c), nc)
	return nc
}

// pureLoop: a while whose condition and body (and what they call) have no side
// effects, so running it again gives the same state. A differentiated scan's
// forward loop is one: recomputing it just before the backward loop that reads
// its stacks frees them across everything in between (loop-level
// checkpointing, the whole loop as one segment).
func pureLoop(w *hlo.Instruction) bool {
	for _, c := range w.Called {
		for _, in := range c.Instructions {
			if !in.SideEffectFree() || (len(in.Called) > 0 && in.Op != hlo.OpWhile && !pureCalls(in)) ||
				(in.Op == hlo.OpWhile && !pureLoop(in)) {
				return false
			}
		}
	}
	return true
}

// pureCalls: what in calls has no side effects.
func pureCalls(in *hlo.Instruction) bool {
	for _, c := range in.Called {
		for _, x := range c.Instructions {
			if !x.SideEffectFree() || !pureCalls(x) {
				return false
			}
		}
	}
	return true
}

// nextStackReader is, for a loop b, the position of the first instruction after
// at that reads one of b's large results (its stacks: elements of at least half
// the largest element's bytes), or -1 (also when the peak's own instruction at
// reads one). Readers that take only b's small elements (the next scan reading
// the state, at the peak or before the stacks' reader) keep the original loop's,
// which stay live at their size, so the recomputation is placed where the stacks
// are needed, not where the next loop's recomputation reads the state.
func nextStackReader(order []*hlo.Instruction, at int, b *hlo.Instruction) int {
	var largest int64
	for _, e := range b.Shape.Elems {
		largest = max(largest, arrayBytes(e))
	}
	memo := map[*hlo.Instruction]bool{}
	var readsStack func(op *hlo.Instruction) bool
	readsStack = func(op *hlo.Instruction) bool {
		if v, ok := memo[op]; ok {
			return v
		}
		v := op == b
		switch {
		case op.Op == hlo.OpGetTupleElement && op.Operands[0] == b:
			v = 2*arrayBytes(op.Shape) >= largest
		case op.Op == hlo.OpTuple || op.Op == hlo.OpGetTupleElement || op.Op == hlo.OpOptBarrier:
			v = slices.ContainsFunc(op.Operands, readsStack)
		}
		memo[op] = v
		return v
	}
	if slices.ContainsFunc(order[at].Operands, readsStack) {
		return -1
	}
	for i := at + 1; i < len(order); i++ {
		if in := order[i]; !isAlias(in) && slices.ContainsFunc(in.Operands, readsStack) {
			return i
		}
	}
	return -1
}

// isAlias: an instruction whose result is its operands' buffers.
func isAlias(in *hlo.Instruction) bool {
	return in.Op == hlo.OpTuple || in.Op == hlo.OpGetTupleElement || in.Op == hlo.OpOptBarrier
}
