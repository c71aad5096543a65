package passes

import (
	"cmp"
	"slices"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// OffloadToMeetBudget is the tier below rematerialisation: when the plan still
// needs more than Config.MemoryBudget after remat, it moves a value that is live
// at the model's peak but not read there to host memory — a MoveToHost right
// after the value is made, a MoveToDevice just before its next reader after the
// peak, every later reader reading the moved-back copy — so that its device
// buffer is free across the peak (heapsim places the host copy in host memory,
// apart from the device peak; the copies are steps in the command buffers). The
// candidates are the buffers live at the peak but not read there, largest first;
// the first whose move lowers the model's plan is applied; the pass stops when the plan is within the budget
// or the moves stop lowering it (up to plateauMoves in a row may leave it level,
// where several steps share the peak; the module goes back to where the peak was
// lowest). Parameters and constants stay (the caller's memory and
// the executable's resident uploads), as do values already on the host. Disable
// it by name ("host-offload") to keep every value on the device: a budget remat
// cannot meet then fails with ErrOverBudget as before.
func OffloadToMeetBudget(m *hlo.Module, cfg Config) (bool, error) {
	if cfg.MemoryBudget <= 0 {
		return false, nil
	}
	changed, flat := false, 0
	var best *hlo.Module // the module at the lowest peak so far
	bestPeak := int64(-1)
	for range maxOffloads {
		model, err := heapsim.Simulate(m, cfg.Memory)
		if err != nil {
			break // the planner reports what the model cannot lower
		}
		peak := model.Stats.PeakBytes
		at := peakIndex(m.Entry, model)
		if bestPeak < 0 || peak < bestPeak {
			bestPeak, flat = peak, 0
			best = m.Clone()
		} else if flat++; flat > plateauMoves {
			break
		}
		if peak <= cfg.MemoryBudget || at < 0 {
			break
		}
		b, next := bestOffload(m, cfg.Memory, at, peak)
		if b < 0 {
			break
		}
		offload(m, b, next)
		changed = true
	}
	if best != nil && flat > 0 {
		*m = *best // the moves after the lowest peak did not lower it
	}
	return changed, nil
}

// plateauMoves bounds the moves in a row that leave the peak where it was: where
// several steps share the peak, each move lowers one of them, and the peak falls
// only once all have been.
const plateauMoves = 8

// maxOffloads bounds the values one module moves to the host.
const maxOffloads = 256

// bestOffload is the position of the first value, largest first, whose move to
// the host does not raise the plan (it frees the value's bytes at the peak step;
// the plan falls once every step at the peak level has lost some), and of its
// next reader after the peak; -1 when none of the offloadTried largest does. (Taking the first that helps, not the best
// of several, keeps a budget's compile to about two simulations per move: the
// floor searches of docs/results.md compile dozens of budgets.)
func bestOffload(m *hlo.Module, mc heapsim.Config, at int, peak int64) (int, int) {
	c := m.Entry
	mm := newMemoryModel(c)
	live := liveOrdered(mm.liveAt(c.Instructions, at), mm)
	slices.SortStableFunc(live, func(a, b *hlo.Instruction) int { return cmp.Compare(mm.size[b], mm.size[a]) })
	tried := 0
	for _, b := range live {
		next := offloadNext(mm, c.Instructions, at, b)
		if next < 0 {
			continue
		}
		if tried++; tried > offloadTried {
			break
		}
		t := m.Clone()
		offload(t, mm.index[b], next)
		if trial, ok := modelPeak(t, mc); ok && trial <= peak {
			return mm.index[b], next
		}
	}
	return -1, -1
}

// offloadTried bounds the moves simulated for one step.
const offloadTried = 4

// offloadNext is the position of b's next reader after the peak at, or -1 when b
// cannot move: not an array a kernel made, the root's, read at the peak, or on
// the host already.
func offloadNext(mm *memoryModel, order []*hlo.Instruction, at int, b *hlo.Instruction) int {
	if !b.Shape.IsArray() || mm.pinned[b] || b == order[at] || slices.Contains(mm.readers[order[at]], b) {
		return -1
	}
	switch b.Op {
	case hlo.OpParameter, hlo.OpConstant, hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpOptBarrier:
		return -1
	}
	if _, moves := hlo.Placement(b); moves {
		return -1
	}
	return nextReader(mm, order, at, b)
}

// offload inserts MoveToHost of the value at position b right after it and
// MoveToDevice of that before position next, and makes every instruction from
// next on read the moved-back copy.
func offload(m *hlo.Module, b, next int) {
	c := m.Entry
	names := moduleNames(m)
	x := c.Instructions[b]
	attrs := hlo.Attributes{CustomCall: &hlo.CustomCallAttrs{Target: hlo.MoveToHostTarget, HasSideEffect: true}}
	host := &hlo.Instruction{Name: names.fresh(x.Name + ".host"), Op: hlo.OpCustomCall, Shape: x.Shape.Clone(),
		Operands: []*hlo.Instruction{x}, Attrs: attrs}
	dev := &hlo.Instruction{Name: names.fresh(x.Name + ".device"), Op: hlo.OpCustomCall, Shape: x.Shape.Clone(),
		Operands: []*hlo.Instruction{host}, Attrs: hlo.Attributes{CustomCall: &hlo.CustomCallAttrs{Target: hlo.MoveToDeviceTarget}}}
	rw := &rewirer{b: x, last: dev, names: names, done: map[*hlo.Instruction]*hlo.Instruction{}}
	for _, in := range c.Instructions[next:] {
		for k, op := range in.Operands {
			if with := rw.replacement(op); with != nil {
				in.Operands[k] = with
			}
		}
	}
	c.Instructions = slices.Insert(c.Instructions, next, append([]*hlo.Instruction{dev}, rw.aliases...)...)
	c.Instructions = slices.Insert(c.Instructions, b+1, host)
	c.Renumber()
}
