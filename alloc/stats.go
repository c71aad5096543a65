package alloc

import "fmt"

// Stats mirror jax.Device.memory_stats() (XLA's AllocatorStats), in bytes.
// Sizes count what the arena holds for an allocation: the requested size rounded
// up to Limits.Alignment. A plan's blocks count as allocations of their full size.
type Stats struct {
	BytesInUse        int64 // live allocations
	PeakBytesInUse    int64 // the most BytesInUse has been since creation or ResetPeak
	LargestAllocSize  int64 // the largest single allocation since creation or ResetPeak
	BytesReserved     int64 // device memory held: the sum of block sizes
	PeakBytesReserved int64 // the most BytesReserved has been since creation or ResetPeak
	BytesLimit        int64 // Options.Limit; 0 means no limit
	NumAllocs         int64 // live allocations
	TotalAllocs       int64 // allocations made since creation
	NumBlocks         int   // device memory blocks held
	LargestFreeBlock  int64 // the largest free extent inside the reserved blocks
}

func (s Stats) String() string {
	return fmt.Sprintf("in use %d (peak %d, %d live, %d total), reserved %d in %d blocks (peak %d), largest free %d",
		s.BytesInUse, s.PeakBytesInUse, s.NumAllocs, s.TotalAllocs,
		s.BytesReserved, s.NumBlocks, s.PeakBytesReserved, s.LargestFreeBlock)
}

func (s *Stats) noteAlloc(size int64) {
	s.BytesInUse += size
	s.NumAllocs++
	s.TotalAllocs++
	s.PeakBytesInUse = max(s.PeakBytesInUse, s.BytesInUse)
	s.LargestAllocSize = max(s.LargestAllocSize, size)
}

func (s *Stats) noteFree(size int64) {
	s.BytesInUse -= size
	s.NumAllocs--
}

func (s *Stats) noteReserve(size int64) {
	s.BytesReserved += size
	s.NumBlocks++
	s.PeakBytesReserved = max(s.PeakBytesReserved, s.BytesReserved)
}

func (s *Stats) noteRelease(size int64) {
	s.BytesReserved -= size
	s.NumBlocks--
}

// resetPeak starts the peaks again from the current values, as XLA's ResetStats
// does, so that one run's peak can be measured on a long-lived pool.
func (s *Stats) resetPeak() {
	s.PeakBytesInUse = s.BytesInUse
	s.PeakBytesReserved = s.BytesReserved
	s.LargestAllocSize = 0
}
