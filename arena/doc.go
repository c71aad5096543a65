// Package arena manages the device memory of vkxla executables.
//
// An executable's buffers are placed at compile time by a Plan: fixed
// (block, offset, size) ranges, where buffers whose lifetimes do not overlap share
// addresses. Runtime temporaries come from a dynamic best-fit allocator (Heap) with
// coalescing. Both obey the device's Limits: offsets aligned to
// minStorageBufferOffsetAlignment, blocks of at most maxMemoryAllocationSize, and
// bindings of at most maxStorageBufferRange (Limits.Bindings splits a larger range).
// Statistics follow jax.Device.memory_stats().
//
// The pure parts (Limits, Plan, Heap, Stats) live in package alloc and need no
// device (the names here are aliases of alloc's); Arena puts device
// buffers behind a Heap's blocks and moves data between host and device.
package arena
