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
// live at the peak but not read there, and recomputes it just before its next
// reader instead of keeping it: the original is freed after its last read before
// the peak, and the copy lives from its recomputation on. Candidates are ranked by
// their size less the operands the copy keeps alive across the peak that would
// otherwise be dead there; the best few are tried on a copy of the module and the
// one that lowers the modelled peak most is applied. The pass stops when the model
// is within the budget or no candidate lowers the peak, so the peak only falls;
// the runtime measures the real plan and reports a budget it cannot meet.
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
	for range maxRemats {
		mm := newMemoryModel(m.Entry)
		at, live, peak := mm.peakPoint(m.Entry.Instructions)
		if peak <= cfg.MemoryBudget {
			break
		}
		b, next := bestRemat(m, mm, at, live, peak)
		if b < 0 {
			break
		}
		newRematerializer(m).recompute(m.Entry.Instructions[b], next)
		changed = true
	}
	return changed, nil
}

// candidatesTried bounds the candidates whose effect is simulated at each step.
const candidatesTried = 8

// bestRemat tries the most promising candidates on copies of m and returns the
// position of the one that lowers the modelled peak most, and of its next reader;
// -1 when none lowers it. Simulating the whole order catches what the estimate
// misses: a peak that moves to where the copy is made.
func bestRemat(m *hlo.Module, mm *memoryModel, at int, live map[*hlo.Instruction]bool, peak int64) (int, int) {
	best, bestNext, bestPeak := -1, -1, peak
	for _, cand := range candidates(mm, m.Entry.Instructions, at, live) {
		trial := m.Clone()
		newRematerializer(trial).recompute(trial.Entry.Instructions[cand.pos], cand.next)
		if p := newMemoryModel(trial.Entry).peak(trial.Entry.Instructions); p < bestPeak {
			best, bestNext, bestPeak = cand.pos, cand.next, p
		}
	}
	return best, bestNext
}

// rematCandidate is a buffer live at the peak, by position, with the position of
// its next reader and its estimated saving.
type rematCandidate struct {
	pos, next int
	gain      int64
}

// candidates lists the buffers live at the peak (position at) but not read there
// that could be recomputed before their next reader, best estimate first: the
// buffer's size less the operands the copy keeps alive across the peak.
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
		gain := mm.size[b]
		for _, op := range distinct(b.Operands) {
			for _, s := range mm.sources[op] {
				if !live[s] {
					gain -= mm.size[s]
				}
			}
		}
		if gain > 0 {
			out = append(out, rematCandidate{pos: mm.index[b], next: next, gain: gain})
		}
	}
	slices.SortStableFunc(out, func(a, b rematCandidate) int { return cmp.Compare(b.gain, a.gain) })
	return out[:min(len(out), candidatesTried)]
}

// maxRemats bounds the recomputations of one module.
const maxRemats = 256

type rematerializer struct {
	m     *hlo.Module
	c     *hlo.Computation
	names *fuser // for fresh names
}

func newRematerializer(m *hlo.Module) *rematerializer {
	return &rematerializer{m: m, c: m.Entry, names: newFuser(m, Config{})}
}

// peakPoint returns the position of the (first) peak, the buffers live there and
// the peak bytes.
func (mm *memoryModel) peakPoint(order []*hlo.Instruction) (int, map[*hlo.Instruction]bool, int64) {
	at, peak := -1, int64(-1)
	var live map[*hlo.Instruction]bool
	mm.simulate(order, func(i int, bytes int64, buffers map[*hlo.Instruction]bool) {
		if bytes > peak {
			at, peak, live = i, bytes, maps.Clone(buffers)
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
func nextReader(mm *memoryModel, order []*hlo.Instruction, at int, b *hlo.Instruction) int {
	for i := at + 1; i < len(order); i++ {
		if slices.Contains(mm.readers[order[i]], b) {
			return i
		}
	}
	return -1
}

func rematerializable(in *hlo.Instruction) bool {
	if !in.Shape.IsArray() {
		return false
	}
	switch in.Op {
	case hlo.OpParameter, hlo.OpConstant, hlo.OpWhile, hlo.OpConditional, hlo.OpCall:
		return false
	}
	return true
}

// recompute inserts a copy of b before position next and makes every instruction
// from there on read the copy.
func (r *rematerializer) recompute(b *hlo.Instruction, next int) {
	c := r.c
	clone := &hlo.Instruction{Name: r.names.fresh(b.Name + ".remat"), Op: b.Op, Shape: b.Shape.Clone(),
		Attrs: b.Attrs.Clone(), Operands: slices.Clone(b.Operands), Called: b.Called}
	if b.Op == hlo.OpFusion {
		clone.Called = []*hlo.Computation{r.cloneFused(b.Called[0])}
	}
	for _, in := range c.Instructions[next:] {
		for k, op := range in.Operands {
			if op == b {
				in.Operands[k] = clone
			}
		}
	}
	c.Instructions = slices.Insert(c.Instructions, next, clone)
	c.Renumber()
}

// cloneFused copies a fused computation under fresh names (each fusion calls a
// computation of its own) and adds it to the module before the entry.
func (r *rematerializer) cloneFused(fc *hlo.Computation) *hlo.Computation {
	nc := &hlo.Computation{Name: r.names.fresh(fc.Name)}
	copies := map[*hlo.Instruction]*hlo.Instruction{}
	for _, in := range fc.Instructions {
		ni := &hlo.Instruction{Name: r.names.fresh(in.Name), Op: in.Op, Shape: in.Shape.Clone(),
			Attrs: in.Attrs.Clone(), Called: in.Called}
		for _, op := range in.Operands {
			ni.Operands = append(ni.Operands, copies[op])
		}
		copies[in] = ni
		nc.Instructions = append(nc.Instructions, ni)
	}
	for _, p := range fc.Params {
		nc.Params = append(nc.Params, copies[p])
	}
	nc.Root = copies[fc.Root]
	nc.Renumber()
	r.m.Computations = slices.Insert(r.m.Computations, slices.Index(r.m.Computations, r.c), nc)
	return nc
}
