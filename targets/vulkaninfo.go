package targets

import (
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
		} `json:"features"`
		Properties struct {
			Core *struct {
				DeviceName string `json:"deviceName"`
				Limits     struct {
					MinStorageBufferOffsetAlignment     int64     `json:"minStorageBufferOffsetAlignment"`
					MaxStorageBufferRange               int64     `json:"maxStorageBufferRange"`
					MaxPerStageDescriptorStorageBuffers int       `json:"maxPerStageDescriptorStorageBuffers"`
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
		lim, fc := core.Limits, c.Properties.FloatControls
		d := Device{
			Name: core.DeviceName, Driver: c.Properties.Driver.DriverName,
			SubgroupSize:                    c.Properties.Subgroup.SubgroupSize,
			MinSubgroupSize:                 c.Properties.SubgroupSizeControl.MinSubgroupSize,
			MaxSubgroupSize:                 c.Properties.SubgroupSizeControl.MaxSubgroupSize,
			SubgroupArithmetic:              slices.Contains(c.Properties.Subgroup.SupportedStages, "VK_SHADER_STAGE_COMPUTE_BIT") && slices.Contains(c.Properties.Subgroup.SupportedOperations, "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"),
			MaxSharedMemory:                 lim.MaxComputeSharedMemorySize,
			MaxWorkgroupInvocations:         lim.MaxComputeWorkGroupInvocations,
			MaxWorkgroupSize:                lim.MaxComputeWorkGroupSize,
			MaxWorkgroupCount:               lim.MaxComputeWorkGroupCount,
			MaxStorageBufferRange:           lim.MaxStorageBufferRange,
			MaxMemoryAllocationSize:         c.Properties.Maintenance3.MaxMemoryAllocationSize,
			MinStorageBufferOffsetAlignment: lim.MinStorageBufferOffsetAlignment,
			MaxStorageBuffersPerStage:       lim.MaxPerStageDescriptorStorageBuffers,
			Float16:                         c.Features.Float16Int8.ShaderFloat16,
			Float64:                         c.Features.Core.ShaderFloat64,
			Int8:                            c.Features.Float16Int8.ShaderInt8,
			Int16:                           c.Features.Core.ShaderInt16,
			Int64:                           c.Features.Core.ShaderInt64,
			StorageBuffer8Bit:               c.Features.Storage8.StorageBuffer8BitAccess,
			StorageBuffer16Bit:              c.Features.Storage16.StorageBuffer16BitAccess,
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
