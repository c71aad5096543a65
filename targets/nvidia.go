package targets

import _ "embed"

// nvidiaRTX2070 is an NVIDIA Turing GPU (GeForce RTX 2070, proprietary driver
// 610.43.02 on Linux) as vulkan.gpuinfo.org reports it, cut to what planning reads.
// Source: KhronosGroup/Vulkan-Profiles,
// profiles/LunarG/VP_LUNARG_desktop_max_2026/vp_gpuinfo_nvidia_geforce_rtx_2070_610_43_2_0_arch_unknown.json.
// The facts as published: subgroups of 32 only (min = max = 32, arithmetic in
// compute), 48 KiB of shared memory, 1024 invocations (1024×1024×64), 4 GiB − 1
// per storage binding, 16-byte storage-buffer offsets, maxMemoryAllocationSize
// reported as 2^63 − 1 (the driver sets no bound below the heap's), every
// arithmetic and storage type, and bufferDeviceAddress
// (VkPhysicalDeviceVulkan12Features), so tensors beyond one binding are reached
// by address. No fact here is unpublished; no family-specific
// fact (like lavapipe's loop limiter) is known, so none applies.
//
//go:embed nvidia.json
var nvidiaRTX2070 []byte

func init() { builtins["nvidia-rtx2070"] = nvidiaRTX2070 }
