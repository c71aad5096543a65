package vkxla

import (
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// targetFromCaps turns the device's capabilities into the plain facts code
// generation reads, so that codegen never imports device.
func targetFromCaps(c device.Caps) codegen.Target {
	return codegen.Target{
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
}
