package arena

import (
	"cmp"
	"fmt"
	"slices"
)

// heapModel is what a test knows independently of the heap: the chunks it holds
// and the peak it has seen. checkHeap compares the heap against it.
type heapModel struct {
	live map[uint64]Chunk
	peak int64
}

func newHeapModel() *heapModel { return &heapModel{live: map[uint64]Chunk{}} }

func (m *heapModel) inUse() int64 {
	var n int64
	for _, c := range m.live {
		n += c.Reserved()
	}
	return n
}

func (m *heapModel) alloc(c Chunk) {
	m.live[c.id] = c
	m.peak = max(m.peak, m.inUse())
}

func (m *heapModel) chunks() []Chunk {
	cs := make([]Chunk, 0, len(m.live))
	for _, c := range m.live {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b Chunk) int { return cmp.Compare(a.id, b.id) })
	return cs
}

// checkHeap verifies every invariant the arena promises: live chunks aligned,
// inside their blocks and disjoint; live and free extents tiling each block exactly
// with no two free extents touching (fully coalesced); statistics exact.
func checkHeap(h *Heap, m *heapModel) error {
	if err := checkTiling(h, m); err != nil {
		return err
	}
	return checkStats(h, m)
}

type piece struct {
	off, size int64
	free      bool
}

func checkTiling(h *Heap, m *heapModel) error {
	perBlock := map[int][]piece{}
	for _, c := range m.live {
		if c.off%h.lim.Alignment != 0 || c.reserved%h.lim.Alignment != 0 || c.reserved < c.size {
			return fmt.Errorf("chunk %d at block %d %v reserved %d: misaligned", c.id, c.block, c.Span(), c.reserved)
		}
		perBlock[c.block] = append(perBlock[c.block], piece{c.off, c.reserved, false})
	}
	for _, e := range h.free.bySize {
		perBlock[e.block] = append(perBlock[e.block], piece{e.off, e.size, true})
	}
	if len(h.free.bySize) != len(h.free.byStart) || len(h.free.bySize) != len(h.free.byEnd) {
		return fmt.Errorf("free list indexes disagree: %d sorted, %d by start, %d by end",
			len(h.free.bySize), len(h.free.byStart), len(h.free.byEnd))
	}
	for b, ps := range perBlock {
		if b < 0 || b >= len(h.blocks) || h.blocks[b] == 0 {
			return fmt.Errorf("block %d holds extents but is not reserved", b)
		}
		if err := checkBlock(b, h.blocks[b], ps); err != nil {
			return err
		}
	}
	for b, size := range h.blocks {
		if size != 0 && len(perBlock[b]) == 0 {
			return fmt.Errorf("block %d of %d bytes has neither live nor free extents", b, size)
		}
	}
	return nil
}

// checkBlock checks that the pieces of one block tile it from 0 to size.
func checkBlock(b int, size int64, ps []piece) error {
	slices.SortFunc(ps, func(x, y piece) int { return cmp.Compare(x.off, y.off) })
	var at int64
	for i, p := range ps {
		if p.off != at {
			return fmt.Errorf("block %d: piece at %d expected at %d (overlap or hole)", b, p.off, at)
		}
		if p.size <= 0 {
			return fmt.Errorf("block %d: empty piece at %d", b, p.off)
		}
		if i > 0 && p.free && ps[i-1].free {
			return fmt.Errorf("block %d: free extents at %d and %d are not coalesced", b, ps[i-1].off, p.off)
		}
		at += p.size
	}
	if at != size {
		return fmt.Errorf("block %d: pieces end at %d, block size %d", b, at, size)
	}
	return nil
}

func checkStats(h *Heap, m *heapModel) error {
	s := h.Stats()
	var reserved, largest int64
	blocks := 0
	for _, size := range h.blocks {
		if size != 0 {
			reserved += size
			blocks++
		}
	}
	for _, e := range h.free.bySize {
		largest = max(largest, e.size)
	}
	want := Stats{
		BytesInUse: m.inUse(), PeakBytesInUse: m.peak, NumAllocs: int64(len(m.live)),
		BytesReserved: reserved, NumBlocks: blocks, LargestFreeBlock: largest,
	}
	got := Stats{
		BytesInUse: s.BytesInUse, PeakBytesInUse: s.PeakBytesInUse, NumAllocs: s.NumAllocs,
		BytesReserved: s.BytesReserved, NumBlocks: s.NumBlocks, LargestFreeBlock: s.LargestFreeBlock,
	}
	if got != want {
		return fmt.Errorf("stats %+v, want %+v", got, want)
	}
	if s.PeakBytesReserved < s.BytesReserved || (s.BytesLimit > 0 && s.BytesReserved > s.BytesLimit) {
		return fmt.Errorf("reserved %d, peak reserved %d, limit %d", s.BytesReserved, s.PeakBytesReserved, s.BytesLimit)
	}
	return nil
}

// checkAllFree checks that with nothing live each block is one free extent.
func checkAllFree(h *Heap) error {
	for b, size := range h.blocks {
		if size != 0 && h.free.byStart[blockOff{b, 0}] != size {
			return fmt.Errorf("block %d of %d bytes is not one free extent after freeing everything", b, size)
		}
	}
	return nil
}
