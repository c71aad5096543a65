package vkxla

import (
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// TargetFromCaps turns a device's capabilities into the plain facts code generation
// reads, so that codegen never imports device. Facts no Vulkan query reports (the
// lavapipe loop limit) come from the device's family (package targets).
func TargetFromCaps(c device.Caps) codegen.Target { return deviceTarget(c).Codegen() }

// deviceTarget is a running device as package targets describes devices: the one
// description the planner reads, whether the device is here or not.
func deviceTarget(c device.Caps) targets.Device {
	return targets.Device{
		Name: c.Name, Driver: c.Driver.Name,
		SubgroupSize: c.SubgroupSize, MinSubgroupSize: c.MinSubgroupSize, MaxSubgroupSize: c.MaxSubgroupSize,
		SubgroupArithmetic:              c.SubgroupInCompute && c.SubgroupOps.Has(device.SubgroupArithmetic),
		MaxSharedMemory:                 uint32(c.MaxSharedMemory),
		MaxWorkgroupInvocations:         c.MaxWorkgroupInvocations,
		MaxWorkgroupSize:                c.MaxWorkgroupSize,
		MaxWorkgroupCount:               c.MaxWorkgroupCount,
		MaxStorageBufferRange:           c.MaxStorageBufferRange,
		MaxMemoryAllocationSize:         c.MaxMemoryAllocationSize,
		MinStorageBufferOffsetAlignment: c.MinStorageBufferOffsetAlignment,
		MaxStorageBuffersPerStage:       c.MaxStorageBuffersPerStage,
		MaxTexelBufferElements:          c.MaxTexelBufferElements,
		MinTexelBufferOffsetAlignment:   c.MinTexelBufferOffsetAlignment,
		MaxSampledImagesPerStage:        c.MaxSampledImagesPerStage,
		Float16:                         c.Float16,
		Float64:                         c.Float64,
		Int8:                            c.Int8,
		Int16:                           c.Int16,
		Int64:                           c.Int64,
		StorageBuffer8Bit:               c.StorageBuffer8Bit,
		StorageBuffer16Bit:              c.StorageBuffer16Bit,
		BufferDeviceAddress:             c.BufferDeviceAddress,
		SignedZeroInfNanPreserve:        floatWidths(c.FloatControls.SignedZeroInfNanPreserve),
	}
}

// floatWidths is a float control's widths as codegen states them.
func floatWidths(w device.FloatWidths) codegen.FloatWidths {
	return codegen.FloatWidths{F16: w.F16, F32: w.F32, F64: w.F64}
}
