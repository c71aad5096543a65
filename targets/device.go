// Package targets holds the device facts the planner needs as plain data: a
// Device read from a running device's capabilities (the root), from what
// `vulkaninfo --json` prints for a device (FromVulkaninfo: the Khronos Vulkan
// profiles format), or built in (Builtin). Facts no Vulkan query reports are kept
// per target family, one file each (lavapipe.go: its loop limiter). Nothing here
// needs a device, so `vkxla compile` plans for a GPU the machine does not have.
package targets

import (
	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// Device is what planning reads about one Vulkan device. Sizes are in bytes.
type Device struct {
	Name   string
	Driver string // VkPhysicalDeviceDriverProperties.driverName
	// SubgroupSize is the default; Min and Max the range subgroup size control
	// allows (equal to it without the extension).
	SubgroupSize, MinSubgroupSize, MaxSubgroupSize uint32
	// SubgroupArithmetic: subgroup arithmetic operations in compute shaders.
	SubgroupArithmetic      bool
	MaxSharedMemory         uint32
	MaxWorkgroupInvocations uint32
	MaxWorkgroupSize        [3]uint32
	MaxWorkgroupCount       [3]uint32
	MaxStorageBufferRange   int64
	// MaxMemoryAllocationSize is maintenance3's maxMemoryAllocationSize (one block).
	MaxMemoryAllocationSize         int64
	MinStorageBufferOffsetAlignment int64
	MaxStorageBuffersPerStage       int
	// Uniform texel buffers (core Vulkan; the formats kernels view them in are ones
	// every device must support for them): the most texels one view covers, the
	// alignment of a view's offset, and maxPerStageDescriptorSampledImages, which
	// counts them. Zero MaxTexelBufferElements: kernels read no texel buffers.
	MaxTexelBufferElements        int64
	MinTexelBufferOffsetAlignment int64
	MaxSampledImagesPerStage      int
	// Arithmetic types beyond 32 bits, and 8- and 16-bit storage.
	Float16, Float64, Int8, Int16, Int64  bool
	StorageBuffer8Bit, StorageBuffer16Bit bool
	// BufferDeviceAddress: buffers have device addresses kernels may read through
	// (bufferDeviceAddress), so tensors beyond MaxStorageBufferRange need no split.
	BufferDeviceAddress bool
	// SignedZeroInfNanPreserve: the float widths where the device honours that
	// execution mode (float-controls properties; a profile without them has none).
	SignedZeroInfNanPreserve codegen.FloatWidths
}

// Codegen is the code generator's view of the device, with its family's facts.
func (d Device) Codegen() codegen.Target {
	t := codegen.Target{
		SubgroupSize:             d.SubgroupSize,
		SubgroupArithmetic:       d.SubgroupArithmetic,
		MaxSharedMemory:          d.MaxSharedMemory,
		MaxWorkgroupInvocations:  d.MaxWorkgroupInvocations,
		MaxWorkgroupSize:         d.MaxWorkgroupSize,
		MaxWorkgroupCount:        d.MaxWorkgroupCount,
		MaxStorageBufferRange:    d.MaxStorageBufferRange,
		MaxStorageBuffers:        d.MaxStorageBuffersPerStage,
		BufferDeviceAddress:      d.BufferDeviceAddress,
		Float16:                  d.Float16,
		Float64:                  d.Float64,
		Int8:                     d.Int8,
		Int16:                    d.Int16,
		Int64:                    d.Int64,
		StorageBuffer8Bit:        d.StorageBuffer8Bit,
		StorageBuffer16Bit:       d.StorageBuffer16Bit,
		SignedZeroInfNanPreserve: d.SignedZeroInfNanPreserve,
	}
	if d.texelViewsAligned() {
		t.MaxTexelBufferElements, t.MaxTexelBuffers = d.MaxTexelBufferElements, d.MaxSampledImagesPerStage
	}
	for _, f := range families {
		if f.matches(d) {
			f.apply(&t)
		}
	}
	return t
}

// texelViewsAligned: every offset the arena hands out (a multiple of Limits'
// alignment) may start a texel buffer view, so kernels may view any tensor as one.
// Where the device asks more of a view's offset, kernels read no texel buffers.
func (d Device) texelViewsAligned() bool {
	a := d.MinTexelBufferOffsetAlignment
	return a > 0 && d.Limits().Alignment%a == 0
}

// Limits are the allocation rules: the device's offset alignment raised to
// alloc.MinAlignment, one binding's range, one block's size.
func (d Device) Limits() alloc.Limits {
	return alloc.Limits{
		Alignment:       max(d.MinStorageBufferOffsetAlignment, alloc.MinAlignment),
		MaxBindingRange: d.MaxStorageBufferRange,
		MaxBlockSize:    d.MaxMemoryAllocationSize,
	}
}

// MaxFusionParams leaves room among the device's storage-buffer bindings for a
// kernel's outputs and scratch buffers, and keeps fused kernels to a size whose
// compile time stays small.
func (d Device) MaxFusionParams() int { return min(d.MaxStorageBuffersPerStage-4, 64) }

// Plan is the planner's target.
func (d Device) Plan() plan.Target {
	return plan.Target{Codegen: d.Codegen(), Limits: d.Limits(), MaxFusionParams: d.MaxFusionParams()}
}

// family is a group of devices sharing facts no Vulkan query reports; each lives
// in a file of its own.
type family struct {
	name    string
	matches func(Device) bool
	apply   func(*codegen.Target)
}

// families are the known families, in the order their facts apply.
var families []family
