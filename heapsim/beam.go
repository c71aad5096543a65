package heapsim

import (
	"cmp"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// BeamSchedule orders the kernels of c (straight-line code of at most 64
// single-dispatch kernels, as ExactSchedule takes) by a beam search over the
// exact scheduler's states: at every step each of the best width partial orders is
// extended by each ready kernel, partial orders that ran the same set keep the
// best one, and the width best by (peak so far, live bytes now) go on. With a
// width as large as the number of down-sets it is exact; the schedule pass uses a
// small one (ScheduleBeamWidth). ErrNotExact: c is not such code.
func BeamSchedule(c *hlo.Computation, cfg Config, width int) ([]*hlo.Instruction, error) {
	g, err := newExactGraph(c, cfg)
	if err != nil {
		return nil, err
	}
	type state struct {
		set        uint64
		peak, live int64
		key        int64 // max(peak, the least any remaining kernel will need)
		order      []int8
	}
	beam := []state{{peak: g.base, live: g.live(0)}}
	for range g.kernels {
		next := map[uint64]state{}
		for _, st := range beam {
			for k := range g.kernels {
				bit := uint64(1) << k
				if st.set&bit != 0 || g.preds[k]&^st.set != 0 {
					continue
				}
				set := st.set | bit
				ns := state{set: set, peak: max(st.peak, st.live+g.adds(st.set, k)), live: g.liveAfter(st.set, st.live, k)}
				ns.key = max(ns.peak, g.ahead(set, ns.live))
				if old, ok := next[set]; ok && (old.peak < ns.peak || old.peak == ns.peak && old.live <= ns.live) {
					continue
				}
				ns.order = append(slices.Clip(st.order), int8(k))
				next[set] = ns
			}
		}
		beam = beam[:0]
		for _, st := range next {
			beam = append(beam, st)
		}
		slices.SortFunc(beam, func(a, b state) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.peak, b.peak), cmp.Compare(a.live, b.live), cmp.Compare(a.set, b.set))
		})
		beam = beam[:min(len(beam), width)]
	}
	kernels := make([]*hlo.Instruction, len(beam[0].order))
	for i, k := range beam[0].order {
		kernels[i] = g.kernels[k]
	}
	return g.order(c, kernels), nil
}

// ahead estimates the least peak still to come after the kernels of s have run
// (live bytes now live): every remaining kernel will need its inputs made by then
// and still live, its output unless it may write in place, and its scratch, on top
// of the root values already made and the constants.
func (g *exactGraph) ahead(s uint64, live int64) int64 {
	var held int64 // values that stay whatever runs next: constants, root values made
	for _, v := range g.values {
		if v.constant || v.pinned && v.kernel >= 0 && s&(1<<v.kernel) != 0 {
			held += v.bytes
		}
	}
	need := live
	for k := range g.kernels {
		if s&(1<<k) != 0 {
			continue
		}
		n := held + g.scratch[k]
		if len(g.inPlaceOf[k]) == 0 {
			n += g.out[k]
		}
		for _, v := range g.reads[k] {
			if x := g.values[v]; !x.constant && !(x.pinned && x.kernel >= 0 && s&(1<<x.kernel) != 0) {
				n += x.bytes
			}
		}
		need = max(need, n)
	}
	return need
}

// ScheduleBeamWidth is the beam width of the schedule pass.
const ScheduleBeamWidth = 64
