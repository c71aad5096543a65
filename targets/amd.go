package targets

import _ "embed"

// amdRX5700XT is an AMD RDNA 1 GPU (Radeon RX 5700 XT, Navi 10, Mesa RADV 26.0
// on Linux) as vulkan.gpuinfo.org reports it, cut to what planning reads.
// Source: KhronosGroup/Vulkan-Profiles,
// profiles/LunarG/VP_LUNARG_desktop_max_2026/vp_gpuinfo_amd_radeon_rx_5700_xt__radv_navi10__26_0_99_arch_unknown.json.
// The facts as published: default subgroup size 64 with subgroup size control
// from 32 to 64 (RDNA's wave32 and wave64), arithmetic in compute, 64 KiB of
// shared memory, 1024 invocations (1024³), 4 GiB − 1 per storage binding, 4-byte
// storage-buffer offsets (raised to alloc.MinAlignment), blocks of 4 GiB − 4,
// every arithmetic and storage type, and bufferDeviceAddress
// (VkPhysicalDeviceVulkan12Features). No fact here is unpublished.
//
//go:embed amd.json
var amdRX5700XT []byte

func init() { builtins["amd-rx5700xt"] = amdRX5700XT }
