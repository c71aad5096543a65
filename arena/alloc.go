package arena

import (
	"fmt"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/device"
)

// The pure allocation logic lives in package alloc (no device, no cgo), so that the
// planner can use it without Vulkan; these names keep arena's callers unchanged.
type (
	Limits      = alloc.Limits
	Span        = alloc.Span
	Plan        = alloc.Plan
	PlanRange   = alloc.PlanRange
	PlanError   = alloc.PlanError
	Heap        = alloc.Heap
	HeapOptions = alloc.HeapOptions
	Chunk       = alloc.Chunk
	Stats       = alloc.Stats
)

// The sentinel errors (the same values as alloc's, so errors.Is matches either).
var (
	ErrMisaligned      = alloc.ErrMisaligned
	ErrInvalid         = alloc.ErrInvalid
	ErrBlockTooLarge   = alloc.ErrBlockTooLarge
	ErrBindingTooLarge = alloc.ErrBindingTooLarge
	ErrOutOfMemory     = alloc.ErrOutOfMemory
	ErrBadFree         = alloc.ErrBadFree
	// ErrClosed: the arena was closed. It wraps device.ErrClosed, so that one test
	// (errors.Is(err, device.ErrClosed)) catches a closed arena and a closed device.
	ErrClosed = fmt.Errorf("arena: closed (%w)", device.ErrClosed)
)

// MinAlignment and DefaultBlockSize are alloc's.
const (
	MinAlignment     = alloc.MinAlignment
	DefaultBlockSize = alloc.DefaultBlockSize
)

// NewHeap is alloc.NewHeap.
func NewHeap(l Limits, o HeapOptions) (*Heap, error) { return alloc.NewHeap(l, o) }

func alignUp(n, a int64) int64 { return alloc.AlignUp(n, a) }
