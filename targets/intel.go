package targets

import _ "embed"

// intelArcA770 is an Intel Xe-HPG GPU (Arc A770, DG2, Mesa ANV 26.1 on Linux) as
// vulkan.gpuinfo.org reports it, cut to what planning reads.
// Source: KhronosGroup/Vulkan-Profiles,
// profiles/LunarG/VP_LUNARG_desktop_baseline_2026/vp_gpuinfo_intel_r__arc_tm__a770_graphics__dg2__26_1_2_arch_unknown.json.
// The facts as published: default subgroup size 32 with subgroup size control
// from 8 to 32 (SIMD8/16/32), arithmetic in compute, 48 KiB of shared memory,
// 1024 invocations (1024³), 4 GiB − 1 per storage binding, 4-byte storage-buffer
// offsets (raised to alloc.MinAlignment), blocks of 35.2 GiB, and no shaderFloat64
// (f64 kernels are refused for this target), and bufferDeviceAddress
// (VkPhysicalDeviceVulkan12Features). No fact here is unpublished.
//
//go:embed intel.json
var intelArcA770 []byte

func init() { builtins["intel-arc-a770"] = intelArcA770 }
