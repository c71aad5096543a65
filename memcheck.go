package vkxla

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
)

// deviceMemory is what a device offers a new executable's plan.
type deviceMemory struct {
	// heapBytes is the device's memory heaps together: buffers take device-local
	// memory first and any other type after it, so every heap can hold a plan.
	heapBytes int64
	// maxAllocation is maxMemoryAllocationSize: the largest block, so the largest
	// buffer (a buffer lives in one block); 0 when the device does not say.
	maxAllocation int64
	// heldBytes is held by the runtime already: its other executables (cached ones
	// included) and its tensor pool.
	heldBytes int64
}

// checkPlanFits checks a plan against the device before anything is allocated:
// every buffer and every block (one device allocation each; aligned sizes) within
// the largest allocation, and all blocks together within what the runtime has not
// taken of the heaps. Drivers that allocate lazily (lavapipe) would otherwise
// accept any plan and fail, or exhaust the host, at the first Run. Every problem
// found is reported, each wrapping device.ErrOutOfDeviceMemory and naming sizes.
func checkPlanFits(blocks []int64, ranges []arena.PlanRange, mem deviceMemory) error {
	var errs []error
	for i, r := range ranges {
		if mem.maxAllocation > 0 && r.Size > mem.maxAllocation {
			errs = append(errs, fmt.Errorf("%w: buffer %d %q of %d bytes is larger than the device's largest allocation (maxMemoryAllocationSize %d bytes)",
				device.ErrOutOfDeviceMemory, i, r.Name, r.Size, mem.maxAllocation))
		}
	}
	var total int64
	for b, size := range blocks {
		total += size
		if mem.maxAllocation > 0 && size > mem.maxAllocation {
			errs = append(errs, fmt.Errorf("%w: plan block %d of %d bytes is larger than the device's largest allocation (maxMemoryAllocationSize %d bytes)",
				device.ErrOutOfDeviceMemory, b, size, mem.maxAllocation))
		}
	}
	if left := mem.heapBytes - mem.heldBytes; total > left {
		errs = append(errs, fmt.Errorf("%w: the plan needs %d bytes of device memory in %d blocks; the device's heaps hold %d bytes, %d of them held by the runtime (executables and tensors), leaving %d",
			device.ErrOutOfDeviceMemory, total, len(blocks), mem.heapBytes, mem.heldBytes, max(left, 0)))
	}
	return errors.Join(errs...)
}

// checkPlanFits checks l's plan against the runtime's device and what the runtime
// holds now, first dropping cached executables no caller holds (least recently used
// first) when the plan would not fit beside them. Compiles running at the same time
// do not see each other's plans: the check catches plans that cannot fit, not every
// race for the last bytes.
func (rt *Runtime) checkPlanFits(l *lowering) error {
	blocks := alignedBlocks(l.plan, l.limits)
	mem := rt.deviceMemory()
	var total int64
	for _, size := range blocks {
		total += size
	}
	if need := total - (mem.heapBytes - mem.heldBytes); need > 0 {
		if err := rt.cache.dropUnheld(need); err != nil {
			return err
		}
		mem = rt.deviceMemory()
	}
	return checkPlanFits(blocks, l.plan.Ranges, mem)
}

// deviceMemory is the runtime's device's limits and what the runtime holds now.
func (rt *Runtime) deviceMemory() deviceMemory {
	caps := rt.dev.Caps()
	mem := deviceMemory{maxAllocation: caps.MaxMemoryAllocationSize, heldBytes: rt.MemoryStats().TotalBytes()}
	for _, h := range caps.MemoryHeaps {
		mem.heapBytes += h.Size
	}
	return mem
}
