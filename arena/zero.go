package arena

import (
	"context"
	"fmt"

	"github.com/vkxla/vkxla/device"
)

// Zero sets every byte of r to 0. New device memory is not zeroed — lavapipe returns
// whatever the host allocator gives, and other drivers make no promise either — so a
// buffer read before it is written (an accumulator, padding) needs this first.
//
// The 4-byte-aligned interior is cleared by a fill command on the device; the at most
// three bytes at either unaligned edge (possible only in a Sub range) are written
// from the host.
func (a *Arena) Zero(ctx context.Context, r Range) error {
	if r.size == 0 {
		return ctx.Err()
	}
	if err := a.checkTransfer(ctx, r, int(r.size), "zero"); err != nil {
		return err
	}
	lo, hi := alignUp(r.off, 4), r.End()&^3
	if lo >= hi {
		return a.zeroEdge(ctx, r, r.off, r.End())
	}
	if err := a.zeroEdge(ctx, r, r.off, lo); err != nil {
		return err
	}
	if err := a.zeroEdge(ctx, r, hi, r.End()); err != nil {
		return err
	}
	a.xfer.mu.Lock()
	defer a.xfer.mu.Unlock()
	if a.xfer.closed {
		return ErrClosed
	}
	if err := a.xfer.ensureCB(a.dev); err != nil {
		return err
	}
	err := a.xfer.run(ctx, a.dev, func(cb *device.CommandBuffer) error { return cb.Fill(r.buf, lo, hi-lo, 0) })
	return wrapTransfer("zeroing", r, err)
}

// zeroEdge writes zeros to the bytes [from, to) of r's buffer from the host.
func (a *Arena) zeroEdge(ctx context.Context, r Range, from, to int64) error {
	if from == to {
		return nil
	}
	edge := Range{buf: r.buf, block: r.block, off: from, size: to - from}
	return a.Upload(ctx, edge, make([]byte, to-from))
}

// RecordZero records clearing r into cb, for a command buffer that an executable
// records once and replays: a fill of r rounded out to whole 4-byte words. r must
// start at a multiple of 4, as every range of an Alloc or a Plan does; the up to
// three bytes after an unaligned end are cleared too, and in a range of the arena
// they belong to no other live buffer (every buffer starts at an aligned offset).
// The caller puts a Barrier between it and the commands that use r.
func (a *Arena) RecordZero(cb *device.CommandBuffer, r Range) error {
	if r.size == 0 {
		return nil
	}
	if err := a.owns(r); err != nil {
		return err
	}
	if r.off%4 != 0 {
		return fmt.Errorf("%w: RecordZero of %v: a fill command needs an offset that is a multiple of 4", ErrMisaligned, r)
	}
	size := min(alignUp(r.size, 4), r.buf.Size()-r.off)
	return cb.Fill(r.buf, r.off, size, 0)
}

// End is the first byte after the range in its buffer.
func (r Range) End() int64 { return r.off + r.size }
