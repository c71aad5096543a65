package arena

import (
	"errors"
	"fmt"
	"sync"

	"github.com/vkxla/vkxla/device"
)

// Arena owns device memory for one executable, or a pool shared by several: a Heap
// whose blocks are device buffers (one VkDeviceMemory and one VkBuffer each).
// Executables place their Plan in it once; runtime temporaries come from Alloc.
// An Arena is safe for use from many goroutines.
//
// Memory is not zeroed when it is allocated (lavapipe hands out whatever malloc
// returns): a buffer whose contents matter before the first write needs Zero.
type Arena struct {
	dev    *device.Device
	lim    Limits
	mu     sync.Mutex // guards everything below
	heap   *Heap
	bufs   []*device.Buffer // per block; nil once released
	plan   *Placement       // set by NewPlanned
	closed bool
	xfer   transfer // staging and fills; its own lock, never taken inside mu
	host   bool     // blocks in host memory (Options.Host)
}

// Options configure an arena. The zero value takes every limit from the device.
type Options struct {
	// Limits override the device's limits field by field; zero fields take the
	// device's value (LimitsFromCaps). Tests use a small MaxBindingRange to exercise
	// split bindings without allocating 128 MiB.
	Limits Limits
	// BlockSize is the size of each block that dynamic allocation adds
	// (DefaultBlockSize when 0); a larger request gets a block of its own size.
	BlockSize int64
	// Limit caps the device memory the arena reserves (a memory budget); 0: none.
	Limit int64
	// StagingSize bounds the host-visible staging buffer used for transfers where
	// the host cannot map device memory (DefaultStagingSize when 0).
	StagingSize int64
	// Host makes the arena's blocks host memory (device.NewHostBuffer: host-visible
	// and coherent, cached where the device has such a type): an executable's
	// offloaded values (heapsim's host offload), which kernels and copies reach
	// over the bus.
	Host bool
}

// LimitsFromCaps returns the arena limits of a device: its binding and allocation
// limits, and its offset alignment raised to at least MinAlignment.
func LimitsFromCaps(c device.Caps) Limits {
	return Limits{
		Alignment:       max(c.MinStorageBufferOffsetAlignment, MinAlignment),
		MaxBindingRange: c.MaxStorageBufferRange,
		MaxBlockSize:    c.MaxMemoryAllocationSize,
	}
}

// limits merges the override onto the device's limits.
func (o Options) limits(c device.Caps) Limits {
	l := LimitsFromCaps(c)
	if o.Limits.Alignment != 0 {
		l.Alignment = max(o.Limits.Alignment, l.Alignment)
	}
	if o.Limits.MaxBindingRange != 0 {
		l.MaxBindingRange = min(o.Limits.MaxBindingRange, l.MaxBindingRange)
	}
	if o.Limits.MaxBlockSize != 0 {
		l.MaxBlockSize = min(o.Limits.MaxBlockSize, l.MaxBlockSize)
	}
	return l
}

// New returns an empty arena on d; it reserves device memory on first use.
func New(d *device.Device, o Options) (*Arena, error) {
	if o.StagingSize < 0 {
		return nil, fmt.Errorf("%w: negative staging size %d", ErrInvalid, o.StagingSize)
	}
	if o.StagingSize == 0 {
		o.StagingSize = DefaultStagingSize
	}
	a := &Arena{dev: d, lim: o.limits(d.Caps()), host: o.Host}
	a.xfer.max = o.StagingSize
	h, err := NewHeap(a.lim, HeapOptions{BlockSize: o.BlockSize, Limit: o.Limit, Grow: a.newBlock, Release: a.closeBlock})
	if err != nil {
		return nil, err
	}
	a.heap = h
	return a, nil
}

