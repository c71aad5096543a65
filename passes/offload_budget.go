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
// lowest). Where moving those cannot meet the budget, entry parameters and
// outputs move too (JAX's arguments and results of memory kind pinned_host,
// optimizer state kept on the host between steps): a parameter the run stages
// stays in host memory, read through a MoveToDevice on each side of the peak,
// and an output made before the peak is returned from host memory. Constants
// (the executable's resident uploads), values already on the host, and
// parameters and outputs in the caller's memory (donated, borrowed, aliased)
// stay. Disable
// it by name ("host-offload") to keep every value on the device: a budget remat
// cannot meet then fails with ErrOverBudget as before.
func OffloadToMeetBudget(m *hlo.Module, cfg Config) (bool, error) {
	if cfg.MemoryBudget <= 0 {
		return false, nil
	}
	// The search is greedy, so its floor depends on which moves come first:
	// values a kernel made, then the entry values; where that leaves the plan
	// over the budget, the entry values first, and the lower of the two plans.
	var best *hlo.Module
	bestPeak := int64(-1)
	for _, entryFirst := range []bool{false, true} {
		t := m.Clone()
		peak, changed := offloadGreedy(t, cfg, entryFirst)
		if changed && (bestPeak < 0 || peak < bestPeak) {
			best, bestPeak = t, peak
		}
		if peak <= cfg.MemoryBudget { // met (or unmodelled: the other order fails alike)
			break
		}
	}
	if best == nil {
		return false, nil
	}
	*m = *best
	return true, nil
}

// offloadGreedy applies moves to m until its plan fits the budget or no move
// lowers it, and returns the plan's peak (-1 where the model fails) and whether
// it moved anything; m is left at the lowest peak it reached.
func offloadGreedy(m *hlo.Module, cfg Config, entryFirst bool) (int64, bool) {
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
		move := bestOffload(m, cfg.Memory, at, peak, entryFirst)
		if move == nil {
			break
		}
		move(m)
		changed = true
	}
	if best != nil && flat > 0 {
		*m = *best // the moves after the lowest peak did not lower it
	}
	return bestPeak, changed
}

// plateauMoves bounds the moves in a row that leave the peak where it was: where
// several steps share the peak, each move lowers one of them, and the peak falls
// only once all have been.
const plateauMoves = 32

// maxOffloads bounds the values one module moves to the host.
const maxOffloads = 256

// bestOffload is the first move, largest value first, that does not raise the
// plan (it frees the value's bytes at the peak step; the plan falls once every
// step at the peak level has lost some); nil when none of the offloadTried
// largest does. (Taking the first that helps, not the best of several, keeps a
// budget's compile to about two simulations per move: the floor searches of
// docs/results.md compile dozens of budgets.)
func bestOffload(m *hlo.Module, mc heapsim.Config, at int, peak int64, entryFirst bool) func(*hlo.Module) {
	c := m.Entry
	mm := newMemoryModel(c)
	live := liveOrdered(mm.liveAt(c.Instructions, at), mm)
	slices.SortStableFunc(live, func(a, b *hlo.Instruction) int { return cmp.Compare(mm.size[b], mm.size[a]) })
	// Values a kernel made first, unless entryFirst: a parameter or an output
	// moves only where moving them cannot meet the budget (each costs the same two
	// copies, but entry values on the host are the caller's to notice).
	// Copies back from the host come with them: made again after the peak, each
	// frees a buffer a first move had only shortened.
	entry := func(b *hlo.Instruction) bool {
		_, moves := hlo.Placement(b)
		return b.Op == hlo.OpParameter || mm.pinned[b] || moves
	}
	caller := callerMemory(m, mc)
	for _, entryValues := range []bool{entryFirst, !entryFirst} {
		tried := 0
		for _, b := range live {
			if entry(b) != entryValues {
				continue
			}
			move := offloadMove(mm, c.Instructions, at, b, caller)
			if move == nil {
				continue
			}
			if tried++; tried > offloadTried {
				break
			}
			t := m.Clone()
			move(t)
			if trial, ok := modelPeak(t, mc); ok && trial <= peak {
				return move
			}
		}
	}
	return nil
}

// offloadTried bounds the moves of each kind simulated for one step.
const offloadTried = 4

