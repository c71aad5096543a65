package vkxla

import (
	"strings"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// lavapipeLoopLimit is how many loop iterations lavapipe's loop limiter lets one
// invocation run, all loops together, before it silently ends them (measured:
// device's TestLavapipeLoopLimit). No query reports it, so it is keyed on the driver.
const lavapipeLoopLimit = 65535

// TargetFromCaps turns a device's capabilities into the plain facts code generation
// reads, so that codegen never imports device. Facts no Vulkan query reports (the
// lavapipe loop limit) are keyed on the driver.
func TargetFromCaps(c device.Caps) codegen.Target {
	t := codegen.Target{
		SubgroupSize:            c.SubgroupSize,
		SubgroupArithmetic:      c.SubgroupInCompute && c.SubgroupOps.Has(device.SubgroupArithmetic),
		MaxSharedMemory:         uint32(c.MaxSharedMemory),
		MaxWorkgroupInvocations: c.MaxWorkgroupInvocations,
		MaxWorkgroupSize:        c.MaxWorkgroupSize,
		MaxWorkgroupCount:       c.MaxWorkgroupCount,
		MaxStorageBufferRange:   c.MaxStorageBufferRange,
		Float16:                 c.Float16,
		Float64:                 c.Float64,
		Int8:                    c.Int8,
		Int16:                   c.Int16,
		Int64:                   c.Int64,
		StorageBuffer8Bit:       c.StorageBuffer8Bit,
		StorageBuffer16Bit:      c.StorageBuffer16Bit,
	}
	if isLavapipe(c) {
		t.MaxLoopIterations = lavapipeLoopLimit
	}
	return t
}

func isLavapipe(c device.Caps) bool {
	return strings.Contains(c.Driver.Name, "llvmpipe") || strings.HasPrefix(c.Name, "llvmpipe")
}
