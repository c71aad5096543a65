package heapsim

import (
	"cmp"
	"slices"
)

// Buffer reuse by lifetime, after tinygrad's and TFLite's greedy-by-size planners:
// every buffer with memory of its own (an owner: in-place outputs share their
// input's) is live over its span of the timeline (timeline.go: every step, loop
// bodies and branches included); buffers whose lifetimes overlap get disjoint
// addresses, others may share. Buffers are placed one at a time, each at the
// lowest aligned offset free of every placed buffer it is live with, in a few
// orders (placementOrders); the plan that ends lowest is kept. Steps are separated
// by full barriers in the recorded command buffers, so a buffer written after
// another's last read never races with it.

// lifetime is the inclusive span of timeline positions during which a buffer's
// contents matter.
type lifetime struct{ first, last int }

func (a lifetime) overlaps(b lifetime) bool { return a.first <= b.last && b.first <= a.last }

// lifetimes returns the lifetime of every owner (ranges that share memory are
// folded into their owner's lifetime).
func (l *lowering) lifetimes(tl *timeline) []lifetime {
	lt := make([]lifetime, len(l.plan.Ranges))
	for r := range lt {
		lt[r] = lifetime{tl.first[r], tl.last[r]}
	}
	for r := range lt {
		if o := l.owner(r); o != r {
			lt[o] = lifetime{min(lt[o].first, lt[r].first), max(lt[o].last, lt[r].last)}
		}
	}
	return lt
}

// place assigns every owner a block and offset by lifetime, and every shared range
// its owner's.
func (l *lowering) place(tl *timeline) {
	lt := l.lifetimes(tl)
	var owners []int // in the arena: the caller's memory is not placed, the host's apart
	for r := range l.plan.Ranges {
		if l.inArena(r) {
			owners = append(owners, r)
		}
	}
	var addr []int64
	best := int64(-1)
	for _, order := range l.placementOrders(owners, lt) {
		a, end := l.placeInOrder(order, lt)
		if best < 0 || end < best {
			addr, best = a, end
		}
	}
	l.assignBlocks(owners, addr)
	l.placeHost(lt)
	for r, o := range l.shares {
		if o >= 0 {
			o = l.owner(r)
			l.plan.Ranges[r].Block, l.plan.Ranges[r].Offset = l.plan.Ranges[o].Block, l.plan.Ranges[o].Offset
		}
	}
	l.lives = lt
	l.liveBound, l.livePeak, l.peakAt = liveBound(l, lt)
}

// placementOrders are the orders in which buffers are placed; place keeps the one
// that ends lowest. Largest first packs most plans best (TFLite's greedy by size);
// by first use, ties broken by size, wins when big buffers have short,
// interleaved lives that the size order fragments.
func (l *lowering) placementOrders(owners []int, lt []lifetime) [][]int {
	size := func(r int) int64 { return l.plan.Ranges[r].Size }
	bySize := slices.Clone(owners)
	slices.SortStableFunc(bySize, func(a, b int) int {
		return cmp.Or(cmp.Compare(size(b), size(a)), cmp.Compare(lt[a].first, lt[b].first))
	})
	byStart := slices.Clone(owners)
	slices.SortStableFunc(byStart, func(a, b int) int {
		return cmp.Or(cmp.Compare(lt[a].first, lt[b].first), cmp.Compare(size(b), size(a)))
	})
	byArea := slices.Clone(owners)
	area := func(r int) int64 { return size(r) * int64(min(lt[r].last, 1<<30)-lt[r].first+1) }
	slices.SortStableFunc(byArea, func(a, b int) int { return cmp.Compare(area(b), area(a)) })
	return [][]int{bySize, byStart, byArea}
}

// placeInOrder gives each buffer of order the lowest free flat address and returns
// the addresses and the end of the highest buffer.
func (l *lowering) placeInOrder(order []int, lt []lifetime) ([]int64, int64) {
	addr := make([]int64, len(l.plan.Ranges)) // flat address across blocks
	var placed []int
	var end int64
	for _, r := range order {
		addr[r] = l.lowestFree(r, lt, addr, placed)
		placed = append(placed, r)
		end = max(end, addr[r]+l.align(l.plan.Ranges[r].Size))
	}
	return addr, end
}

// lowestFree is the lowest aligned flat address for range r that overlaps no placed
// range live at the same time and crosses no block boundary.
func (l *lowering) lowestFree(r int, lt []lifetime, addr []int64, placed []int) int64 {
	var busy []int
	for _, p := range placed {
		if lt[p].overlaps(lt[r]) {
			busy = append(busy, p)
		}
	}
	slices.SortFunc(busy, func(a, b int) int { return cmp.Compare(addr[a], addr[b]) })
	size := l.plan.Ranges[r].Size
	off := int64(0)
	for {
		off = l.fitBlock(off, size)
		moved := false
		for _, p := range busy {
			if addr[p] < off+size && off < addr[p]+l.plan.Ranges[p].Size {
				off = l.align(addr[p] + l.plan.Ranges[p].Size)
				moved = true
			}
		}
		if !moved {
			return off
		}
	}
}

// fitBlock moves off to the next block boundary when [off, off+size) would cross
// one (a buffer lives in one device allocation).
func (l *lowering) fitBlock(off, size int64) int64 {
	b := l.limits.MaxBlockSize
	if off%b+size > b && off%b != 0 {
		return (off/b + 1) * b
	}
	return off
}

func (l *lowering) align(n int64) int64 {
	a := l.limits.Alignment
	return (n + a - 1) / a * a
}

// assignBlocks turns flat addresses into (block, offset), numbering only the blocks
// some buffer uses.
func (l *lowering) assignBlocks(owners []int, addr []int64) {
	blocks := map[int64]int{}
	var used []int64
	for _, r := range owners {
		b := addr[r] / l.limits.MaxBlockSize
		if _, ok := blocks[b]; !ok {
			used = append(used, b)
			blocks[b] = 0
		}
	}
	slices.Sort(used)
	for i, b := range used {
		blocks[b] = i
	}
	for _, r := range owners {
		l.plan.Ranges[r].Block = blocks[addr[r]/l.limits.MaxBlockSize]
		l.plan.Ranges[r].Offset = addr[r] % l.limits.MaxBlockSize
	}
}

// liveBound is the largest sum of aligned owner sizes live at one moment (no
// placement of these buffers in this step order can use less), the owners live
// then, and the moment (a timeline position).
func liveBound(l *lowering, lt []lifetime) (int64, []int, int) {
	var events []int
	arena := l.inArena
	for r := range lt {
		if arena(r) {
			events = append(events, lt[r].first)
		}
	}
	best, at := int64(0), 0
	for _, t := range events { // the peak is reached where some buffer starts
		var sum int64
		for r := range lt {
			if arena(r) && lt[r].first <= t && t <= lt[r].last {
				sum += l.align(l.plan.Ranges[r].Size)
			}
		}
		if sum > best {
			best, at = sum, t
		}
	}
	var live []int
	for r := range lt {
		if arena(r) && lt[r].first <= at && at <= lt[r].last {
			live = append(live, r)
		}
	}
	return best, live, at
}
