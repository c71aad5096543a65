package device

/*
#include "vkx.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"strings"
)

// DeviceType is VkPhysicalDeviceType.
type DeviceType uint32

const (
	TypeOther DeviceType = iota
	TypeIntegrated
	TypeDiscrete
	TypeVirtual
	TypeCPU
)

func (t DeviceType) String() string {
	switch t {
	case TypeIntegrated:
		return "integrated"
	case TypeDiscrete:
		return "discrete"
	case TypeVirtual:
		return "virtual"
	case TypeCPU:
		return "cpu"
	}
	return "other"
}

// preference ranks device types for Open: discrete > integrated > virtual > CPU.
func (t DeviceType) preference() int {
	switch t {
	case TypeDiscrete:
		return 0
	case TypeIntegrated:
		return 1
	case TypeVirtual:
		return 2
	case TypeCPU:
		return 3
	}
	return 4
}

// Version is a packed Vulkan version (VK_MAKE_API_VERSION).
type Version uint32

func (v Version) Major() uint32 { return uint32(v) >> 22 & 0x7f }
func (v Version) Minor() uint32 { return uint32(v) >> 12 & 0x3ff }
func (v Version) Patch() uint32 { return uint32(v) & 0xfff }
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d", v.Major(), v.Minor(), v.Patch())
}

// SubgroupOps is VkSubgroupFeatureFlags: the subgroup operations shaders may use.
type SubgroupOps uint32

const (
	SubgroupBasic SubgroupOps = 1 << iota
	SubgroupVote
	SubgroupArithmetic
	SubgroupBallot
	SubgroupShuffle
	SubgroupShuffleRelative
	SubgroupClustered
	SubgroupQuad
)

var subgroupOpNames = []string{"basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative", "clustered", "quad"}

// Has reports whether all of ops are supported.
func (s SubgroupOps) Has(ops SubgroupOps) bool { return s&ops == ops }

func (s SubgroupOps) String() string {
	var names []string
	for i, n := range subgroupOpNames {
		if s&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// Vendor identifies the device's maker (PCI vendor ID or Khronos vendor ID).
type Vendor struct {
	ID   uint32
	Name string
}

var vendorNames = map[uint32]string{
	0x1002: "AMD", 0x10de: "NVIDIA", 0x8086: "Intel", 0x13b5: "ARM", 0x5143: "Qualcomm",
	0x1010: "ImgTec", 0x106b: "Apple", 0x14e4: "Broadcom", 0x10005: "Mesa",
}

// Driver describes the driver (VkPhysicalDeviceDriverProperties where available).
type Driver struct {
	ID      uint32 // VkDriverId; 0 when unknown
	Name    string // "llvmpipe", "NVIDIA", ...
	Info    string // "Mesa 22.3.6 (LLVM 15.0.6)", ...
	Version uint32 // vendor-specific encoding
}

// Heap is one device memory heap.
type Heap struct {
	Size        int64
	DeviceLocal bool
}

// MemoryType is one memory type (VkMemoryPropertyFlags, decoded).
type MemoryType struct {
	Heap         int
	DeviceLocal  bool
	HostVisible  bool
	HostCoherent bool
	HostCached   bool
	flags        uint32
}

// Caps are the facts about one physical device that code generation and the runtime
// need. Sizes are in bytes.
type Caps struct {
	Index      int // position in List(); VKXLA_DEVICE accepts it
	Name       string
	DeviceID   uint32
	Vendor     Vendor
	Driver     Driver
	DeviceType DeviceType
	APIVersion Version

	SubgroupSize            uint32
	MinSubgroupSize         uint32 // equal to SubgroupSize without subgroup size control
	MaxSubgroupSize         uint32
	SubgroupOps             SubgroupOps
	SubgroupInCompute       bool // subgroup operations are supported in compute shaders
	MaxSharedMemory         int
	MaxWorkgroupSize        [3]uint32
	MaxWorkgroupCount       [3]uint32
	MaxWorkgroupInvocations uint32

	MaxStorageBufferRange           int64 // the largest binding of one buffer range
	MaxMemoryAllocationSize         int64 // the largest single allocation (maintenance3)
	MinStorageBufferOffsetAlignment int64 // binding offsets must be multiples of this
	MaxPushConstantsSize            int
	MaxStorageBuffersPerStage       int
	NonCoherentAtomSize             int64

	// Uniform texel buffers (KernelSpec.Texels): a view covers at most
	// MaxTexelBufferElements texels from an offset that is a multiple of
	// MinTexelBufferOffsetAlignment; they count against MaxSampledImagesPerStage
	// (maxPerStageDescriptorSampledImages), and with the storage buffers against
	// MaxResourcesPerStage. TexelFormats are the formats they can be read with.
	MaxTexelBufferElements        int64
	MinTexelBufferOffsetAlignment int64
	MaxSampledImagesPerStage      int
	MaxResourcesPerStage          int
	TexelFormats                  []TexelFormat

	MemoryHeaps []Heap
	MemoryTypes []MemoryType
	// UnifiedMemory: the preferred device-local memory type is also host-visible and
	// coherent, so buffers are mapped and Read/Write copy directly (integrated GPUs,
	// lavapipe, discrete GPUs with resizable BAR exposed that way).
	UnifiedMemory bool

	TimestampsSupported bool
	TimestampValidBits  uint32
	TimestampPeriod     float64 // nanoseconds per timestamp tick

	Float16                bool
	Float64                bool
	Int8                   bool
	Int16                  bool
	Int64                  bool
	ShaderFloat16Int8      bool // both Float16 and Int8 (VK_KHR_shader_float16_int8)
	StorageBuffer16Bit     bool // 16-bit types in storage buffers
	UniformAndStorage16Bit bool
	PushConstant16Bit      bool
	StorageBuffer8Bit      bool
	UniformAndStorage8Bit  bool
	PushConstant8Bit       bool
	AtomicFloat32Add       bool // atomicAdd on float in storage buffers
	AtomicFloat64Add       bool
	SubgroupSizeControl    bool
	ComputeFullSubgroups   bool
	VulkanMemoryModel      bool
	// BufferDeviceAddress: buffers have device addresses that kernels read through
	// PhysicalStorageBuffer64 pointers (Vulkan 1.2 or VK_KHR_buffer_device_address),
	// with no per-binding range limit. Open enables it where reported.
	BufferDeviceAddress bool

	// FloatControls are the float behaviours the device guarantees on request.
	FloatControls FloatControls

	queueFamily uint32
}

// FloatControls are VkPhysicalDeviceFloatControlsProperties: which float behaviours
// a shader may request with SPIR-V's float-controls execution modes (SPIR-V 1.4, or
// VK_KHR_shader_float_controls, enabled where not core). Kernels (SPIR-V 1.3 with
// SPV_KHR_float_controls) request SignedZeroInfNanPreserve at the widths listed
// here; the other facts say what to expect, since nothing else is requested.
// lavapipe preserves signed zeros, infinities and NaNs at every width but not
// denormals at f32 and f64: float instructions there may flush subnormal operands
// and results to zero, so the kernels handle subnormals on their encodings with
// integer instructions wherever an op's answer depends on them (docs/codegen.md).
type FloatControls struct {
	Known                    bool        // the device reported them (Vulkan 1.2 or the extension)
	DenormPreserve           FloatWidths // subnormals kept when DenormPreserve is requested
	DenormFlushToZero        FloatWidths // subnormals flushed when DenormFlushToZero is requested
	SignedZeroInfNanPreserve FloatWidths // ±0, ±inf and NaN honoured when requested
	RoundingModeRTE          FloatWidths // round-to-nearest-even can be requested
}

// FloatWidths says, per float width, whether a float control holds.
type FloatWidths struct{ F16, F32, F64 bool }

func (w FloatWidths) String() string {
	var names []string
	for _, n := range []struct {
		ok   bool
		name string
	}{{w.F16, "f16"}, {w.F32, "f32"}, {w.F64, "f64"}} {
		if n.ok {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// SupportsTexel reports whether a uniform texel buffer can be read with format f.
func (c Caps) SupportsTexel(f TexelFormat) bool { return slices.Contains(c.TexelFormats, f) }

func (c Caps) String() string {
	return fmt.Sprintf("%s (%s, %s, Vulkan %s, driver %s %s)", c.Name, c.DeviceType, c.Vendor.Name,
		c.APIVersion, c.Driver.Name, c.Driver.Info)
}

// usable: Vulkan 1.1 or later (the subgroup and feature queries) and a compute queue.
func (c Caps) usable() bool {
	return c.APIVersion >= Version(1<<22|1<<12) && c.queueFamily != ^uint32(0)
}

const (
	memDeviceLocal  = 0x1
	memHostVisible  = 0x2
	memHostCoherent = 0x4
	memHostCached   = 0x8
)

func queryCaps(in *C.vkx_instance, index int) Caps {
	var c C.vkx_caps
	C.vkx_query_caps(in, C.uint32_t(index), &c)
	caps := Caps{
		Index:      index,
		Name:       C.GoString(&c.name[0]),
		DeviceID:   uint32(c.device_id),
		Vendor:     Vendor{ID: uint32(c.vendor_id), Name: vendorNames[uint32(c.vendor_id)]},
		Driver:     Driver{ID: uint32(c.driver_id), Name: C.GoString(&c.driver_name[0]), Info: C.GoString(&c.driver_info[0]), Version: uint32(c.driver_version)},
		DeviceType: DeviceType(c.device_type),
		APIVersion: Version(c.api_version),

		SubgroupSize:      uint32(c.subgroup_size),
		MinSubgroupSize:   uint32(c.min_subgroup_size),
		MaxSubgroupSize:   uint32(c.max_subgroup_size),
		SubgroupOps:       SubgroupOps(c.subgroup_ops),
		SubgroupInCompute: c.subgroup_stages&C.VK_SHADER_STAGE_COMPUTE_BIT != 0,
		MaxSharedMemory:   int(c.max_shared),

		MaxWorkgroupInvocations:         uint32(c.max_wg_invocations),
		MaxStorageBufferRange:           int64(c.max_storage_range),
		MaxMemoryAllocationSize:         int64(c.max_alloc),
		MinStorageBufferOffsetAlignment: int64(c.min_storage_align),
		MaxPushConstantsSize:            int(c.max_push),
		MaxStorageBuffersPerStage:       int(c.max_storage_buffers_per_stage),
		NonCoherentAtomSize:             int64(c.non_coherent_atom),

		MaxTexelBufferElements:        int64(c.max_texel_elements),
		MinTexelBufferOffsetAlignment: int64(c.min_texel_align),
		MaxSampledImagesPerStage:      int(c.max_sampled_per_stage),
		MaxResourcesPerStage:          int(c.max_resources_per_stage),

		TimestampsSupported: c.timestamp_bits > 0,
		TimestampValidBits:  uint32(c.timestamp_bits),
		TimestampPeriod:     float64(c.timestamp_period),
		queueFamily:         uint32(c.queue_family),
	}
	for i := range 3 {
		caps.MaxWorkgroupSize[i] = uint32(c.max_wg_size[i])
		caps.MaxWorkgroupCount[i] = uint32(c.max_wg_count[i])
	}
	if caps.Vendor.Name == "" {
		caps.Vendor.Name = fmt.Sprintf("0x%x", caps.Vendor.ID)
	}
	for _, f := range texelFormats {
		if c.texel_formats&(1<<f) != 0 {
			caps.TexelFormats = append(caps.TexelFormats, f)
		}
	}
	fillMemory(&caps, &c)
	fillFeatures(&caps, &c)
	return caps
}

func fillMemory(caps *Caps, c *C.vkx_caps) {
	for i := range int(c.heap_count) {
		caps.MemoryHeaps = append(caps.MemoryHeaps, Heap{Size: int64(c.heap_size[i]), DeviceLocal: c.heap_flags[i]&1 != 0})
	}
	for i := range int(c.type_count) {
		f := uint32(c.type_flags[i])
		caps.MemoryTypes = append(caps.MemoryTypes, MemoryType{
			Heap: int(c.type_heap[i]), DeviceLocal: f&memDeviceLocal != 0, HostVisible: f&memHostVisible != 0,
			HostCoherent: f&memHostCoherent != 0, HostCached: f&memHostCached != 0, flags: f,
		})
	}
	if t := caps.bufferTypes(); len(t) > 0 {
		caps.UnifiedMemory = caps.mappable()&(1<<t[0]) != 0 && caps.MemoryTypes[t[0]].DeviceLocal
	}
}

func fillFeatures(caps *Caps, c *C.vkx_caps) {
	b := func(v C.uint32_t) bool { return v != 0 }
	caps.Float64, caps.Int64, caps.Int16 = b(c.f_float64), b(c.f_int64), b(c.f_int16)
	caps.Float16, caps.Int8 = b(c.f_float16), b(c.f_int8)
	caps.ShaderFloat16Int8 = caps.Float16 && caps.Int8
	caps.StorageBuffer16Bit, caps.UniformAndStorage16Bit, caps.PushConstant16Bit = b(c.f_sb16), b(c.f_ubo16), b(c.f_push16)
	caps.StorageBuffer8Bit, caps.UniformAndStorage8Bit, caps.PushConstant8Bit = b(c.f_sb8), b(c.f_ubo8), b(c.f_push8)
	caps.AtomicFloat32Add, caps.AtomicFloat64Add = b(c.f_atomic_float32_add), b(c.f_atomic_float64_add)
	caps.SubgroupSizeControl, caps.ComputeFullSubgroups = b(c.f_subgroup_size_control), b(c.f_full_subgroups)
	caps.VulkanMemoryModel = b(c.f_memory_model)
	caps.BufferDeviceAddress = b(c.f_buffer_device_address)
	widths := func(v [3]C.uint32_t) FloatWidths { return FloatWidths{b(v[0]), b(v[1]), b(v[2])} }
	caps.FloatControls = FloatControls{
		Known:                    b(c.fc_known),
		DenormPreserve:           widths(c.fc_denorm_preserve),
		DenormFlushToZero:        widths(c.fc_denorm_ftz),
		SignedZeroInfNanPreserve: widths(c.fc_szinp),
		RoundingModeRTE:          widths(c.fc_rte),
	}
}

// bufferTypes lists memory types for NewBuffer in order of preference: device-local
// first. Vulkan orders types so that, among those with the same flags, the better one
// comes first and a type whose flags are a subset of another's comes earlier, so on
// a discrete GPU the plain device-local type precedes the small host-visible BAR one.
func (c Caps) bufferTypes() []uint32 {
	var local, other []uint32
	for i, t := range c.MemoryTypes {
		if t.DeviceLocal {
			local = append(local, uint32(i))
		} else {
			other = append(other, uint32(i))
		}
	}
	return append(local, other...)
}

// stagingTypes lists host-visible coherent types, cached ones first (reads back fast).
func (c Caps) stagingTypes() []uint32 {
	var cached, plain []uint32
	for i, t := range c.MemoryTypes {
		switch {
		case t.HostVisible && t.HostCoherent && t.HostCached:
			cached = append(cached, uint32(i))
		case t.HostVisible && t.HostCoherent:
			plain = append(plain, uint32(i))
		}
	}
	return append(cached, plain...)
}

// mappable is the set of types that are mapped persistently. Only coherent memory is
// mapped: non-coherent memory would need flushes aligned to nonCoherentAtomSize, and
// going through a staging copy instead is simpler and still correct.
func (c Caps) mappable() uint32 {
	var m uint32
	for i, t := range c.MemoryTypes {
		if t.HostVisible && t.HostCoherent {
			m |= 1 << i
		}
	}
	return m
}
