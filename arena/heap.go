package arena

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
	blocks []int64 // size of each block; 0 once released (indices are never reused)
	free   freeList
	live   map[blockOff]liveChunk
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

// liveChunk is what the heap remembers of an allocation: its identity, so that a
// stale copy of a freed chunk cannot free whatever now lives at the same address.
type liveChunk struct {
	id       uint64
	reserved int64
}

// Chunk is one allocation of a Heap. The zero Chunk belongs to no heap.
type Chunk struct {
	heap     uint64
	id       uint64
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
	o.BlockSize = min(alignUp(o.BlockSize, l.Alignment), l.maxBlock())
	h := &Heap{lim: l, opts: o, id: heapIDs.Add(1), free: newFreeList(), live: map[blockOff]liveChunk{}}
	h.stats.BytesLimit = o.Limit
	return h, nil
}

// maxBlock is the largest block size that keeps every offset aligned.
func (l Limits) maxBlock() int64 { return l.MaxBlockSize &^ (l.Alignment - 1) }

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
	e, ok := h.free.bestFit(need)
	if !ok {
		if e, err = h.grow(need); err != nil {
			return Chunk{}, err
		}
	}
	return h.carve(e, need, size), nil
}

// AllocDedicated returns size bytes in a new block of exactly that size (rounded
// up to the alignment): how a plan's blocks are placed, with no slack.
func (h *Heap) AllocDedicated(size int64) (Chunk, error) {
	need, err := h.rounded(size)
	if err != nil {
		return Chunk{}, err
	}
	e, err := h.addBlock(need)
	if err != nil {
		return Chunk{}, err
	}
	return h.carve(e, need, size), nil
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
	return alignUp(size, h.lim.Alignment), nil
}

// grow adds a block for a request of need bytes: BlockSize when the budget allows,
// else just need; and just need again if the device refuses the larger block.
func (h *Heap) grow(need int64) (extent, error) {
	size := max(need, h.opts.BlockSize)
	if h.opts.Limit > 0 && h.stats.BytesReserved+size > h.opts.Limit {
		size = need
	}
	e, err := h.addBlock(size)
	if err != nil && size > need && !errors.Is(err, ErrOutOfMemory) {
		e, err = h.addBlock(need)
	}
	return e, err
}

// addBlock reserves a new block of size bytes, all of it free.
func (h *Heap) addBlock(size int64) (extent, error) {
	if h.opts.Limit > 0 && h.stats.BytesReserved+size > h.opts.Limit {
		return extent{}, fmt.Errorf("%w: a block of %d bytes would take the reserved bytes from %d past the limit %d",
			ErrOutOfMemory, size, h.stats.BytesReserved, h.opts.Limit)
	}
	b := len(h.blocks)
	if h.opts.Grow != nil {
		if err := h.opts.Grow(b, size); err != nil {
			return extent{}, fmt.Errorf("arena: allocating a block of %d bytes: %w", size, err)
		}
	}
	h.blocks = append(h.blocks, size)
	h.stats.noteReserve(size)
	e := extent{size: size, block: b, off: 0}
	h.free.insert(e)
	return e, nil
}

// carve takes need bytes from the start of the free extent e.
func (h *Heap) carve(e extent, need, size int64) Chunk {
	h.free.remove(e)
	if e.size > need {
		h.free.insert(extent{size: e.size - need, block: e.block, off: e.off + need})
	}
	h.nextID++
	c := Chunk{heap: h.id, id: h.nextID, block: e.block, off: e.off, size: size, reserved: need}
	h.live[blockOff{e.block, e.off}] = liveChunk{id: c.id, reserved: need}
	h.stats.noteAlloc(need)
	return c
}

// Free returns a chunk to the heap. Freeing a chunk twice, a stale copy of a freed
// chunk, or another heap's chunk is an error and changes nothing.
func (h *Heap) Free(c Chunk) error {
	if c.heap != h.id {
		return fmt.Errorf("%w: the allocation at block %d %v belongs to another arena", ErrBadFree, c.block, c.Span())
	}
	k := blockOff{c.block, c.off}
	lc, ok := h.live[k]
	if !ok || lc.id != c.id {
		return fmt.Errorf("%w: the allocation at block %d %v was already freed", ErrBadFree, c.block, c.Span())
	}
	delete(h.live, k)
	h.stats.noteFree(lc.reserved)
	h.free.add(extent{size: lc.reserved, block: c.block, off: c.off})
	return nil
}

// Trim releases every block that holds no live allocation and returns the bytes
// released. A block whose Release fails is forgotten all the same (its memory
// state is unknown), and the errors are returned joined.
func (h *Heap) Trim() (int64, error) {
	var freed int64
	var errs []error
	for b, size := range h.blocks {
		if size == 0 || h.free.byStart[blockOff{b, 0}] != size {
			continue
		}
		errs = append(errs, h.release(b))
		freed += size
	}
	return freed, errors.Join(errs...)
}

// release drops block b, which must be entirely free.
func (h *Heap) release(b int) error {
	h.free.remove(extent{size: h.blocks[b], block: b, off: 0})
	return h.drop(b)
}

// releaseAll drops every block, live allocations or not: what Close does.
func (h *Heap) releaseAll() error {
	for _, lc := range h.live {
		h.stats.noteFree(lc.reserved)
	}
	clear(h.live)
	h.free = newFreeList()
	var errs []error
	for b, size := range h.blocks {
		if size != 0 {
			errs = append(errs, h.drop(b))
		}
	}
	return errors.Join(errs...)
}

// drop forgets block b and frees the memory behind it.
func (h *Heap) drop(b int) error {
	h.stats.noteRelease(h.blocks[b])
	h.blocks[b] = 0
	if h.opts.Release == nil {
		return nil
	}
	if err := h.opts.Release(b); err != nil {
		return fmt.Errorf("arena: releasing block %d: %w", b, err)
	}
	return nil
}
