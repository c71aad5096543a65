// Package alloc is the device-free half of vkxla's memory management: the device
// limits that allocation and binding obey (Limits), byte spans, the compile-time
// buffer assignment (Plan) and the best-fit allocator with coalescing (Heap), with
// statistics after jax.Device.memory_stats(). It imports no device and no cgo, so
// the planner (package plan) and its tests run on a machine without Vulkan;
// package arena puts device buffers behind a Heap's blocks and a Plan's blocks.
package alloc
