package arena

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/vkxla/vkxla/device"
)

// DefaultStagingSize bounds the host-visible staging buffer of an arena whose memory
// the host cannot map: transfers larger than this go through it in pieces, so a
// 4 GiB upload does not need 4 GiB of extra host memory.
const DefaultStagingSize = 16 << 20

// transfer is an arena's machinery for moving bytes on the device: one command
// buffer (reused: creating one costs pools and a fence) and, made on first need,
// a staging buffer. Its mutex serialises the transfers that use them.
type transfer struct {
	mu      sync.Mutex
	cb      *device.CommandBuffer
	staging *device.Buffer
	max     int64 // the staging buffer never grows past this
	force   bool  // tests: stage even when the memory is mapped
	closed  bool
}

// Upload copies data into the start of r. Where the device memory is host-visible
// (lavapipe, integrated GPUs, resizable BAR) it is a copy into the mapping; else the
// bytes go through the arena's staging buffer and a copy command, in pieces of at
// most Options.StagingSize. The caller orders it after the submissions that use r
// (a completed Submit does that); the copy commands carry the device's full
// barriers, so dispatches submitted afterwards see the data.
func (a *Arena) Upload(ctx context.Context, r Range, data []byte) error {
	if err := a.checkTransfer(ctx, r, len(data), "upload"); err != nil || len(data) == 0 {
		return err
	}
	if r.buf.HostVisible() && !a.xfer.force {
		return wrapTransfer("upload to", r, mappedCopy(r.buf, r.off, data, true))
	}
	return wrapTransfer("upload to", r, a.xfer.staged(ctx, a.dev, r, data, true))
}

// Download copies the start of r into dst, through the mapping or the staging
// buffer like Upload.
func (a *Arena) Download(ctx context.Context, r Range, dst []byte) error {
	if err := a.checkTransfer(ctx, r, len(dst), "download"); err != nil || len(dst) == 0 {
		return err
	}
	if r.buf.HostVisible() && !a.xfer.force {
		return wrapTransfer("download from", r, mappedCopy(r.buf, r.off, dst, false))
	}
	return wrapTransfer("download from", r, a.xfer.staged(ctx, a.dev, r, dst, false))
}

// parallelPiece is the least a goroutine of a mapped copy moves: one core's copy
// into mapped memory stops well short of the memory bandwidth (19 GB/s for one
// goroutine, 35 for two on the lavapipe machine), and below a few MiB starting
// goroutines costs more than it gains.
const parallelPiece = 4 << 20

// mappedCopy copies between p and the mapped buffer at off, in parallel pieces
// when p is large.
func mappedCopy(buf *device.Buffer, off int64, p []byte, up bool) error {
	n := min(runtime.GOMAXPROCS(0), len(p)/parallelPiece)
	if n <= 1 {
		return hostCopy(buf, off, p, up)
	}
	piece := alignUp(int64(len(p)+n-1)/int64(n), 64)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		lo := min(int64(i)*piece, int64(len(p)))
		hi := min(lo+piece, int64(len(p)))
		wg.Go(func() { errs[i] = hostCopy(buf, off+lo, p[lo:hi], up) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func hostCopy(buf *device.Buffer, off int64, p []byte, up bool) error {
	if up {
		return buf.Write(off, p)
	}
	return buf.Read(off, p)
}

func wrapTransfer(op string, r Range, err error) error {
	if err != nil {
		return fmt.Errorf("arena: %s %v: %w", op, r, err)
	}
	return nil
}

// checkTransfer rejects a cancelled context, a range that is not this arena's
// live memory, and more bytes than the range holds.
func (a *Arena) checkTransfer(ctx context.Context, r Range, n int, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	if err := a.owns(r); err != nil {
		return err
	}
	if int64(n) > r.size {
		return fmt.Errorf("%w: %s of %d bytes with the %d-byte range %v", ErrInvalid, op, n, r.size, r)
	}
	return nil
}

// owns checks that r lies in a block the arena still holds.
func (a *Arena) owns(r Range) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return ErrClosed
	case r.buf == nil || r.block < 0 || r.block >= len(a.bufs) || a.bufs[r.block] != r.buf:
		return fmt.Errorf("%w: range %v is not memory of this arena", ErrInvalid, r)
	}
	return nil
}

// staged moves p between the host and r through the staging buffer, one piece per
// submission: write the piece into the mapped staging buffer, copy it on the device
// (or the reverse for a download).
func (x *transfer) staged(ctx context.Context, d *device.Device, r Range, p []byte, up bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.ready(d, int64(len(p))); err != nil {
		return err
	}
	for done := int64(0); done < int64(len(p)); {
		n := min(int64(len(p))-done, x.staging.Size())
		piece := p[done : done+n]
		if err := x.stagePiece(ctx, d, r.buf, r.off+done, piece, up); err != nil {
			return err
		}
		done += n
	}
	return nil
}

func (x *transfer) stagePiece(ctx context.Context, d *device.Device, buf *device.Buffer, off int64, piece []byte, up bool) error {
	n := int64(len(piece))
	if up {
		if err := x.staging.Write(0, piece); err != nil {
			return err
		}
		return x.run(ctx, d, func(cb *device.CommandBuffer) error { return cb.Copy(x.staging, 0, buf, off, n) })
	}
	if err := x.run(ctx, d, func(cb *device.CommandBuffer) error { return cb.Copy(buf, off, x.staging, 0, n) }); err != nil {
		return err
	}
	return x.staging.Read(0, piece)
}

// ready makes the command buffer, and a staging buffer big enough for n bytes or
// for its maximum, whichever is smaller.
func (x *transfer) ready(d *device.Device, n int64) error {
	if x.closed {
		return ErrClosed
	}
	if err := x.ensureCB(d); err != nil {
		return err
	}
	want := min(alignUp(n, MinAlignment), x.max)
	if x.staging != nil && x.staging.Size() >= want {
		return nil
	}
	if x.staging != nil {
		if err := x.staging.Close(); err != nil {
			return err
		}
		x.staging = nil
	}
	s, err := d.NewHostBuffer(want)
	if err != nil {
		return fmt.Errorf("staging buffer: %w", err)
	}
	x.staging = s
	return nil
}

func (x *transfer) ensureCB(d *device.Device) error {
	if x.cb != nil {
		return nil
	}
	cb, err := d.NewCommandBuffer()
	if err != nil {
		return err
	}
	x.cb = cb
	return nil
}

// run records the commands of rec into the transfer command buffer, submits it and
// waits. The device brackets every recording with full barriers, which orders it
// after earlier submissions and makes its writes visible to the host.
func (x *transfer) run(ctx context.Context, d *device.Device, rec func(*device.CommandBuffer) error) error {
	if err := x.cb.Begin(); err != nil {
		return err
	}
	if err := rec(x.cb); err != nil {
		return errors.Join(err, x.cb.End())
	}
	if err := x.cb.End(); err != nil {
		return err
	}
	return d.Submit(ctx, x.cb)
}

// close frees the command buffer and the staging buffer.
func (x *transfer) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	var errs []error
	if x.cb != nil {
		errs = append(errs, x.cb.Close())
	}
	if x.staging != nil {
		errs = append(errs, x.staging.Close())
	}
	x.cb, x.staging = nil, nil
	return errors.Join(errs...)
}
