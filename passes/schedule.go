package passes

import (
	"container/heap"
	"maps"
	"math"
	"slices"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// Schedule orders the instructions of every sequential computation (see Fusion) so
// that fewer bytes are live at once, as XLA's list scheduler does: the runtime
// runs instructions in their order, and buffers live from the instruction that
// makes them to their last user. Three candidate orders — a greedy list schedule,
// which at each step runs the ready instruction that frees the most bytes net of
// what it allocates (ties in the original order), the same with ties in the
// depth-first post-order from the root (postOrderListSchedule), and a beam search
// over the memory model's step costs (heapsim.BeamSchedule, for straight-line
// kernel code) — are tried; the best replaces the original order only when the memory model
// (heapsim, with Config.Memory's kernels and limits: the model the planner places
// buffers with) says its plan needs fewer bytes, so the pass never makes memory
// worse and leaves well-ordered code alone.
//
// The greedy choice itself scores instructions coarsely: an instruction's result
// takes its array bytes (tuple and get-tuple-element only refer to their operands'
// buffers; parameters are live from the start), and a buffer is freed once every
// instruction that refers to it has run, unless the root refers to it.
func Schedule(m *hlo.Module, cfg Config) (bool, error) {
	changed := false
	for _, c := range sequentialComputations(m) {
		if scheduleComputation(m, c, cfg.Memory) {
			changed = true
		}
	}
	return changed, nil
}

// scheduleComputation reorders c when the model's plan of m needs fewer bytes with
// one of the candidate orders: the greedy list schedule and, where c is
// straight-line code of single-dispatch kernels, heapsim's beam search over the
// model's own step costs (in-place writes included). The best candidate by the
// model's PeakBytes replaces the original order only when it is lower. A module
// the model cannot lower is left as it is (the planner reports why).
func scheduleComputation(m *hlo.Module, c *hlo.Computation, mc heapsim.Config) bool {
	orders := [][]*hlo.Instruction{newMemoryModel(c).listSchedule(), postOrderListSchedule(c)}
	if beam, err := heapsim.BeamSchedule(c, mc, heapsim.ScheduleBeamWidth); err == nil {
		orders = append(orders, beam)
	}
	orig := c.Instructions
	best, ok := modelPeak(m, mc)
	if !ok {
		return false
	}
	var chosen []*hlo.Instruction
	for _, order := range orders {
		if slices.Equal(order, orig) {
			continue
		}
		c.Instructions = order
		if peak, ok := modelPeak(m, mc); ok && peak < best {
			best, chosen = peak, order
		}
	}
	if chosen == nil {
		c.Instructions = orig
		return false
	}
	c.Instructions = chosen
	c.Renumber()
	return true
}

// modelPeak is the device memory the plan of m needs in the memory model, and
// whether the model could lower m.
func modelPeak(m *hlo.Module, mc heapsim.Config) (int64, bool) {
	model, err := heapsim.Simulate(m, mc)
	if err != nil {
		return 0, false
	}
	return model.Stats.PeakBytes, true
}

// memoryModel is the live-bytes model of one computation.
type memoryModel struct {
	c       *hlo.Computation
	size    map[*hlo.Instruction]int64              // bytes an instruction allocates
	sources map[*hlo.Instruction][]*hlo.Instruction // buffers an instruction's value refers to
	refs    map[*hlo.Instruction]int                // instructions referring to each buffer
	readers map[*hlo.Instruction][]*hlo.Instruction // buffers each instruction reads
	pinned  map[*hlo.Instruction]bool               // buffers the root refers to
	index   map[*hlo.Instruction]int                // original positions
	users   map[*hlo.Instruction][]*hlo.Instruction
	readPos map[*hlo.Instruction][]int // positions reading each buffer (remat, lazily)
}

func newMemoryModel(c *hlo.Computation) *memoryModel {
	mm := &memoryModel{c: c, size: map[*hlo.Instruction]int64{}, sources: map[*hlo.Instruction][]*hlo.Instruction{},
		refs: map[*hlo.Instruction]int{}, readers: map[*hlo.Instruction][]*hlo.Instruction{},
		pinned: map[*hlo.Instruction]bool{}, index: map[*hlo.Instruction]int{}, users: usersOf(c)}
	for i, in := range c.Instructions {
		mm.index[in] = i
		switch in.Op {
		case hlo.OpTuple, hlo.OpGetTupleElement, hlo.OpOptBarrier: // aliases of their operands' buffers
			for _, op := range in.Operands {
				mm.sources[in] = appendNew(mm.sources[in], mm.sources[op]...)
			}
		default:
			mm.sources[in] = []*hlo.Instruction{in}
			mm.size[in] = arrayBytes(in.Shape)
			if toHost, ok := hlo.Placement(in); ok && toHost {
				mm.size[in] = 0 // in host memory: offloading frees device bytes
			}
		}
		var read []*hlo.Instruction
		for _, op := range in.Operands {
			read = appendNew(read, mm.sources[op]...)
		}
		mm.readers[in] = read
		for _, s := range read {
			mm.refs[s]++
		}
	}
	for _, s := range mm.sources[c.Root] {
		mm.pinned[s] = true
	}
	for _, p := range c.Params {
		if hlo.HostResident(p, mm.users[p]) {
			mm.size[p] = 0 // in host memory (heapsim's hostParams)
		}
	}
	return mm
}

func appendNew(list []*hlo.Instruction, xs ...*hlo.Instruction) []*hlo.Instruction {
	for _, x := range xs {
		if !slices.Contains(list, x) {
			list = append(list, x)
		}
	}
	return list
}

// distinct returns xs without repeats, in order of first appearance.
func distinct(xs []*hlo.Instruction) []*hlo.Instruction {
	if len(xs) <= 16 {
		return appendNew(nil, xs...)
	}
	seen := make(map[*hlo.Instruction]bool, len(xs))
	var out []*hlo.Instruction
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// usersOf maps every instruction to its distinct users, in order.
func usersOf(c *hlo.Computation) map[*hlo.Instruction][]*hlo.Instruction {
	users := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range c.Instructions {
		for _, op := range distinct(in.Operands) {
			users[op] = append(users[op], in)
		}
	}
	return users
}

// arrayBytes is the bytes of a shape's array leaves.
func arrayBytes(s hlo.Shape) int64 {
	var n int64
	for _, leaf := range s.Leaves() {
		n += leaf.ByteSize()
	}
	return n
}

// simulate runs an order through the model: parameters are live from the start;
// each instruction allocates its result while its operands are still live (at is
// called then, with the live bytes), then the buffers it was the last to read are
// freed. When buffers is not nil it holds the live buffers as at sees them.
func (mm *memoryModel) simulate(order []*hlo.Instruction, buffers map[*hlo.Instruction]bool, at func(i int, live int64)) {
	left := maps.Clone(mm.refs)
	track := func(in *hlo.Instruction, on bool) {
		if buffers == nil {
			return
		}
		if on {
			buffers[in] = true
		} else {
			delete(buffers, in)
		}
	}
	var live int64
	for _, p := range mm.c.Params {
		live += mm.size[p]
		track(p, true)
	}
	for i, in := range order {
		if in.Op == hlo.OpParameter {
			continue
		}
		live += mm.size[in]
		track(in, true)
		at(i, live)
		for _, s := range mm.readers[in] {
			left[s]--
			if left[s] == 0 && !mm.pinned[s] {
				live -= mm.size[s]
				track(s, false)
			}
		}
		if left[in] == 0 && !mm.pinned[in] {
			live -= mm.size[in] // nothing reads it
			track(in, false)
		}
	}
}

// listSchedule is the greedy order: parameters first, then repeatedly the ready
// instruction with the best (freed − allocated) bytes, the earliest on ties. The
// ready instructions wait in a heap: an instruction's score changes only when one
// of the buffers it reads is left with it as its last reader, so each step costs
// O(log n) plus its own reads, never a scan of everything ready.
func (mm *memoryModel) listSchedule() []*hlo.Instruction {
	order := slices.Clone(mm.c.Params)
	left := maps.Clone(mm.refs)
	readersOf := map[*hlo.Instruction][]*hlo.Instruction{}
	for _, in := range mm.c.Instructions {
		for _, s := range mm.readers[in] {
			readersOf[s] = append(readersOf[s], in)
		}
	}
	q := &readyQueue{mm: mm, score: map[*hlo.Instruction]int64{}}
	waiting := map[*hlo.Instruction]int{} // unscheduled distinct operands
	for _, in := range mm.c.Instructions {
		if in.Op == hlo.OpParameter {
			continue
		}
		for _, op := range distinct(in.Operands) {
			if op.Op != hlo.OpParameter {
				waiting[in]++
			}
		}
		if waiting[in] == 0 {
			q.add(in, mm.score(in, left))
		}
	}
	for {
		in := q.next()
		if in == nil {
			break
		}
		order = append(order, in)
		for _, s := range mm.readers[in] {
			if left[s]--; left[s] == 1 && !mm.pinned[s] {
				// The one reader left frees s: if it is ready, it scores higher now.
				for _, r := range readersOf[s] {
					if q.holds(r) {
						q.add(r, q.score[r]+mm.size[s])
					}
				}
			}
		}
		for _, u := range mm.users[in] {
			if waiting[u]--; waiting[u] == 0 {
				q.add(u, mm.score(u, left))
			}
		}
	}
	return order
}

// score is the bytes running in would free less those it allocates.
func (mm *memoryModel) score(in *hlo.Instruction, left map[*hlo.Instruction]int) int64 {
	score := -mm.size[in]
	for _, s := range mm.readers[in] {
		if left[s] == 1 && !mm.pinned[s] {
			score += mm.size[s]
		}
	}
	return score
}

// readyQueue is a max-heap of ready instructions by score, then original position
// (earliest first). An instruction whose score rises is pushed again; its older
// entries are stale and skipped.
type readyQueue struct {
	mm      *memoryModel
	entries []readyEntry
	score   map[*hlo.Instruction]int64 // current score of each instruction made ready
}

type readyEntry struct {
	in    *hlo.Instruction
	score int64
}

// holds says whether in is ready and not yet taken.
func (q *readyQueue) holds(in *hlo.Instruction) bool {
	score, ok := q.score[in]
	return ok && score != taken
}

// taken is the score of an instruction next has returned: no entry matches it.
const taken = math.MinInt64

func (q *readyQueue) add(in *hlo.Instruction, score int64) {
	q.score[in] = score
	heap.Push(q, readyEntry{in, score})
}

// next pops the best instruction whose entry is current, or returns nil when none
// is left.
func (q *readyQueue) next() *hlo.Instruction {
	for q.Len() > 0 {
		e := heap.Pop(q).(readyEntry)
		if e.score == q.score[e.in] {
			q.score[e.in] = taken
			return e.in
		}
	}
	return nil
}

func (q *readyQueue) Len() int { return len(q.entries) }
func (q *readyQueue) Less(i, j int) bool {
	a, b := q.entries[i], q.entries[j]
	if a.score != b.score {
		return a.score > b.score
	}
	return q.mm.index[a.in] < q.mm.index[b.in]
}
func (q *readyQueue) Swap(i, j int) { q.entries[i], q.entries[j] = q.entries[j], q.entries[i] }
func (q *readyQueue) Push(x any)    { q.entries = append(q.entries, x.(readyEntry)) }
func (q *readyQueue) Pop() any {
	e := q.entries[len(q.entries)-1]
	q.entries = q.entries[:len(q.entries)-1]
	return e
}