// offloadMove is how b, live across the peak at, moves to the host (a rewrite of
// a clone of the module it was found in, by positions), or nil when it cannot:
// a value a kernel made goes out after it is made and back before its next
// reader (offload); a copy back from the host whose life a later move put the
// peak inside is made again after the peak for its later readers (refetch); an
// entry parameter the run stages stays in host memory and
// each side of the peak reads a copy (offloadParam); an output made before the
// peak is returned from host memory (offloadOutput). Constants, tuples, values
// read at the peak, parameters in the caller's memory and outputs written over a
// parameter stay.
func offloadMove(mm *memoryModel, order []*hlo.Instruction, at int, b *hlo.Instruction, caller map[*hlo.Instruction]bool) func(*hlo.Module) {
	if mm.size[b] == 0 || b == order[at] || slices.Contains(mm.readers[order[at]], b) {
		return nil
	}
	pos := mm.index[b]
	if toHost, moves := hlo.Placement(b); moves {
		next := nextReader(mm, order, at, b)
		if toHost || next < 0 || mm.pinned[b] {
			return nil
		}
		return func(t *hlo.Module) { refetch(t, pos, next) }
	}
	switch {
	case b.Op == hlo.OpParameter:
		if caller[b] || mm.pinned[b] || !b.Shape.IsArray() {
			return nil
		}
		return func(t *hlo.Module) { offloadParam(t, pos, at) }
	case mm.pinned[b]:
		outs := returned(mm.c.Root, b)
		if pos > at || len(outs) == 0 || !onlyRootAfter(mm, order, at, b, outs) {
			return nil
		}
		for _, k := range outs {
			if caller[mm.c.Root.Operands[k]] {
				return nil
			}
		}
		return func(t *hlo.Module) { offloadOutputs(t, pos, outs) }
	case !b.Shape.IsArray():
		return nil
	}
	switch b.Op {
	case hlo.OpConstant, hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpOptBarrier:
		return nil
	}
	next := nextReader(mm, order, at, b)
	if next < 0 {
		return nil
	}
	return func(t *hlo.Module) { offload(t, pos, next) }
}

// callerMemory are the parameters whose memory the caller provides (donated or
// borrowed, or named by input_output_alias) and the root's operands written over
// a parameter: they stay where the caller's tensors are.
func callerMemory(m *hlo.Module, mc heapsim.Config) map[*hlo.Instruction]bool {
	c := m.Entry
	out := map[*hlo.Instruction]bool{}
	for _, p := range slices.Concat(mc.Donate, mc.Borrow) {
		if p >= 0 && p < len(c.Params) {
			out[c.Params[p]] = true
		}
	}
	for _, a := range m.InputOutputAlias {
		if a.Param >= 0 && a.Param < int64(len(c.Params)) {
			out[c.Params[a.Param]] = true
		}
	}
	if len(mc.Donate) > 0 || len(m.InputOutputAlias) > 0 {
		for _, op := range c.Root.Operands { // may alias a donated parameter
			out[op] = true
		}
	}
	return out
}

// returned are the root operands that return b's value: b itself (an array) or
// a get-tuple-element of it (an output of a multi-output kernel, as the fused
// updates of an optimizer step are); none where the root is not a tuple.
func returned(root, b *hlo.Instruction) []int {
	if root.Op != hlo.OpTuple {
		return nil
	}
	var outs []int
	for k, op := range root.Operands {
		if op == b && b.Shape.IsArray() || op.Op == hlo.OpGetTupleElement && op.Operands[0] == b && op.Shape.IsArray() {
			outs = append(outs, k)
		}
	}
	return outs
}

// onlyRootAfter reports that nothing but the root and the get-tuple-elements it
// returns (outs) reads b after position at, and that they return all of b.
func onlyRootAfter(mm *memoryModel, order []*hlo.Instruction, at int, b *hlo.Instruction, outs []int) bool {
	root := mm.c.Root
	var leaves int64
	for _, k := range outs {
		leaves += arrayBytes(root.Operands[k].Shape)
	}
	if leaves != mm.size[b] {
		return false // some of b stays on the device anyway
	}
	for next := nextReader(mm, order, at, b); next >= 0; next = nextReader(mm, order, next, b) {
		if r := order[next]; r != root && !slices.ContainsFunc(outs, func(k int) bool { return root.Operands[k] == r }) {
			return false
		}
	}
	return true
}

