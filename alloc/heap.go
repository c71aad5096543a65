package alloc

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// Heap is the arena's allocation logic without any device: it hands out aligned
// byte ranges of numbered blocks, best-fit, coalescing free neighbours, and grows by
// adding blocks of at most Limits.MaxBlockSize. The device-backed Arena puts one
// device buffer behind each block through HeapOptions.Grow and Release.
//
// A Heap is not safe for concurrent use; Arena serialises access to its Heap.
type Heap struct {
	lim    Limits
	opts   HeapOptions
	id     uint64  // tells this heap's chunks from another heap's
	blocks []block // indices are never reused
	free   freeList
	nextID uint64
	stats  Stats
}

// HeapOptions tune how a Heap grows.
type HeapOptions struct {
	// BlockSize is the size of a new block when no free extent fits a request;
	// a larger request gets a block of its own size. It is capped at
	// Limits.MaxBlockSize. 0 means DefaultBlockSize.
	BlockSize int64
	// Limit caps BytesReserved (a memory budget); 0 means none.
	Limit int64
	// Grow backs a new block with memory; an error aborts the allocation and is
	// returned wrapped. Nil for a heap of pure bookkeeping.
	Grow func(block int, size int64) error
	// Release frees the memory behind a block (in Trim and Close).
	Release func(block int) error
}

// DefaultBlockSize is the size the heap grows by when HeapOptions.BlockSize is 0:
// large enough that runtime temporaries rarely need a second device allocation,
// small enough not to matter on a laptop GPU.
const DefaultBlockSize = 64 << 20

// block is one memory block: its size (0 once released) and its first node.
type block struct {
	size int64
	head *node
}

// whollyFree reports whether the block is held and has no live allocation.
func (b block) whollyFree() bool { return b.size != 0 && b.head.free() && b.head.next == nil }

// Chunk is one allocation of a Heap. The zero Chunk belongs to no heap. Its id,
// unique within the heap, is what makes a stale copy of a freed chunk harmless: the
// node it points to has since been freed, merged or reused under another id.
type Chunk struct {
	heap     uint64
	id       uint64
	n        *node
	block    int
	off      int64
	size     int64 // as requested
	reserved int64 // size rounded up to the alignment; what the heap counts
}

func (c Chunk) Block() int      { return c.block }
func (c Chunk) Offset() int64   { return c.off }
func (c Chunk) Size() int64     { return c.size }
func (c Chunk) Span() Span      { return Span{Offset: c.off, Size: c.size} }
func (c Chunk) Reserved() int64 { return c.reserved }

var heapIDs atomic.Uint64

