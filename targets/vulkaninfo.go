package targets

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"sort"

	"github.com/vkxla/vkxla/spirv/codegen"
)

// ErrProfile: a device description that cannot be read or lacks a fact planning needs.
var ErrProfile = errors.New("targets: bad device profile")

// builtins are the built-in profiles by name (one per family file).
var builtins = map[string][]byte{}

// Builtins lists the built-in profile names.
func Builtins() []string {
	names := slices.Collect(maps.Keys(builtins))
	sort.Strings(names)
	return names
}

// Builtin returns a built-in profile's device.
func Builtin(name string) (Device, error) {
	data, ok := builtins[name]
	if !ok {
		return Device{}, fmt.Errorf("%w: no built-in target %q (have %v)", ErrProfile, name, Builtins())
	}
	return FromVulkaninfo(data)
}

// profile is the part of the Khronos Vulkan profiles JSON (what `vulkaninfo --json`
// prints, schema profiles-0.8) that planning reads.
type profile struct {
	Capabilities map[string]struct {
		Features struct {
			Core struct {
				ShaderFloat64 bool `json:"shaderFloat64"`
				ShaderInt64   bool `json:"shaderInt64"`
				ShaderInt16   bool `json:"shaderInt16"`
			} `json:"VkPhysicalDeviceFeatures"`
			Float16Int8 struct {
				ShaderFloat16 bool `json:"shaderFloat16"`
				ShaderInt8    bool `json:"shaderInt8"`
			} `json:"VkPhysicalDeviceShaderFloat16Int8Features"`
			Storage8 struct {
				StorageBuffer8BitAccess bool `json:"storageBuffer8BitAccess"`
			} `json:"VkPhysicalDevice8BitStorageFeatures"`
			Storage16 struct {
				StorageBuffer16BitAccess bool `json:"storageBuffer16BitAccess"`
			} `json:"VkPhysicalDevice16BitStorageFeatures"`
			BufferDeviceAddress struct {
				BufferDeviceAddress bool `json:"bufferDeviceAddress"`
			} `json:"VkPhysicalDeviceBufferDeviceAddressFeatures"`
			// The Vulkan 1.1 and 1.2 structures hold the same facts as the
			// extension structures above (profiles exported from vulkan.gpuinfo.org
			// give only these).
			Vulkan11 struct {
				StorageBuffer16BitAccess bool `json:"storageBuffer16BitAccess"`
			} `json:"VkPhysicalDeviceVulkan11Features"`
			Vulkan12 struct {
				ShaderFloat16           bool `json:"shaderFloat16"`
				ShaderInt8              bool `json:"shaderInt8"`
				StorageBuffer8BitAccess bool `json:"storageBuffer8BitAccess"`
				BufferDeviceAddress     bool `json:"bufferDeviceAddress"`
			} `json:"VkPhysicalDeviceVulkan12Features"`
		} `json:"features"`
		Properties struct {
			Core *struct {
				DeviceName string `json:"deviceName"`
				Limits     struct {
					MinStorageBufferOffsetAlignment     int64     `json:"minStorageBufferOffsetAlignment"`
					MaxStorageBufferRange               int64     `json:"maxStorageBufferRange"`
					MaxPerStageDescriptorStorageBuffers int       `json:"maxPerStageDescriptorStorageBuffers"`
					MaxPerStageDescriptorSampledImages  int       `json:"maxPerStageDescriptorSampledImages"`
					MaxTexelBufferElements              int64     `json:"maxTexelBufferElements"`
					MinTexelBufferOffsetAlignment       int64     `json:"minTexelBufferOffsetAlignment"`
					MaxComputeSharedMemorySize          uint32    `json:"maxComputeSharedMemorySize"`
					MaxComputeWorkGroupInvocations      uint32    `json:"maxComputeWorkGroupInvocations"`
					MaxComputeWorkGroupSize             [3]uint32 `json:"maxComputeWorkGroupSize"`
					MaxComputeWorkGroupCount            [3]uint32 `json:"maxComputeWorkGroupCount"`
				} `json:"limits"`
			} `json:"VkPhysicalDeviceProperties"`
			Maintenance3 struct {
				MaxMemoryAllocationSize int64 `json:"maxMemoryAllocationSize"`
			} `json:"VkPhysicalDeviceMaintenance3Properties"`
			Subgroup struct {
				SubgroupSize        uint32   `json:"subgroupSize"`
				SupportedStages     []string `json:"supportedStages"`
				SupportedOperations []string `json:"supportedOperations"`
			} `json:"VkPhysicalDeviceSubgroupProperties"`
			Vulkan11 struct {
				SubgroupSize            uint32   `json:"subgroupSize"`
				SupportedStages         []string `json:"subgroupSupportedStages"`
				SupportedOperations     []string `json:"subgroupSupportedOperations"`
				MaxMemoryAllocationSize int64    `json:"maxMemoryAllocationSize"`
			} `json:"VkPhysicalDeviceVulkan11Properties"`
			Vulkan12 struct {
				DriverName string `json:"driverName"`
			} `json:"VkPhysicalDeviceVulkan12Properties"`
			Vulkan13 struct {
				MinSubgroupSize uint32 `json:"minSubgroupSize"`
				MaxSubgroupSize uint32 `json:"maxSubgroupSize"`
			} `json:"VkPhysicalDeviceVulkan13Properties"`
			SubgroupSizeControl struct {
				MinSubgroupSize uint32 `json:"minSubgroupSize"`
				MaxSubgroupSize uint32 `json:"maxSubgroupSize"`
			} `json:"VkPhysicalDeviceSubgroupSizeControlProperties"`
			Driver struct {
				DriverName string `json:"driverName"`
			} `json:"VkPhysicalDeviceDriverProperties"`
			FloatControls struct {
				SignedZeroInfNanPreserveF16 bool `json:"shaderSignedZeroInfNanPreserveFloat16"`
				SignedZeroInfNanPreserveF32 bool `json:"shaderSignedZeroInfNanPreserveFloat32"`
				SignedZeroInfNanPreserveF64 bool `json:"shaderSignedZeroInfNanPreserveFloat64"`
			} `json:"VkPhysicalDeviceFloatControlsProperties"`
		} `json:"properties"`
	} `json:"capabilities"`
}

