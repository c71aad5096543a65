package vkxla

import (
	"fmt"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/plan"
)

// MemoryStats is the device memory an executable holds, fixed at compile time
// (plan.MemoryStats: the planner states it before anything runs).
type MemoryStats = plan.MemoryStats

// LiveBuffer is a buffer live when the executable's live bytes peak.
type LiveBuffer = plan.LiveBuffer

// RuntimeMemoryStats is the device memory a runtime holds, as jax's
// Device.memory_stats() reports it: the planned arenas of its live executables
// (cached ones included), their address tables, and its pool of device tensors.
type RuntimeMemoryStats struct {
	Executables     int
	ExecutableBytes int64
	// AddressTableBytes is the live executables' address tables (bindings.go):
	// the device addresses of the arguments kernels reach by address, one buffer
	// per recorded command buffer that has any, outside the plans. An executable
	// run on donated or borrowed memory has a recording, and tables, per binding
	// it caches.
	AddressTableBytes int64
	// HostBytes is the host memory the live executables hold for offloaded values
	// (MemoryStats.HostBytes): not device memory, not in TotalBytes.
	HostBytes int64
	// Tensors is the DeviceTensor pool's allocator statistics (bytes in use,
	// reserved, peaks, the largest free extent).
	Tensors arena.Stats
}

// TotalBytes is all the device memory the runtime holds now.
func (s RuntimeMemoryStats) TotalBytes() int64 {
	return s.ExecutableBytes + s.AddressTableBytes + s.Tensors.BytesReserved
}

func (s RuntimeMemoryStats) String() string {
	return fmt.Sprintf("%d B in all: %d executables %d B, address tables %d B, tensors %d B in use of %d B reserved",
		s.TotalBytes(), s.Executables, s.ExecutableBytes, s.AddressTableBytes, s.Tensors.BytesInUse, s.Tensors.BytesReserved)
}

// MemoryStats returns the device memory the runtime holds now: its executables'
// plans (each allocated whole at Compile), their address tables and its tensor
// pool.
func (rt *Runtime) MemoryStats() RuntimeMemoryStats {
	rt.mu.Lock()
	s := RuntimeMemoryStats{Executables: len(rt.live), AddressTableBytes: rt.tableBytes.Load()}
	for c := range rt.live {
		s.ExecutableBytes += c.stats.PeakBytes
		s.HostBytes += c.stats.HostBytes
	}
	rt.mu.Unlock()
	s.Tensors = rt.pool.Stats()
	return s
}