// refetch splits the device copy at position b (a MoveToDevice, made before a
// later move put the peak inside its life) at the peak: its readers from
// position next on read a copy of its own made just before them.
func refetch(m *hlo.Module, b, next int) {
	c := m.Entry
	x := c.Instructions[b]
	copyBack(c, moduleNames(m), x.Operands[0], x, next, len(c.Instructions))
	c.Renumber()
}

// offloadParam keeps the entry parameter at position p in host memory: a
// MoveToDevice before its first reader serves the readers up to the peak at, and
// another before its first reader after the peak serves the rest, so that no
// device copy is live across the peak (heapsim places a parameter only
// MoveToDevice reads in host memory; Run stages the input there).
func offloadParam(m *hlo.Module, p, at int) {
	c := m.Entry
	x := c.Instructions[p]
	first, after := -1, -1
	for i := p + 1; i < len(c.Instructions); i++ {
		if !slices.Contains(c.Instructions[i].Operands, x) {
			continue
		}
		if first < 0 {
			first = i
		}
		if i > at && after < 0 {
			after = i
		}
	}
	if first < 0 {
		return
	}
	names, end := moduleNames(m), len(c.Instructions)
	if after > first { // the later copy first: positions before it stay valid
		copyBack(c, names, x, x, after, end)
		end = after
	}
	copyBack(c, names, x, x, first, end)
	c.Renumber()
}

// copyBack inserts a MoveToDevice of src at position pos, which the readers of
// old in [pos, end) read from then on.
func copyBack(c *hlo.Computation, names *nameSet, src, old *hlo.Instruction, pos, end int) {
	dev := move(names.fresh(src.Name+".device"), src, false)
	for _, in := range c.Instructions[pos:end] {
		for j, op := range in.Operands {
			if op == old {
				in.Operands[j] = dev
			}
		}
	}
	c.Instructions = slices.Insert(c.Instructions, pos, dev)
}

// offloadOutputs returns the root operands outs, which return the value at
// position b (itself or its get-tuple-elements) and which nothing else reads
// after the peak, from host memory: a MoveToHost of each right after b (of a
// get-tuple-element made there), which the root reads.
func offloadOutputs(m *hlo.Module, b int, outs []int) {
	c := m.Entry
	x := c.Instructions[b]
	names := moduleNames(m)
	var made []*hlo.Instruction
	for _, k := range outs {
		v := x
		if op := c.Root.Operands[k]; op != x {
			v = &hlo.Instruction{Name: names.fresh(op.Name + ".out"), Op: hlo.OpGetTupleElement, Shape: op.Shape.Clone(),
				Operands: []*hlo.Instruction{x}, Attrs: op.Attrs.Clone()}
			made = append(made, v)
		}
		host := move(names.fresh(v.Name+".host"), v, true)
		made = append(made, host)
		c.Root.Operands[k] = host
	}
	c.Instructions = slices.Insert(c.Instructions, b+1, made...)
	c.Instructions = slices.DeleteFunc(c.Instructions, func(in *hlo.Instruction) bool {
		return in.Op == hlo.OpGetTupleElement && in.Operands[0] == x && !slices.Contains(made, in) && !read(c, in)
	})
	c.Renumber()
}

// read reports an instruction of c that reads in.
func read(c *hlo.Computation, in *hlo.Instruction) bool {
	for _, u := range c.Instructions {
		if slices.Contains(u.Operands, in) {
			return true
		}
	}
	return false
}

// offload inserts MoveToHost of the value at position b right after it and
// MoveToDevice of that before position next, and makes every instruction from
// next on read the moved-back copy.
func offload(m *hlo.Module, b, next int) {
	c := m.Entry
	names := moduleNames(m)
	x := c.Instructions[b]
	host := move(names.fresh(x.Name+".host"), x, true)
	dev := move(names.fresh(x.Name+".device"), host, false)
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

// move is a MoveToHost (toHost) or MoveToDevice of x, named name. MoveToHost has a
// side effect, as XLA writes it, so that no pass drops or merges the copy.
func move(name string, x *hlo.Instruction, toHost bool) *hlo.Instruction {
	cc := &hlo.CustomCallAttrs{Target: hlo.MoveToDeviceTarget}
	if toHost {
		cc = &hlo.CustomCallAttrs{Target: hlo.MoveToHostTarget, HasSideEffect: true}
	}
	return &hlo.Instruction{Name: name, Op: hlo.OpCustomCall, Shape: x.Shape.Clone(), Operands: []*hlo.Instruction{x},
		Attrs: hlo.Attributes{CustomCall: cc}}
}
