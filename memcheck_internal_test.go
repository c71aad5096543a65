package vkxla

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/device"
)

const gib = int64(1) << 30

// TestCheckPlanFits: the plan check on sizes alone, with the device of the issue (one
// 2 GiB heap, 2 GiB the largest allocation) and what the runtime holds.
func TestCheckPlanFits(t *testing.T) {
	dev := deviceMemory{heapBytes: 2 * gib, maxAllocation: 2 * gib}
	ranges := func(sizes ...int64) []arena.PlanRange {
		var rs []arena.PlanRange
		for i, s := range sizes {
			rs = append(rs, arena.PlanRange{Name: string(rune('a' + i)), Block: i, Size: s})
		}
		return rs
	}
	held := dev
	held.heldBytes = gib + gib/2

	for _, tc := range []struct {
		name   string
		blocks []int64
		ranges []arena.PlanRange
		mem    deviceMemory
		want   []string // substrings of the error; none: the plan fits
	}{
		{"fits exactly", []int64{2 * gib}, ranges(2 * gib), dev, nil},
		{"several blocks that fit", []int64{gib, gib}, ranges(gib, gib), dev, nil},
		{"50 GiB in 25 blocks", make25(2 * gib), ranges(2 * gib), dev,
			[]string{"needs 53687091200 bytes of device memory in 25 blocks", "heaps hold 2147483648 bytes", "leaving 2147483648"}},
		{"one byte over", []int64{2*gib + 16}, ranges(2*gib + 16), dev,
			[]string{`buffer 0 "a" of 2147483664 bytes is larger than the device's largest allocation (maxMemoryAllocationSize 2147483648 bytes)`,
				"plan block 0 of 2147483664 bytes is larger", "needs 2147483664 bytes"}},
		{"held by the runtime", []int64{gib}, ranges(gib), held,
			[]string{"1610612736 of them held by the runtime", "leaving 536870912"}},
		{"fits beside what is held", []int64{gib / 2}, ranges(gib / 2), held, nil},
		{"more held than the heap", []int64{16}, ranges(16), deviceMemory{heapBytes: gib, heldBytes: 2 * gib}, []string{"leaving 0"}},
		{"no allocation limit known", []int64{gib}, ranges(gib), deviceMemory{heapBytes: 2 * gib}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkPlanFits(tc.blocks, tc.ranges, tc.mem)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func make25(size int64) []int64 {
	blocks := make([]int64, 25)
	for i := range blocks {
		blocks[i] = size
	}
	return blocks
}
