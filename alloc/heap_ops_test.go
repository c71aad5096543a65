package alloc

import (
	"errors"
	"fmt"
)

// heapRun drives a Heap with a stream of operations and checks every result and
// every invariant after each one. The fuzz test and the randomized test share it.
type heapRun struct {
	h     *Heap
	m     *heapModel
	stale []Chunk // copies of freed chunks, freed again to test ErrBadFree
	other Chunk   // a chunk of another heap
}

// fuzzLimits are small so that short inputs reach block growth, the size limit
// and the limits of a block.
var fuzzLimits = Limits{Alignment: 16, MaxBindingRange: 1024, MaxBlockSize: 4096}

// newHeapRun makes the heap from one configuration byte: block size and budget.
func newHeapRun(cfg byte) (*heapRun, error) {
	opts := HeapOptions{BlockSize: []int64{0, 1000, 4096, 256}[cfg&3]}
	if cfg&4 != 0 {
		opts.Limit = 3 * 4096
	}
	h, err := NewHeap(fuzzLimits, opts)
	if err != nil {
		return nil, err
	}
	other, err := NewHeap(fuzzLimits, HeapOptions{})
	if err != nil {
		return nil, err
	}
	oc, err := other.Alloc(16)
	if err != nil {
		return nil, err
	}
	return &heapRun{h: h, m: newHeapModel(), other: oc}, nil
}

// step applies operation op with argument arg, then checks the heap.
func (r *heapRun) step(op byte, arg uint16) error {
	var err error
	switch op % 16 {
	case 0, 1, 2, 3, 4, 5:
		err = r.alloc(int64(arg%5000), false)
	case 6:
		err = r.alloc(int64(arg%5000), true)
	case 7, 8, 9, 10, 11:
		err = r.free(int(arg))
	case 12:
		err = r.badFree(int(arg))
	case 13:
		err = r.trim()
	case 14:
		r.h.ResetPeak()
		r.m.peak = r.m.inUse()
	case 15:
		err = r.freeAll()
	}
	if err != nil {
		return fmt.Errorf("op %d arg %d: %w", op%16, arg, err)
	}
	return checkHeap(r.h, r.m)
}

// alloc checks one allocation: the right error for a bad request, else a chunk
// of the requested size taken from a best-fitting free extent.
func (r *heapRun) alloc(size int64, dedicated bool) error {
	need := AlignUp(size, fuzzLimits.Alignment)
	best := r.h.free.bestFit(need)
	fits := best != nil
	var c Chunk
	var err error
	if dedicated {
		c, err = r.h.AllocDedicated(size)
	} else {
		c, err = r.h.Alloc(size)
	}
	if err != nil {
		return r.allocError(size, need, fits && !dedicated, err)
	}
	if c.Size() != size || c.Reserved() != need {
		return fmt.Errorf("alloc(%d) gave size %d reserved %d", size, c.Size(), c.Reserved())
	}
	if fits && !dedicated && c.n != best {
		return fmt.Errorf("alloc(%d) at block %d offset %d, best fit was %+v", size, c.block, c.off, *best)
	}
	r.m.alloc(c)
	return nil
}

// allocError checks that a failed allocation failed for the right reason.
func (r *heapRun) allocError(size, need int64, fits bool, err error) error {
	lim := r.h.opts.Limit
	switch {
	case size <= 0:
		return expectErr(err, ErrInvalid)
	case size > fuzzLimits.MaxBlockSize:
		return expectErr(err, ErrBlockTooLarge)
	case lim > 0 && !fits && r.h.stats.BytesReserved+need > lim:
		return expectErr(err, ErrOutOfMemory)
	}
	return fmt.Errorf("alloc(%d) failed unexpectedly: %w", size, err)
}

func expectErr(err, want error) error {
	if !errors.Is(err, want) {
		return fmt.Errorf("error %v, want %v", err, want)
	}
	return nil
}

func (r *heapRun) free(i int) error {
	cs := r.m.chunks()
	if len(cs) == 0 {
		return nil
	}
	c := cs[i%len(cs)]
	if err := r.h.Free(c); err != nil {
		return err
	}
	delete(r.m.live, c.id)
	r.stale = append(r.stale, c)
	return nil
}

// badFree frees a stale or foreign chunk; it must fail and change nothing
// (checkHeap verifies the latter).
func (r *heapRun) badFree(i int) error {
	c := r.other
	if len(r.stale) > 0 && i%4 != 0 {
		c = r.stale[i%len(r.stale)]
	}
	return expectErr(r.h.Free(c), ErrBadFree)
}

func (r *heapRun) trim() error {
	var want int64
	for _, blk := range r.h.blocks {
		if blk.whollyFree() {
			want += blk.size
		}
	}
	got, err := r.h.Trim()
	if err != nil || got != want {
		return fmt.Errorf("trim released %d (%v), want %d", got, err, want)
	}
	return nil
}

// freeAll frees every live chunk and checks that each block is one free extent.
func (r *heapRun) freeAll() error {
	for _, c := range r.m.chunks() {
		if err := r.h.Free(c); err != nil {
			return err
		}
		delete(r.m.live, c.id)
		r.stale = append(r.stale, c)
	}
	return checkAllFree(r.h)
}

// runOps interprets data as a configuration byte and then (op, arg, arg) triples,
// and ends by freeing everything.
func runOps(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	r, err := newHeapRun(data[0])
	if err != nil {
		return err
	}
	for ops := data[1:]; len(ops) >= 3; ops = ops[3:] {
		if err := r.step(ops[0], uint16(ops[1])<<8|uint16(ops[2])); err != nil {
			return err
		}
	}
	if err := r.freeAll(); err != nil {
		return err
	}
	return checkHeap(r.h, r.m)
}
