package arena

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/vkxla/vkxla/device"
)

// Errors that callers can test with errors.Is. Every error the package returns
// wraps one of these and says which range, request or allocation it is about.
var (
	// ErrMisaligned: an offset is not a multiple of Limits.Alignment.
	ErrMisaligned = errors.New("arena: misaligned offset")
	// ErrInvalid: a negative offset or size, a zero-size request, bad limits.
	ErrInvalid = errors.New("arena: invalid argument")
	// ErrBlockTooLarge: a range or request does not fit in one memory block
	// (Limits.MaxBlockSize, the device's maxMemoryAllocationSize).
	ErrBlockTooLarge = errors.New("arena: larger than the maximum block size")
	// ErrBindingTooLarge: a range cannot be bound as one storage-buffer binding
	// (Limits.MaxBindingRange, the device's maxStorageBufferRange) and was not
	// marked as split across bindings.
	ErrBindingTooLarge = errors.New("arena: larger than the maximum binding range")
	// ErrOutOfMemory: growing the arena would exceed Options.Limit.
	ErrOutOfMemory = errors.New("arena: memory limit reached")
	// ErrBadFree: a double free, a stale or foreign allocation.
	ErrBadFree = errors.New("arena: free of an allocation that is not live here")
	// ErrClosed: the arena was closed. It wraps device.ErrClosed, so that one test
	// (errors.Is(err, device.ErrClosed)) catches a closed arena and a closed device.
	ErrClosed = fmt.Errorf("arena: closed (%w)", device.ErrClosed)
)

// Limits are the device facts that allocation and binding obey. They are a plain
// struct so that the pure allocation logic (plans, Heap, Bindings) needs no device.
type Limits struct {
	// Alignment of every offset the arena hands out or accepts; a power of two,
	// at least the device's minStorageBufferOffsetAlignment.
	Alignment int64
	// MaxBindingRange is the most bytes one storage-buffer binding may cover
	// (maxStorageBufferRange: 128 MiB on lavapipe).
	MaxBindingRange int64
	// MaxBlockSize is the largest single device memory allocation
	// (maxMemoryAllocationSize: 2 GiB on lavapipe).
	MaxBlockSize int64
}

// MinAlignment is the floor LimitsFromDevice puts under the device's
// minStorageBufferOffsetAlignment: vkCmdFillBuffer needs 4-byte offsets and vec4
// kernels want 16-byte ones, and 16 bytes per tensor is a negligible cost.
const MinAlignment = 16

// Validate reports limits that the allocator cannot work with.
func (l Limits) Validate() error {
	switch {
	case l.Alignment <= 0 || bits.OnesCount64(uint64(l.Alignment)) != 1:
		return fmt.Errorf("%w: alignment %d is not a positive power of two", ErrInvalid, l.Alignment)
	case l.MaxBindingRange < l.Alignment:
		return fmt.Errorf("%w: max binding range %d is below the alignment %d", ErrInvalid, l.MaxBindingRange, l.Alignment)
	case l.MaxBlockSize < l.Alignment:
		return fmt.Errorf("%w: max block size %d is below the alignment %d", ErrInvalid, l.MaxBlockSize, l.Alignment)
	}
	return nil
}

// alignUp rounds n up to a multiple of the power of two a.
func alignUp(n, a int64) int64 { return (n + a - 1) &^ (a - 1) }

// Span is a byte range [Offset, Offset+Size) inside one memory block.
type Span struct {
	Offset int64
	Size   int64
}

// End is the first byte after the span.
func (s Span) End() int64 { return s.Offset + s.Size }

func (s Span) String() string { return fmt.Sprintf("[%d, +%d)", s.Offset, s.Size) }
