package arena

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/device"
)

// Range is a byte range of an arena's device memory: a buffer, or part of one, that a
// kernel binds or a transfer reads or writes. It stays valid until the allocation or
// placement it came from is freed, or the arena is closed.
type Range struct {
	buf   *device.Buffer
	block int
	off   int64
	size  int64
}

// Buffer is the device buffer (memory block) the range lies in.
func (r Range) Buffer() *device.Buffer { return r.buf }

// Block is the index of that block in the arena.
func (r Range) Block() int { return r.block }

// Offset is the range's start within its buffer.
func (r Range) Offset() int64 { return r.off }

// Size is the range's length in bytes.
func (r Range) Size() int64 { return r.size }

// Span is the range within its block.
func (r Range) Span() Span { return Span{Offset: r.off, Size: r.size} }

// BufferRange is the range as one binding of a dispatch. A range larger than the
// device's maxStorageBufferRange must be bound through Arena.Bindings instead. An
// empty range has no binding (device.BufferRange reads Size 0 as "the rest of the
// buffer"), so the caller skips empty tensors.
func (r Range) BufferRange() device.BufferRange {
	return device.BufferRange{Buffer: r.buf, Offset: r.off, Size: r.size}
}

func (r Range) String() string { return fmt.Sprintf("block %d %v", r.block, r.Span()) }

// Sub returns the part [off, off+size) of r. Its offset is aligned only if off is;
// transfers accept any offset, bindings need an aligned one.
func (r Range) Sub(off, size int64) (Range, error) {
	if off < 0 || size < 0 || off > r.size || size > r.size-off {
		return Range{}, fmt.Errorf("%w: sub-range [%d, +%d) of %v", ErrInvalid, off, size, r)
	}
	r.off += off
	r.size = size
	return r, nil
}

// Placement is a Plan placed in an arena: each plan block is one allocation, and each
// plan range a Range at its planned offset within it.
type Placement struct {
	a      *Arena
	chunks []Chunk // per plan block; the zero Chunk for a block no range needs
	ranges []Range
}

// Place allocates the blocks of plan p from the arena (best fit among its free
// ranges, or new blocks) so that several executables can share one pool. The plan
// is validated against the arena's limits first.
func (a *Arena) Place(p *Plan) (*Placement, error) { return a.place(p, false) }

// place allocates the plan's blocks, each as a dedicated device block or from the
// heap, and frees what it took if any allocation fails.
func (a *Arena) place(p *Plan, dedicated bool) (*Placement, error) {
	if err := p.Validate(a.lim); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, ErrClosed
	}
	pl := &Placement{a: a}
	for b, size := range p.BlockSizes() {
		c, err := a.allocPlanBlock(size, dedicated)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("arena: placing plan block %d (%d bytes): %w", b, size, err), pl.freeLocked())
		}
		pl.chunks = append(pl.chunks, c)
	}
	for _, r := range p.Ranges {
		pl.ranges = append(pl.ranges, pl.rangeOf(r))
	}
	return pl, nil
}

func (a *Arena) allocPlanBlock(size int64, dedicated bool) (Chunk, error) {
	switch {
	case size == 0:
		return Chunk{}, nil
	case dedicated:
		return a.heap.AllocDedicated(size)
	}
	return a.heap.Alloc(size)
}

// rangeOf is the device range of plan range r.
func (pl *Placement) rangeOf(r PlanRange) Range {
	c := pl.chunks[r.Block]
	if c.Size() == 0 {
		return Range{block: -1} // an empty range in a block no range needs
	}
	return pl.a.rangeOf(c, r.Offset, r.Size)
}

// Range is the device range of the plan's range i.
func (pl *Placement) Range(i int) Range { return pl.ranges[i] }

// Len is the number of ranges.
func (pl *Placement) Len() int { return len(pl.ranges) }

// Free returns the plan's memory to the arena.
func (pl *Placement) Free() error {
	pl.a.mu.Lock()
	defer pl.a.mu.Unlock()
	if pl.a.closed {
		return ErrClosed
	}
	return pl.freeLocked()
}

func (pl *Placement) freeLocked() error {
	var errs []error
	for _, c := range pl.chunks {
		if c.Size() != 0 {
			errs = append(errs, pl.a.heap.Free(c))
		}
	}
	pl.chunks = nil
	return errors.Join(errs...)
}

// PlanRange is the device range of range i of the plan given to NewPlanned; it
// panics on an arena made by New, which has no plan.
func (a *Arena) PlanRange(i int) Range { return a.plan.Range(i) }