// NewHeap returns an empty heap; it reserves nothing until the first allocation.
func NewHeap(l Limits, o HeapOptions) (*Heap, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if o.BlockSize < 0 || o.Limit < 0 {
		return nil, fmt.Errorf("%w: negative block size %d or limit %d", ErrInvalid, o.BlockSize, o.Limit)
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	o.BlockSize = min(AlignUp(o.BlockSize, l.Alignment), l.maxBlock())
	h := &Heap{lim: l, opts: o, id: heapIDs.Add(1)}
	h.stats.BytesLimit = o.Limit
	return h, nil
}

// maxBlock is the largest block size that keeps every offset aligned and fits the
// packed position (blockOff).
func (l Limits) maxBlock() int64 { return min(l.MaxBlockSize, 1<<maxBlockBits) &^ (l.Alignment - 1) }

// Limits returns the limits the heap was made with.
func (h *Heap) Limits() Limits { return h.lim }

// Stats returns the current statistics.
func (h *Heap) Stats() Stats {
	s := h.stats
	s.LargestFreeBlock = h.free.largest()
	return s
}

// ResetPeak restarts the peak statistics from the current values.
func (h *Heap) ResetPeak() { h.stats.resetPeak() }

// Alloc returns size bytes at an aligned offset: the best-fitting free extent, or a
// new block when none fits.
func (h *Heap) Alloc(size int64) (Chunk, error) {
	need, err := h.rounded(size)
	if err != nil {
		return Chunk{}, err
	}
	n := h.free.bestFit(need)
	if n == nil {
		if n, err = h.grow(need); err != nil {
			return Chunk{}, err
		}
	}
	return h.carve(n, need, size), nil
}

// AllocDedicated returns size bytes in a new block of exactly that size (rounded
// up to the alignment): how a plan's blocks are placed, with no slack.
func (h *Heap) AllocDedicated(size int64) (Chunk, error) {
	need, err := h.rounded(size)
	if err != nil {
		return Chunk{}, err
	}
	n, err := h.addBlock(need)
	if err != nil {
		return Chunk{}, err
	}
	return h.carve(n, need, size), nil
}

// rounded validates a request and rounds it up to the alignment.
func (h *Heap) rounded(size int64) (int64, error) {
	if size <= 0 {
		return 0, fmt.Errorf("%w: allocation of %d bytes", ErrInvalid, size)
	}
	if size > h.lim.maxBlock() {
		return 0, fmt.Errorf("%w: a request of %d bytes is larger than the largest block the device allows (%d bytes, maxMemoryAllocationSize)",
			ErrBlockTooLarge, size, h.lim.maxBlock())
	}
	return AlignUp(size, h.lim.Alignment), nil
}

// grow adds a block for a request of need bytes: BlockSize when the budget allows,
// else just need; and just need again if the device refuses the larger block.
func (h *Heap) grow(need int64) (*node, error) {
	size := max(need, h.opts.BlockSize)
	if h.opts.Limit > 0 && h.stats.BytesReserved+size > h.opts.Limit {
		size = need
	}
	n, err := h.addBlock(size)
	if err != nil && size > need && !errors.Is(err, ErrOutOfMemory) {
		n, err = h.addBlock(need)
	}
	return n, err
}

// addBlock reserves a new block of size bytes and returns its one, free, node.
func (h *Heap) addBlock(size int64) (*node, error) {
	if h.opts.Limit > 0 && h.stats.BytesReserved+size > h.opts.Limit {
		return nil, fmt.Errorf("%w: a block of %d bytes would take the reserved bytes from %d past the limit %d",
			ErrOutOfMemory, size, h.stats.BytesReserved, h.opts.Limit)
	}
	b := len(h.blocks)
	if b >= 1<<(64-maxBlockBits) {
		return nil, fmt.Errorf("%w: the arena has made %d blocks, the most it can number", ErrOutOfMemory, b)
	}
	if h.opts.Grow != nil {
		if err := h.opts.Grow(b, size); err != nil {
			return nil, fmt.Errorf("arena: allocating a block of %d bytes: %w", size, err)
		}
	}
	n := &node{block: b, size: size}
	h.blocks = append(h.blocks, block{size: size, head: n})
	h.stats.noteReserve(size)
	h.free.insert(n)
	return n, nil
}

// carve makes the first need bytes of the free node n live, splitting off the rest
// as a new free node.
func (h *Heap) carve(n *node, need, size int64) Chunk {
	h.free.remove(n)
	if n.size > need {
		rest := &node{block: n.block, off: n.off + need, size: n.size - need, prev: n, next: n.next}
		if n.next != nil {
			n.next.prev = rest
		}
		n.next, n.size = rest, need
		h.free.insert(rest)
	}
	h.nextID++
	n.id = h.nextID
	h.stats.noteAlloc(need)
	return Chunk{heap: h.id, id: n.id, n: n, block: n.block, off: n.off, size: size, reserved: need}
}

// Free returns a chunk to the heap, merged with free neighbours. Freeing a chunk
// twice, a stale copy of a freed chunk, or another heap's chunk is an error and
// changes nothing.
func (h *Heap) Free(c Chunk) error {
	if c.heap != h.id {
		return fmt.Errorf("%w: the allocation at block %d %v belongs to another arena", ErrBadFree, c.block, c.Span())
	}
	n := c.n
	if n.id != c.id {
		return fmt.Errorf("%w: the allocation at block %d %v was already freed", ErrBadFree, c.block, c.Span())
	}
	n.id = 0
	h.stats.noteFree(n.size)
	if p := n.prev; p != nil && p.free() {
		h.free.remove(p)
		h.absorbNext(p)
		n = p
	}
	if q := n.next; q != nil && q.free() {
		h.free.remove(q)
		h.absorbNext(n)
	}
	h.free.insert(n)
	return nil
}

// absorbNext merges n's next node into n.
func (h *Heap) absorbNext(n *node) {
	q := n.next
	n.size += q.size
	n.next = q.next
	if q.next != nil {
		q.next.prev = n
	}
}

// Trim releases every block that holds no live allocation and returns the bytes
// released. A block whose Release fails is forgotten all the same (its memory
// state is unknown), and the errors are returned joined.
func (h *Heap) Trim() (int64, error) {
	var freed int64
	var errs []error
	for b, blk := range h.blocks {
		if !blk.whollyFree() {
			continue
		}
		h.free.remove(blk.head)
		errs = append(errs, h.drop(b))
		freed += blk.size
	}
	return freed, errors.Join(errs...)
}

// ReleaseAll drops every block, live allocations or not: what the arena's Close does.
func (h *Heap) ReleaseAll() error {
	var errs []error
	for b, blk := range h.blocks {
		if blk.size == 0 {
			continue
		}
		for n := blk.head; n != nil; n = n.next {
			if !n.free() {
				h.stats.noteFree(n.size)
				n.id = 0
			}
		}
		errs = append(errs, h.drop(b))
	}
	h.free = freeList{}
	return errors.Join(errs...)
}

// drop forgets block b and frees the memory behind it.
func (h *Heap) drop(b int) error {
	h.stats.noteRelease(h.blocks[b].size)
	h.blocks[b] = block{}
	if h.opts.Release == nil {
		return nil
	}
	if err := h.opts.Release(b); err != nil {
		return fmt.Errorf("arena: releasing block %d: %w", b, err)
	}
	return nil
}