// FromVulkaninfo reads a device from what `vulkaninfo --json` prints (the Khronos
// Vulkan profiles format): the first capabilities block with device properties.
// A profile without the limits planning needs is refused, naming the fact.
func FromVulkaninfo(data []byte) (Device, error) {
	var p profile
	if err := json.Unmarshal(data, &p); err != nil {
		return Device{}, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	names := slices.Sorted(maps.Keys(p.Capabilities))
	for _, name := range names {
		c := p.Capabilities[name]
		core := c.Properties.Core
		if core == nil {
			continue
		}
		lim, props, feats := core.Limits, c.Properties, c.Features
		fc := props.FloatControls
		sg := props.Subgroup
		if len(sg.SupportedStages) == 0 { // only the Vulkan 1.1 structure
			sg.SupportedStages, sg.SupportedOperations = props.Vulkan11.SupportedStages, props.Vulkan11.SupportedOperations
		}
		d := Device{
			Name: core.DeviceName, Driver: cmp.Or(props.Driver.DriverName, props.Vulkan12.DriverName),
			SubgroupSize:                    cmp.Or(sg.SubgroupSize, props.Vulkan11.SubgroupSize),
			MinSubgroupSize:                 cmp.Or(props.SubgroupSizeControl.MinSubgroupSize, props.Vulkan13.MinSubgroupSize),
			MaxSubgroupSize:                 cmp.Or(props.SubgroupSizeControl.MaxSubgroupSize, props.Vulkan13.MaxSubgroupSize),
			SubgroupArithmetic:              slices.Contains(sg.SupportedStages, "VK_SHADER_STAGE_COMPUTE_BIT") && slices.Contains(sg.SupportedOperations, "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"),
			MaxSharedMemory:                 lim.MaxComputeSharedMemorySize,
			MaxWorkgroupInvocations:         lim.MaxComputeWorkGroupInvocations,
			MaxWorkgroupSize:                lim.MaxComputeWorkGroupSize,
			MaxWorkgroupCount:               lim.MaxComputeWorkGroupCount,
			MaxStorageBufferRange:           lim.MaxStorageBufferRange,
			MaxMemoryAllocationSize:         cmp.Or(props.Maintenance3.MaxMemoryAllocationSize, props.Vulkan11.MaxMemoryAllocationSize),
			MinStorageBufferOffsetAlignment: lim.MinStorageBufferOffsetAlignment,
			MaxStorageBuffersPerStage:       lim.MaxPerStageDescriptorStorageBuffers,
			MaxTexelBufferElements:          lim.MaxTexelBufferElements,
			MinTexelBufferOffsetAlignment:   lim.MinTexelBufferOffsetAlignment,
			MaxSampledImagesPerStage:        lim.MaxPerStageDescriptorSampledImages,
			Float16:                         feats.Float16Int8.ShaderFloat16 || feats.Vulkan12.ShaderFloat16,
			Float64:                         feats.Core.ShaderFloat64,
			Int8:                            feats.Float16Int8.ShaderInt8 || feats.Vulkan12.ShaderInt8,
			Int16:                           feats.Core.ShaderInt16,
			Int64:                           feats.Core.ShaderInt64,
			StorageBuffer8Bit:               feats.Storage8.StorageBuffer8BitAccess || feats.Vulkan12.StorageBuffer8BitAccess,
			StorageBuffer16Bit:              feats.Storage16.StorageBuffer16BitAccess || feats.Vulkan11.StorageBuffer16BitAccess,
			BufferDeviceAddress:             feats.BufferDeviceAddress.BufferDeviceAddress || feats.Vulkan12.BufferDeviceAddress,
			SignedZeroInfNanPreserve: codegen.FloatWidths{F16: fc.SignedZeroInfNanPreserveF16,
				F32: fc.SignedZeroInfNanPreserveF32, F64: fc.SignedZeroInfNanPreserveF64},
		}
		if d.MinSubgroupSize == 0 {
			d.MinSubgroupSize, d.MaxSubgroupSize = d.SubgroupSize, d.SubgroupSize
		}
		return d, d.check(name)
	}
	return Device{}, fmt.Errorf("%w: no capabilities block with VkPhysicalDeviceProperties", ErrProfile)
}

// check refuses a profile that leaves out a fact planning needs, or states a
// limit below what every Vulkan device must support (it cannot be a device's:
// a hand-edited or truncated file), naming the field, its value and the minimum.
// Kernels assume the minimums (a 128-invocation workgroup fits every device), so
// such a limit would give kernels the device cannot run.
func (d Device) check(block string) error {
	for _, f := range d.facts() {
		switch {
		case f.value == 0 && f.required:
			return fmt.Errorf("%w: %s: %s is missing or zero", ErrProfile, block, f.name)
		case f.value != 0 && f.value < f.min:
			return fmt.Errorf("%w: %s: %s is %d, below Vulkan's required minimum of %d", ErrProfile, block, f.name, f.value, f.min)
		}
	}
	for _, a := range []struct {
		name  string
		value int64
	}{
		{limitsField + "minStorageBufferOffsetAlignment", d.MinStorageBufferOffsetAlignment},
		{limitsField + "minTexelBufferOffsetAlignment", d.MinTexelBufferOffsetAlignment},
	} {
		if a.value < 0 || a.value > maxOffsetAlignment || bits.OnesCount64(uint64(a.value)) > 1 {
			return fmt.Errorf("%w: %s: %s is %d; Vulkan requires a power of two of at most %d", ErrProfile, block, a.name, a.value, maxOffsetAlignment)
		}
	}
	if n := d.MaxStorageBuffersPerStage; n <= reservedBindings {
		return fmt.Errorf("%w: %s: %smaxPerStageDescriptorStorageBuffers is %d; vkxla needs more than %d (it keeps %d for a kernel's outputs and scratch)",
			ErrProfile, block, limitsField, n, reservedBindings, reservedBindings)
	}
	return d.Limits().Validate()
}

// limitsField is where VkPhysicalDeviceLimits sits in a profile.
const limitsField = "VkPhysicalDeviceProperties.limits."

// maxOffsetAlignment is the largest offset alignment Vulkan allows a device
// (a "max" limit of the Required Limits table).
const maxOffsetAlignment = 256

// reservedBindings are the storage-buffer bindings MaxFusionParams leaves for a
// kernel's outputs and scratch buffers.
const reservedBindings = 4

// fact is one limit a profile states: where it is, its value, the least every
// Vulkan device supports, and whether planning needs it (required) or gives its
// absence a meaning (zero texel limits: kernels read no texel buffers).
type fact struct {
	name     string
	value    int64
	min      int64
	required bool
}

// facts are the limits planning reads, with their minimums from the Vulkan
// specification's "Required Limits" table (chapter Limits, [[limits-required]];
// maxMemoryAllocationSize from VK_KHR_maintenance3's rows).
func (d Device) facts() []fact {
	fs := []fact{
		{limitsField + "maxStorageBufferRange", d.MaxStorageBufferRange, 1 << 27, true},
		{limitsField + "minStorageBufferOffsetAlignment", d.MinStorageBufferOffsetAlignment, 1, true},
		{limitsField + "maxPerStageDescriptorStorageBuffers", int64(d.MaxStorageBuffersPerStage), 4, true},
		{limitsField + "maxComputeWorkGroupInvocations", int64(d.MaxWorkgroupInvocations), 128, true},
		{limitsField + "maxComputeSharedMemorySize", int64(d.MaxSharedMemory), 16384, true},
		{"VkPhysicalDeviceMaintenance3Properties.maxMemoryAllocationSize", d.MaxMemoryAllocationSize, 1 << 30, true},
		{"VkPhysicalDeviceSubgroupProperties.subgroupSize", int64(d.SubgroupSize), 1, true},
		{limitsField + "maxTexelBufferElements", d.MaxTexelBufferElements, 65536, false},
		{limitsField + "maxPerStageDescriptorSampledImages", int64(d.MaxSampledImagesPerStage), 16, false},
	}
	for i, min := range [3]int64{128, 128, 64} {
		fs = append(fs, fact{fmt.Sprintf("%smaxComputeWorkGroupSize[%d]", limitsField, i), int64(d.MaxWorkgroupSize[i]), min, true})
	}
	for i := range 3 {
		fs = append(fs, fact{fmt.Sprintf("%smaxComputeWorkGroupCount[%d]", limitsField, i), int64(d.MaxWorkgroupCount[i]), 65535, true})
	}
	return fs
}