// NewPlanned returns an arena holding plan p: each of the plan's blocks is one device
// allocation of exactly its size (rounded up to the alignment), made here, once.
// PlanRange(i) then gives the device range of the plan's range i. Dynamic Alloc
// still works and adds blocks of its own.
func NewPlanned(d *device.Device, p *Plan, o Options) (*Arena, error) {
	a, err := New(d, o)
	if err != nil {
		return nil, err
	}
	pl, err := a.place(p, true)
	if err != nil {
		return nil, errors.Join(err, a.Close())
	}
	a.plan = pl
	return a, nil
}

// newBlock is the heap's Grow hook: a device buffer for block b.
func (a *Arena) newBlock(b int, size int64) error {
	newBuffer := a.dev.NewBuffer
	if a.host {
		newBuffer = a.dev.NewHostBuffer
	}
	buf, err := newBuffer(size)
	if err != nil {
		return err
	}
	for len(a.bufs) <= b {
		a.bufs = append(a.bufs, nil)
	}
	a.bufs[b] = buf
	return nil
}

// closeBlock is the heap's Release hook.
func (a *Arena) closeBlock(b int) error {
	buf := a.bufs[b]
	a.bufs[b] = nil
	return buf.Close()
}

// Limits returns the limits the arena allocates and binds by.
func (a *Arena) Limits() Limits { return a.lim }

// Device returns the device the arena's memory belongs to.
func (a *Arena) Device() *device.Device { return a.dev }

// Stats returns the arena's memory statistics.
func (a *Arena) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.heap.Stats()
}

// ResetPeak restarts the peak statistics from the current values.
func (a *Arena) ResetPeak() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.heap.ResetPeak()
}

// Allocation is a dynamic allocation: its Range, and what Free needs.
type Allocation struct {
	Range
	chunk Chunk
}

// Alloc returns size bytes of device memory at an aligned offset, best fit among
// the free ranges, adding a block when none fits. The memory is not zeroed.
func (a *Arena) Alloc(size int64) (Allocation, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return Allocation{}, ErrClosed
	}
	c, err := a.heap.Alloc(size)
	if err != nil {
		return Allocation{}, err
	}
	return Allocation{Range: a.rangeOf(c, 0, c.Size()), chunk: c}, nil
}

// Free returns an allocation to the arena. A double free, or an allocation of
// another arena, is an error and changes nothing.
func (a *Arena) Free(x Allocation) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return ErrClosed
	}
	return a.heap.Free(x.chunk)
}

// Trim releases the device memory of every block that holds no allocation and
// returns the bytes released.
func (a *Arena) Trim() (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, ErrClosed
	}
	return a.heap.Trim()
}

// Close frees all device memory of the arena, live allocations and plans included,
// and its staging buffer. Ranges of the arena must not be used afterwards (a
// transfer or Free then returns ErrClosed). A second Close does nothing.
func (a *Arena) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	err := a.heap.ReleaseAll()
	a.mu.Unlock()
	// Not under a.mu: a transfer holds xfer.mu and may be waiting for a.mu in owns.
	return errors.Join(err, a.xfer.close())
}

func (a *Arena) rangeOf(c Chunk, off, size int64) Range {
	return Range{buf: a.bufs[c.Block()], block: c.Block(), off: c.Offset() + off, size: size}
}

// Bindings returns the storage-buffer bindings that cover r: r itself when it fits
// in one binding, else consecutive pieces of Limits.BindingChunk(granule) bytes
// (see Limits.Bindings). granule is the byte size that must not straddle two
// bindings, such as an element or a vec4.
func (a *Arena) Bindings(r Range, granule int64) ([]device.BufferRange, error) {
	spans, err := a.lim.Bindings(r.Span(), granule)
	if err != nil {
		return nil, fmt.Errorf("binding %v: %w", r, err)
	}
	out := make([]device.BufferRange, len(spans))
	for i, s := range spans {
		out[i] = device.BufferRange{Buffer: r.buf, Offset: s.Offset, Size: s.Size}
	}
	return out, nil
}
