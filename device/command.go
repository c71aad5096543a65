package device

/*
#include "vkx.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// BufferRange is one binding of a dispatch, a storage buffer or a uniform texel
// buffer: Size bytes of Buffer from Offset. Size 0 means the rest of the buffer.
type BufferRange struct {
	Buffer *Buffer
	Offset int64
	Size   int64
}

type cbState int

const (
	cbInitial cbState = iota
	cbRecording
	cbExecutable
)

// CommandBuffer records dispatches, barriers, copies, fills and timestamps once, to be
// submitted any number of times (replay). It is created without ONE_TIME_SUBMIT and
// without SIMULTANEOUS_USE: a new submission of a command buffer still in flight first
// waits for the earlier one, and so do Begin, Reset, Close and EnableTimestamps.
//
// Each recording starts with a full compute/transfer memory barrier, so successive
// submissions on the device behave as if executed in order, and ends with a barrier
// that makes device writes visible to the host after the submission completes. Within
// a recording, the caller inserts Barrier between dependent commands.
//
// Recording methods are safe to call from several goroutines but the order of
// commands is then theirs to arrange; a command buffer is normally recorded by one.
type CommandBuffer struct {
	d  *Device
	mu sync.Mutex // guards everything below and the C command buffer

	c          *C.vkx_cmd
	closed     bool
	state      cbState
	uses       []*resource // buffers and kernels the recording refers to
	used       map[*resource]bool
	pending    *Pending
	ran        bool // the recording has been submitted (its queries were reset)
	timestamps int
	ranges     []C.vkx_range // scratch for Dispatch
}

// NewCommandBuffer creates a command buffer with its own command pool, fence and
// descriptor pools.
func (d *Device) NewCommandBuffer() (*CommandBuffer, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	return d.newCommandBuffer()
}

func (d *Device) newCommandBuffer() (*CommandBuffer, error) {
	var c *C.vkx_cmd
	if err := check(C.vkx_cmd_create(d.c, &c)); err != nil {
		return nil, err
	}
	cb := &CommandBuffer{d: d, c: c, used: map[*resource]bool{}}
	d.adopt(cb)
	return cb, nil
}

// with runs f with the device's objects kept alive.
func (cb *CommandBuffer) with(f func() error) error {
	if err := cb.d.enter(); err != nil {
		return err
	}
	defer cb.d.exit()
	return f()
}

// record runs f under the lock if the command buffer is recording.
func (cb *CommandBuffer) record(op string, f func() error) error {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.closed {
		return ErrClosed
	}
	if cb.state != cbRecording {
		return fmt.Errorf("device: CommandBuffer.%s: not recording (call Begin first)", op)
	}
	return f()
}

// openIdleLocked refuses a closed command buffer, else waits like idleLocked.
func (cb *CommandBuffer) openIdleLocked() error {
	if cb.closed {
		return ErrClosed
	}
	return cb.idleLocked()
}

// idleLocked waits for the command buffer's submission in flight, if any.
func (cb *CommandBuffer) idleLocked() error {
	for cb.pending != nil {
		if _, err := cb.pollLocked(^uint64(0)); err != nil {
			return err
		}
	}
	return nil
}

// Begin starts a new recording, discarding the previous one.
func (cb *CommandBuffer) Begin() error { return cb.with(cb.begin) }

func (cb *CommandBuffer) begin() error {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if err := cb.discardLocked(); err != nil {
		return err
	}
	if err := check(C.vkx_cmd_begin(cb.d.c, cb.c)); err != nil {
		return err
	}
	cb.state = cbRecording
	return nil
}

// End finishes the recording; the command buffer can then be submitted.
func (cb *CommandBuffer) End() error { return cb.with(cb.end) }

func (cb *CommandBuffer) end() error {
	return cb.record("End", func() error {
		if err := check(C.vkx_cmd_end(cb.d.c, cb.c)); err != nil {
			cb.state = cbInitial
			return err
		}
		cb.state = cbExecutable
		return nil
	})
}

// Reset discards the recording and frees the descriptor sets it used.
func (cb *CommandBuffer) Reset() error {
	return cb.with(func() error {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if err := cb.discardLocked(); err != nil {
			return err
		}
		return check(C.vkx_cmd_reset(cb.d.c, cb.c))
	})
}

// discardLocked is what Begin and Reset do before their Vulkan call: wait for the
// submission in flight, then drop the recording's references and state.
func (cb *CommandBuffer) discardLocked() error {
	if err := cb.openIdleLocked(); err != nil {
		return err
	}
	// The texel bindings' views go first: they must not outlive their buffers, which
	// forgetting the uses may free.
	C.vkx_cmd_release_views(cb.d.c, cb.c)
	cb.forgetUses()
	cb.state, cb.ran = cbInitial, false
	return nil
}

// forgetUses drops the recording's references: its resources may be freed now.
func (cb *CommandBuffer) forgetUses() {
	releaseAll(cb.uses)
	cb.uses = cb.uses[:0]
	clear(cb.used)
}

// use makes the recording refer to r and keeps r's Vulkan object alive until the
// recording is reset or the command buffer closed: Vulkan invalidates a command
// buffer whose bound objects are destroyed, even while it is still recording. A
// resource closed meanwhile stays unusable — Submit refuses it with ErrClosed.
func (cb *CommandBuffer) use(r *resource) {
	if !cb.used[r] {
		cb.used[r] = true
		cb.uses = append(cb.uses, r)
		r.retain()
	}
}

// Dispatch records a dispatch of k with the given bindings, one per binding of k:
// its storage buffers, then its uniform texel buffers (KernelSpec.Texels), each read
// through a view of the range in the kernel's format, made here and owned by the
// command buffer until the recording is discarded. push is exactly k's
// PushConstantSize bytes.
func (cb *CommandBuffer) Dispatch(k *Kernel, bindings []BufferRange, push []byte, x, y, z uint32) error {
	return cb.with(func() error {
		return cb.record("Dispatch", func() error { return cb.dispatch(k, bindings, push, x, y, z) })
	})
}

func (cb *CommandBuffer) dispatch(k *Kernel, bindings []BufferRange, push []byte, x, y, z uint32) error {
	if err := cb.checkDispatch(k, bindings, push, [3]uint32{x, y, z}); err != nil {
		return err
	}
	testHookDispatchChecked()
	held := []*resource{&k.res}
	for _, r := range bindings {
		held = append(held, &r.Buffer.res)
	}
	return cb.holding(held, func() error {
		// The buffers' C handles are read only once held: a buffer closed by another
		// goroutine is freed (its handle cleared) when its last submission completes.
		cb.ranges = cb.ranges[:0]
		for _, r := range bindings {
			size := r.Size
			if size == 0 {
				size = r.Buffer.size - r.Offset
			}
			cb.ranges = append(cb.ranges, C.vkx_range{
				buf: C.uintptr_t(uintptr(unsafe.Pointer(r.Buffer.c))), offset: C.uint64_t(r.Offset), size: C.uint64_t(size),
			})
		}
		return check(C.vkx_cmd_dispatch(cb.d.c, cb.c, k.c, unsafe.SliceData(cb.ranges), C.uint32_t(len(cb.ranges)),
			unsafe.Pointer(unsafe.SliceData(push)), C.uint32_t(len(push)), C.uint32_t(x), C.uint32_t(y), C.uint32_t(z)))
	})
}

// testHookDispatchChecked runs between a dispatch's checks and its taking hold of the
// resources, where another goroutine may close and free them (a test sets it).
var testHookDispatchChecked = func() {}

// holding keeps rs alive while f records commands that use them (another goroutine
// may be closing one), and on success makes the recording refer to them.
func (cb *CommandBuffer) holding(rs []*resource, f func() error) error {
	refs, err := acquireAll(rs)
	if err != nil {
		return err
	}
	defer releaseAll(refs)
	if err := f(); err != nil {
		return err
	}
	for _, r := range rs {
		cb.use(r)
	}
	return nil
}

func (cb *CommandBuffer) checkDispatch(k *Kernel, bindings []BufferRange, push []byte, groups [3]uint32) error {
	if k == nil || k.res.d != cb.d {
		return errors.New("device: Dispatch: nil kernel or a kernel of another device")
	}
	if k.res.isClosed() {
		return fmt.Errorf("device: Dispatch: kernel %s: %w", k.spec.EntryPoint, ErrClosed)
	}
	if n := k.spec.Bindings + len(k.spec.Texels); len(bindings) != n {
		return fmt.Errorf("device: Dispatch(%s): %d bindings, the kernel has %d (%d storage and %d uniform texel buffers)",
			k.spec.EntryPoint, len(bindings), n, k.spec.Bindings, len(k.spec.Texels))
	}
	if len(push) != k.spec.PushConstantSize {
		return fmt.Errorf("device: Dispatch(%s): %d bytes of push constants, the kernel takes %d",
			k.spec.EntryPoint, len(push), k.spec.PushConstantSize)
	}
	for i, g := range groups {
		if g > cb.d.caps.MaxWorkgroupCount[i] {
			return fmt.Errorf("device: Dispatch(%s): %d workgroups in dimension %d, the device allows %d",
				k.spec.EntryPoint, g, i, cb.d.caps.MaxWorkgroupCount[i])
		}
	}
	for i, r := range bindings[:k.spec.Bindings] {
		if err := cb.checkStorage(r); err != nil {
			return fmt.Errorf("device: Dispatch(%s): binding %d: %w", k.spec.EntryPoint, i, err)
		}
	}
	for i, f := range k.spec.Texels {
		if err := cb.checkTexel(bindings[k.spec.Bindings+i], f); err != nil {
			return fmt.Errorf("device: Dispatch(%s): binding %d (uniform texel buffer, %v): %w", k.spec.EntryPoint, k.spec.Bindings+i, f, err)
		}
	}
	return nil
}

// rangeSize checks that r is a range of an open buffer of this device and returns
// its size.
func (cb *CommandBuffer) rangeSize(r BufferRange) (int64, error) {
	b := r.Buffer
	if b == nil || b.res.d != cb.d {
		return 0, errors.New("nil buffer or a buffer of another device")
	}
	if b.res.isClosed() {
		return 0, ErrClosed
	}
	size := r.Size
	if size == 0 {
		size = b.size - r.Offset
	}
	if r.Offset < 0 || size <= 0 || r.Offset > b.size || size > b.size-r.Offset {
		return 0, fmt.Errorf("range [%d, %d) outside the %d-byte buffer", r.Offset, r.Offset+size, b.size)
	}
	return size, nil
}

func (cb *CommandBuffer) checkStorage(r BufferRange) error {
	size, err := cb.rangeSize(r)
	if err != nil {
		return err
	}
	caps := &cb.d.caps
	switch {
	case r.Offset%caps.MinStorageBufferOffsetAlignment != 0:
		return fmt.Errorf("offset %d is not a multiple of minStorageBufferOffsetAlignment %d", r.Offset, caps.MinStorageBufferOffsetAlignment)
	case size > caps.MaxStorageBufferRange:
		return fmt.Errorf("%d bytes exceed maxStorageBufferRange %d", size, caps.MaxStorageBufferRange)
	}
	return nil
}

// checkTexel checks a uniform texel buffer's range against the limits of a buffer
// view of format f.
func (cb *CommandBuffer) checkTexel(r BufferRange, f TexelFormat) error {
	size, err := cb.rangeSize(r)
	if err != nil {
		return err
	}
	caps := &cb.d.caps
	switch {
	case r.Offset%caps.MinTexelBufferOffsetAlignment != 0:
		return fmt.Errorf("offset %d is not a multiple of minTexelBufferOffsetAlignment %d", r.Offset, caps.MinTexelBufferOffsetAlignment)
	case size%f.Bytes() != 0:
		return fmt.Errorf("size %d is not a multiple of the %d-byte texel", size, f.Bytes())
	case size/f.Bytes() > caps.MaxTexelBufferElements:
		return fmt.Errorf("%d texels exceed maxTexelBufferElements %d", size/f.Bytes(), caps.MaxTexelBufferElements)
	}
	return nil
}

// texelViews counts the buffer views the recording holds (tests).
func (cb *CommandBuffer) texelViews() int {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.closed {
		return 0
	}
	return int(C.vkx_cmd_view_count(cb.c))
}

// descriptorRoom is the room of the command buffer's descriptor pools together, in
// storage buffer and uniform texel buffer descriptors (tests).
func (cb *CommandBuffer) descriptorRoom() (storage, texels int64) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.closed {
		return 0, 0
	}
	var s, t C.uint64_t
	C.vkx_cmd_descriptor_room(cb.c, &s, &t)
	return int64(s), int64(t)
}

// Barrier records a full memory barrier between compute and transfer commands:
// everything recorded before it completes, with its writes visible, before anything
// recorded after it starts.
func (cb *CommandBuffer) Barrier() error {
	return cb.with(func() error {
		return cb.record("Barrier", func() error {
			C.vkx_cmd_barrier(cb.d.c, cb.c)
			return nil
		})
	})
}

// Copy records a copy of size bytes from src at srcOff to dst at dstOff.
func (cb *CommandBuffer) Copy(src *Buffer, srcOff int64, dst *Buffer, dstOff int64, size int64) error {
	return cb.with(func() error { return cb.copy(src, srcOff, dst, dstOff, size) })
}

func (cb *CommandBuffer) copy(src *Buffer, srcOff int64, dst *Buffer, dstOff int64, size int64) error {
	return cb.record("Copy", func() error {
		if err := cb.checkTransfer("Copy", src, srcOff, size); err != nil {
			return err
		}
		if err := cb.checkTransfer("Copy", dst, dstOff, size); err != nil {
			return err
		}
		if src == dst && srcOff < dstOff+size && dstOff < srcOff+size {
			return fmt.Errorf("device: Copy: overlapping ranges in one buffer")
		}
		return cb.holding([]*resource{&src.res, &dst.res}, func() error {
			C.vkx_cmd_copy(cb.d.c, cb.c, src.c, C.uint64_t(srcOff), dst.c, C.uint64_t(dstOff), C.uint64_t(size))
			return nil
		})
	})
}

// Fill records filling size bytes of buf at off with the 32-bit value repeated; off
// and size must be multiples of 4.
func (cb *CommandBuffer) Fill(buf *Buffer, off, size int64, value uint32) error {
	return cb.with(func() error {
		return cb.record("Fill", func() error {
			if err := cb.checkTransfer("Fill", buf, off, size); err != nil {
				return err
			}
			if off%4 != 0 || size%4 != 0 {
				return fmt.Errorf("device: Fill: offset %d and size %d must be multiples of 4", off, size)
			}
			return cb.holding([]*resource{&buf.res}, func() error {
				C.vkx_cmd_fill(cb.d.c, cb.c, buf.c, C.uint64_t(off), C.uint64_t(size), C.uint32_t(value))
				return nil
			})
		})
	})
}

func (cb *CommandBuffer) checkTransfer(op string, b *Buffer, off, size int64) error {
	if b == nil || b.res.d != cb.d {
		return fmt.Errorf("device: %s: nil buffer or a buffer of another device", op)
	}
	if b.res.isClosed() {
		return fmt.Errorf("device: %s: %w", op, ErrClosed)
	}
	if size <= 0 {
		return fmt.Errorf("device: %s: size %d must be positive", op, size)
	}
	return b.checkRange(op, off, size)
}

// EnableTimestamps gives the command buffer n timestamp queries, written by
// Timestamp(i) and read by Timestamps after a submission. Call it before Begin: it
// discards the current recording.
func (cb *CommandBuffer) EnableTimestamps(n int) error {
	if !cb.d.caps.TimestampsSupported && n > 0 {
		return errors.New("device: EnableTimestamps: the queue does not support timestamps")
	}
	if n < 0 {
		return fmt.Errorf("device: EnableTimestamps(%d): negative count", n)
	}
	return cb.with(func() error {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if err := cb.discardLocked(); err != nil {
			return err
		}
		cb.timestamps = 0
		if err := check(C.vkx_cmd_timestamps(cb.d.c, cb.c, C.uint32_t(n))); err != nil {
			return err
		}
		cb.timestamps = n
		return nil
	})
}

// Timestamp records writing timestamp i once all earlier commands have completed.
func (cb *CommandBuffer) Timestamp(i int) error {
	return cb.with(func() error {
		return cb.record("Timestamp", func() error {
			if i < 0 || i >= cb.timestamps {
				return fmt.Errorf("device: Timestamp(%d): EnableTimestamps gave %d queries", i, cb.timestamps)
			}
			C.vkx_cmd_timestamp(cb.d.c, cb.c, C.uint32_t(i))
			return nil
		})
	})
}

// TimestampTicks returns the raw timestamps of the last submission (waiting for it if
// in flight); an index the recording did not write reads as 0. Multiply differences
// by Caps().TimestampPeriod for nanoseconds.
func (cb *CommandBuffer) TimestampTicks() ([]uint64, error) {
	ticks := make([]uint64, 0)
	err := cb.with(func() error {
		cb.mu.Lock()
		defer cb.mu.Unlock()
		if err := cb.openIdleLocked(); err != nil {
			return err
		}
		if !cb.ran {
			return errors.New("device: Timestamps: the recording has not been submitted")
		}
		ticks = make([]uint64, cb.timestamps)
		if len(ticks) == 0 {
			return nil
		}
		return check(C.vkx_cmd_read_timestamps(cb.d.c, cb.c, C.uint32_t(len(ticks)), (*C.uint64_t)(unsafe.SliceData(ticks))))
	})
	if bits := cb.d.caps.TimestampValidBits; bits < 64 {
		for i := range ticks {
			ticks[i] &= 1<<bits - 1
		}
	}
	return ticks, err
}

// Timestamps returns the timestamps of the last submission as device times (from an
// arbitrary origin); subtract two to time the commands between them.
func (cb *CommandBuffer) Timestamps() ([]time.Duration, error) {
	ticks, err := cb.TimestampTicks()
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, len(ticks))
	for i, t := range ticks {
		out[i] = time.Duration(float64(t) * cb.d.caps.TimestampPeriod)
	}
	return out, nil
}

// Close waits for the command buffer's submission in flight, then frees it with its
// pools and fence. A second Close does nothing.
func (cb *CommandBuffer) Close() error {
	if err := cb.d.enter(); err != nil {
		return nil
	}
	defer cb.d.exit()
	return cb.close()
}

func (cb *CommandBuffer) close() error {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.closed {
		return nil
	}
	err := cb.idleLocked()
	if err != nil && !errors.Is(err, ErrDeviceLost) {
		// The fence state is unknown: freeing now could free work in flight. The
		// device's Close frees it after waiting for the whole device.
		return err
	}
	cb.destroyLocked()
	return nil
}

func (cb *CommandBuffer) kill() {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if !cb.closed {
		if cb.pending != nil {
			cb.pending.finish(nil) // the device is idle
		}
		cb.destroyLocked()
	}
}

func (cb *CommandBuffer) destroyLocked() {
	cb.closed = true
	C.vkx_cmd_destroy(cb.d.c, cb.c)
	cb.c = nil
	cb.forgetUses()
	cb.d.forget(cb)
}
