package gomlx

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla"
)

// Buffer is a GoMLX buffer: a vkxla DeviceTensor in the runtime's tensor pool,
// resident on the device from one execution to the next.
type Buffer struct {
	tensor *vkxla.DeviceTensor
	shape  shapes.Shape
	mu     sync.Mutex
	done   bool // finalized, or donated to an execution
}

// Tensor is the buffer's device tensor (nil once finalized or donated).
func (b *Buffer) Tensor() *vkxla.DeviceTensor {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	return b.tensor
}

func (be *Backend) buffer(buf backends.Buffer) (*Buffer, error) {
	b, ok := buf.(*Buffer)
	if !ok || b == nil {
		return nil, fmt.Errorf("vkxla backend: a buffer of type %T is not a vkxla buffer", buf)
	}
	return b, nil
}

// live returns b's tensor, or an error naming what happened to it.
func (b *Buffer) live() (*vkxla.DeviceTensor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil, fmt.Errorf("vkxla backend: buffer %s was finalized or donated: %w", b.shape, vkxla.ErrClosed)
	}
	return b.tensor, nil
}

// kill marks the buffer donated: its tensor now belongs to the execution.
func (b *Buffer) kill() {
	b.mu.Lock()
	b.done = true
	b.mu.Unlock()
}

// BufferFinalize frees the buffer's device memory now.
func (be *Backend) BufferFinalize(buf backends.Buffer) error {
	b, err := be.buffer(buf)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	// The runtime may be shared with other backends and still open; when it is
	// closed, its Close freed the pool already.
	if err := b.tensor.Close(); err != nil && !errors.Is(err, vkxla.ErrClosed) {
		return fmt.Errorf("vkxla backend: BufferFinalize: %w", err)
	}
	return nil
}

// BufferShape returns the buffer's shape.
func (be *Backend) BufferShape(buf backends.Buffer) (shapes.Shape, error) {
	b, err := be.buffer(buf)
	if err != nil {
		return shapes.Invalid(), err
	}
	return b.shape, nil
}

// BufferDeviceNum is 0: the backend has one device.
func (be *Backend) BufferDeviceNum(buf backends.Buffer) (backends.DeviceNum, error) {
	_, err := be.buffer(buf)
	return 0, err
}

// BufferToFlatData downloads the buffer into flat, which must have the buffer's
// element type and size.
func (be *Backend) BufferToFlatData(buf backends.Buffer, flat any) error {
	b, err := be.buffer(buf)
	if err != nil {
		return err
	}
	dst, dt, err := flatBytes(flat)
	if err != nil {
		return err
	}
	if dt != b.shape.DType || len(dst) != int(b.shape.Memory()) {
		return fmt.Errorf("vkxla backend: BufferToFlatData: flat %T of %d bytes for a buffer %s", flat, len(dst), b.shape)
	}
	t, err := b.live()
	if err != nil {
		return err
	}
	lit, err := t.ToHost(context.Background())
	if err != nil {
		return fmt.Errorf("vkxla backend: BufferToFlatData: %w", err)
	}
	copy(dst, lit.Bytes())
	return nil
}

// BufferFromFlatData uploads flat into a new device buffer of shape.
func (be *Backend) BufferFromFlatData(dev backends.DeviceNum, flat any, shape shapes.Shape) (backends.Buffer, error) {
	if err := be.checkDevice(dev); err != nil {
		return nil, err
	}
	lit, err := literalOf(flat, shape)
	if err != nil {
		return nil, err
	}
	t, err := be.rt.Upload(context.Background(), lit)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: BufferFromFlatData: %w", err)
	}
	return &Buffer{tensor: t, shape: shape.Clone()}, nil
}

func (be *Backend) checkDevice(dev backends.DeviceNum) error {
	if err := be.checkOpen(); err != nil {
		return err
	}
	if dev != 0 {
		return fmt.Errorf("vkxla backend: device %d: the backend has one device (0)", dev)
	}
	return nil
}

// HasSharedBuffers is false: buffers are in device memory.
func (be *Backend) HasSharedBuffers() bool { return false }

// NewSharedBuffer is not supported (HasSharedBuffers is false).
func (be *Backend) NewSharedBuffer(backends.DeviceNum, shapes.Shape) (backends.Buffer, any, error) {
	return nil, nil, fmt.Errorf("vkxla backend: NewSharedBuffer: %w: buffers live in device memory (HasSharedBuffers is false)", vkxla.ErrUnsupported)
}

// BufferData is not supported (HasSharedBuffers is false).
func (be *Backend) BufferData(backends.Buffer) (any, error) {
	return nil, fmt.Errorf("vkxla backend: BufferData: %w: buffers live in device memory (HasSharedBuffers is false)", vkxla.ErrUnsupported)
}

// BufferCopyToDevice is an error: the backend has one device.
func (be *Backend) BufferCopyToDevice(_ backends.Buffer, dev backends.DeviceNum) (backends.Buffer, error) {
	return nil, fmt.Errorf("vkxla backend: BufferCopyToDevice to device %d: the backend has one device", dev)
}
