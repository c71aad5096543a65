package alloc

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

// checkTiling walks each block's node list: the nodes tile the block from 0 with
// consistent links, no two free nodes touch, the free nodes are exactly the
// index's, and the live nodes are exactly the model's chunks.
func checkTiling(h *Heap, m *heapModel) error {
	live := map[uint64]bool{}
	free := 0
	for b, blk := range h.blocks {
		if blk.size == 0 {
			continue
		}
		nf, err := checkBlock(h, b, blk, m, live)
		if err != nil {
			return err
		}
		free += nf
	}
	if free != len(h.free.bySize) {
		return fmt.Errorf("%d free nodes in the blocks, %d in the index", free, len(h.free.bySize))
	}
	if len(live) != len(m.live) {
		return fmt.Errorf("%d live nodes in the blocks, %d live chunks", len(live), len(m.live))
	}
	return nil
}

// checkBlock checks one block's list and returns its number of free nodes.
func checkBlock(h *Heap, b int, blk block, m *heapModel, live map[uint64]bool) (int, error) {
	var at int64
	free := 0
	var prev *node
	for n := blk.head; n != nil; prev, n = n, n.next {
		if n.block != b || n.off != at || n.size <= 0 || n.prev != prev {
			return 0, fmt.Errorf("block %d: node %+v after offset %d breaks the tiling", b, *n, at)
		}
		if n.off%h.lim.Alignment != 0 || n.size%h.lim.Alignment != 0 {
			return 0, fmt.Errorf("block %d: node at %d size %d misaligned", b, n.off, n.size)
		}
		if err := checkNode(h, n, prev, m, live); err != nil {
			return 0, err
		}
		if n.free() {
			free++
		}
		at += n.size
	}
	if at != blk.size {
		return 0, fmt.Errorf("block %d: nodes end at %d, block size %d", b, at, blk.size)
	}
	return free, nil
}

// checkNode checks a free node against the index and a live one against the model.
func checkNode(h *Heap, n, prev *node, m *heapModel, live map[uint64]bool) error {
	if n.free() {
		if prev != nil && prev.free() {
			return fmt.Errorf("block %d: free nodes at %d and %d are not coalesced", n.block, prev.off, n.off)
		}
		i, found := slices.BinarySearchFunc(h.free.bySize, entryOf(n), cmpEntry)
		if !found || h.free.bySize[i].n != n {
			return fmt.Errorf("block %d: free node at %d is not indexed", n.block, n.off)
		}
		return nil
	}
	c, ok := m.live[n.id]
	if !ok || c.block != n.block || c.off != n.off || c.reserved != n.size || c.n != n {
		return fmt.Errorf("block %d: live node %d at %d size %d does not match chunk %+v", n.block, n.id, n.off, n.size, c)
	}
	if c.size > c.reserved || c.reserved-c.size >= h.lim.Alignment {
		return fmt.Errorf("chunk %d: size %d reserved %d", c.id, c.size, c.reserved)
	}
	live[n.id] = true
	return nil
}

func checkStats(h *Heap, m *heapModel) error {
	s := h.Stats()
	var reserved, largest int64
	blocks := 0
	for _, blk := range h.blocks {
		if blk.size != 0 {
			reserved += blk.size
			blocks++
		}
	}
	for _, e := range h.free.bySize {
		largest = max(largest, e.n.size)
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
	for b, blk := range h.blocks {
		if blk.size != 0 && !blk.whollyFree() {
			return fmt.Errorf("block %d of %d bytes is not one free extent after freeing everything", b, blk.size)
		}
	}
	return nil
}
