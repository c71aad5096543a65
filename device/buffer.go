package device

/*
#include "vkx.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Buffer is one VkBuffer bound to its own VkDeviceMemory, usable as a storage buffer,
// as a uniform texel buffer and as a transfer source and destination.
type Buffer struct {
	res    resource
	c      *C.vkx_buffer
	size   int64
	mapped unsafe.Pointer // C memory; nil unless host-visible; cleared when freed
	// hostVisible is fixed at creation: HostVisible may be called while another
	// goroutine closes the buffer.
	hostVisible bool
}

// NewBuffer allocates a device buffer, preferring device-local memory. When that
// memory is also host-visible and coherent the buffer stays mapped, and Read and Write
// copy directly; otherwise they go through a staging buffer. Its contents start
// undefined (drivers, lavapipe among them, do not zero new memory).
func (d *Device) NewBuffer(size int64) (*Buffer, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	if d.forceStaging {
		return d.newBuffer(size, d.bufferTypes, 0)
	}
	return d.newBuffer(size, d.bufferTypes, d.mappable)
}

// NewHostBuffer allocates a host-visible, coherent buffer (a staging buffer for
// uploads and downloads on devices whose memory the host cannot map).
func (d *Device) NewHostBuffer(size int64) (*Buffer, error) {
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.exit()
	return d.newBuffer(size, d.stagingTypes, d.mappable)
}

func (d *Device) newBuffer(size int64, types []uint32, mappable uint32) (*Buffer, error) {
	if err := d.checkAllocation(size, types); err != nil {
		return nil, err
	}
	var c *C.vkx_buffer
	var mapped unsafe.Pointer
	var typ C.uint32_t
	err := check(C.vkx_buffer_create(d.c, C.uint64_t(size), (*C.uint32_t)(unsafe.SliceData(types)),
		C.uint32_t(len(types)), C.uint32_t(mappable), &c, &mapped, &typ))
	if err != nil {
		return nil, fmt.Errorf("NewBuffer(%d bytes): %w", size, err)
	}
	b := &Buffer{c: c, size: size, mapped: mapped, hostVisible: mapped != nil}
	b.res.init(d, "buffer", func() {
		C.vkx_buffer_destroy(d.c, b.c)
		b.c, b.mapped = nil, nil
		d.forget(b)
	})
	d.adopt(b)
	return b, nil
}

// checkAllocation rejects sizes the device cannot allocate before asking Vulkan: the
// validation layer treats an allocation larger than its heap as an error of the
// caller, not as out-of-memory.
func (d *Device) checkAllocation(size int64, types []uint32) error {
	if size <= 0 {
		return fmt.Errorf("device: NewBuffer(%d bytes): size must be positive", size)
	}
	if len(types) == 0 {
		return fmt.Errorf("device: NewBuffer: the device has no suitable memory type")
	}
	limit := d.caps.MemoryHeaps[d.caps.MemoryTypes[types[0]].Heap].Size
	if m := d.caps.MaxMemoryAllocationSize; m > 0 && m < limit {
		limit = m
	}
	if size > limit {
		return fmt.Errorf("device: NewBuffer(%d bytes): larger than the device's %d-byte allocation limit: %w",
			size, limit, ErrOutOfDeviceMemory)
	}
	return nil
}

// ErrNoDeviceAddress: the device was opened without bufferDeviceAddress
// (Caps.BufferDeviceAddress false), so buffers have no device address.
var ErrNoDeviceAddress = errors.New("device: buffer device addresses are not enabled on this device")

// Address returns the buffer's device address (vkGetBufferDeviceAddress): the value
// a kernel turns into a PhysicalStorageBuffer64 pointer to the buffer's first byte.
// It stays valid until the buffer is closed. Every buffer of a device opened with
// bufferDeviceAddress has one.
func (b *Buffer) Address() (uint64, error) {
	d := b.res.d
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.exit()
	if err := b.res.acquire(); err != nil {
		return 0, err
	}
	defer b.res.release()
	if C.vkx_device_addresses(d.c) == 0 {
		return 0, ErrNoDeviceAddress
	}
	return uint64(C.vkx_buffer_address(d.c, b.c)), nil
}

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int64 { return b.size }

// HostVisible reports whether the buffer is mapped, so Read and Write copy directly.
func (b *Buffer) HostVisible() bool { return b.hostVisible }

// Device returns the device the buffer belongs to.
func (b *Buffer) Device() *Device { return b.res.d }

func (b *Buffer) checkRange(op string, off, n int64) error {
	if off < 0 || n < 0 || off > b.size || n > b.size-off {
		return fmt.Errorf("device: Buffer.%s: range [%d, %d) outside the %d-byte buffer", op, off, off+n, b.size)
	}
	return nil
}

// Write copies data into the buffer at offset. It does not synchronise with work
// in flight on the device: the caller orders it after the submissions that use the
// range (Submit's completion does that).
func (b *Buffer) Write(offset int64, data []byte) error {
	return b.hostCopy("Write", offset, data, true)
}

// Read copies the buffer's bytes at offset into dst. Like Write, it assumes the
// submissions that wrote the range have completed.
func (b *Buffer) Read(offset int64, dst []byte) error {
	return b.hostCopy("Read", offset, dst, false)
}

func (b *Buffer) hostCopy(op string, off int64, p []byte, write bool) error {
	d := b.res.d
	if err := d.enter(); err != nil {
		return err
	}
	defer d.exit()
	if err := b.res.acquire(); err != nil {
		return err
	}
	defer b.res.release()
	if err := b.checkRange(op, off, int64(len(p))); err != nil || len(p) == 0 {
		return err
	}
	if b.mapped == nil {
		return d.staged(b, off, p, write)
	}
	mem := unsafe.Slice((*byte)(unsafe.Add(b.mapped, off)), len(p))
	if write {
		copy(mem, p)
	} else {
		copy(p, mem)
	}
	return nil
}

// staged moves p through a temporary host buffer and a copy command.
func (d *Device) staged(b *Buffer, off int64, p []byte, write bool) error {
	s, err := d.newBuffer(int64(len(p)), d.stagingTypes, d.mappable)
	if err != nil {
		return err
	}
	defer s.res.close()
	if s.mapped == nil {
		return fmt.Errorf("device: no host-visible coherent memory type for staging")
	}
	host := unsafe.Slice((*byte)(s.mapped), len(p))
	src, srcOff, dst, dstOff := s, int64(0), b, off
	if write {
		copy(host, p)
	} else {
		src, srcOff, dst, dstOff = b, off, s, 0
	}
	if err := d.runCopy(src, srcOff, dst, dstOff, int64(len(p))); err != nil {
		return err
	}
	if !write {
		copy(p, host)
	}
	return nil
}

// runCopy records, submits and waits for one copy (d.life held).
func (d *Device) runCopy(src *Buffer, srcOff int64, dst *Buffer, dstOff, size int64) error {
	cb, err := d.newCommandBuffer()
	if err != nil {
		return err
	}
	defer cb.close()
	if err := cb.begin(); err != nil {
		return err
	}
	if err := cb.copy(src, srcOff, dst, dstOff, size); err != nil {
		return err
	}
	if err := cb.end(); err != nil {
		return err
	}
	p, err := d.submit(cb)
	if err != nil {
		return err
	}
	return p.waitForever()
}

// Close frees the buffer once no submission in flight uses it. Later use returns
// ErrClosed; a second Close does nothing.
func (b *Buffer) Close() error {
	d := b.res.d
	if err := d.enter(); err != nil {
		return nil // the device's Close freed the buffer
	}
	defer d.exit()
	b.res.close()
	return nil
}

func (b *Buffer) kill() { b.res.kill() }
