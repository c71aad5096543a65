package targets

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// check names the first fact planning needs that the profile left out.
func (d Device) check(block string) error {
	for _, f := range []struct {
		name string
		ok   bool
	}{
		{"VkPhysicalDeviceProperties.limits.maxStorageBufferRange", d.MaxStorageBufferRange > 0},
		{"VkPhysicalDeviceProperties.limits.minStorageBufferOffsetAlignment", d.MinStorageBufferOffsetAlignment > 0},
		{"VkPhysicalDeviceProperties.limits.maxPerStageDescriptorStorageBuffers", d.MaxStorageBuffersPerStage > 4},
		{"VkPhysicalDeviceProperties.limits.maxComputeWorkGroupInvocations", d.MaxWorkgroupInvocations > 0},
		{"VkPhysicalDeviceMaintenance3Properties.maxMemoryAllocationSize", d.MaxMemoryAllocationSize > 0},
		{"VkPhysicalDeviceSubgroupProperties.subgroupSize", d.SubgroupSize > 0},
	} {
		if !f.ok {
			return fmt.Errorf("%w: %s: %s is missing or zero", ErrProfile, block, f.name)
		}
	}
	return d.Limits().Validate()
}
