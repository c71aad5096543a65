package alloc

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testLimits = Limits{Alignment: 16, MaxBindingRange: 1 << 10, MaxBlockSize: 1 << 12}

func newTestHeap(t *testing.T, o HeapOptions) *Heap {
	t.Helper()
	h, err := NewHeap(testLimits, o)
	require.NoError(t, err)
	return h
}

func TestHeapAllocAlignsAndCounts(t *testing.T) {
	h := newTestHeap(t, HeapOptions{BlockSize: 1024})
	a, err := h.Alloc(1)
	require.NoError(t, err)
	b, err := h.Alloc(17)
	require.NoError(t, err)

	assert.Equal(t, Span{0, 1}, a.Span())
	assert.Equal(t, int64(16), a.Reserved())
	assert.Equal(t, Span{16, 17}, b.Span(), "the second allocation starts at the next aligned offset")
	assert.Equal(t, int64(32), b.Reserved())
	s := h.Stats()
	assert.Equal(t, Stats{BytesInUse: 48, PeakBytesInUse: 48, LargestAllocSize: 32, BytesReserved: 1024,
		PeakBytesReserved: 1024, NumAllocs: 2, TotalAllocs: 2, NumBlocks: 1, LargestFreeBlock: 1024 - 48}, s)
}

func TestHeapBestFitPicksSmallestHole(t *testing.T) {
	h := newTestHeap(t, HeapOptions{BlockSize: 1024})
	// Layout: [a 64][gap1 128][b 16][gap2 64][c 16][rest].
	var cs []Chunk
	for _, size := range []int64{64, 128, 16, 64, 16} {
		c, err := h.Alloc(size)
		require.NoError(t, err)
		cs = append(cs, c)
	}
	require.NoError(t, h.Free(cs[1]))
	require.NoError(t, h.Free(cs[3]))

	c, err := h.Alloc(50)
	require.NoError(t, err)
	assert.Equal(t, cs[3].Offset(), c.Offset(), "a 64-byte hole fits 50 bytes better than a 128-byte one")
	c, err = h.Alloc(100)
	require.NoError(t, err)
	assert.Equal(t, cs[1].Offset(), c.Offset())
}

func TestHeapCoalescesBothNeighbours(t *testing.T) {
	h := newTestHeap(t, HeapOptions{BlockSize: 256})
	var cs []Chunk
	for range 4 {
		c, err := h.Alloc(64)
		require.NoError(t, err)
		cs = append(cs, c)
	}
	assert.Equal(t, int64(0), h.Stats().LargestFreeBlock, "the block is full")
	require.NoError(t, h.Free(cs[0]))
	require.NoError(t, h.Free(cs[2]))
	assert.Equal(t, int64(64), h.Stats().LargestFreeBlock)
	require.NoError(t, h.Free(cs[1])) // joins the holes on both sides
	assert.Equal(t, int64(192), h.Stats().LargestFreeBlock)
	require.NoError(t, h.Free(cs[3]))
	assert.Equal(t, int64(256), h.Stats().LargestFreeBlock)
	assert.Len(t, h.free.bySize, 1)
}

func TestHeapGrowsByBlocksAndRejectsOversize(t *testing.T) {
	h := newTestHeap(t, HeapOptions{BlockSize: 1024})
	a, err := h.Alloc(1000)
	require.NoError(t, err)
	b, err := h.Alloc(1000)
	require.NoError(t, err)
	assert.NotEqual(t, a.Block(), b.Block(), "the second request does not fit the first block")

	big, err := h.Alloc(3000)
	require.NoError(t, err)
	assert.Equal(t, int64(3008), h.blocks[big.Block()].size, "a request above BlockSize gets a block of its own size")

	_, err = h.Alloc(testLimits.MaxBlockSize + 1)
	require.ErrorIs(t, err, ErrBlockTooLarge)
	assert.Contains(t, err.Error(), "larger than the largest block")
	assert.Equal(t, 3, h.Stats().NumBlocks, "a rejected request reserves nothing")
}

func TestHeapLimit(t *testing.T) {
	h := newTestHeap(t, HeapOptions{BlockSize: 4096, Limit: 5100})
	_, err := h.Alloc(4000)
	require.NoError(t, err)
	_, err = h.Alloc(900) // 96 bytes free in block 0; a new 4096 block would pass the limit, 912 fits
	require.NoError(t, err)
	assert.Equal(t, int64(4096+912), h.Stats().BytesReserved)
	_, err = h.Alloc(100)
	require.ErrorIs(t, err, ErrOutOfMemory)
	assert.Contains(t, err.Error(), "past the limit 5100")
}

func TestHeapGrowFailureFallsBackAndReports(t *testing.T) {
	var sizes []int64
	h := newTestHeap(t, HeapOptions{BlockSize: 4096, Grow: func(b int, size int64) error {
		sizes = append(sizes, size)
		if size > 1024 {
			return assert.AnError
		}
		return nil
	}})
	c, err := h.Alloc(100)
	require.NoError(t, err, "a refused 4096-byte block is retried at the request's size")
	assert.Equal(t, []int64{4096, 112}, sizes)
	assert.Equal(t, 0, c.Block())

	_, err = h.Alloc(2000)
	require.ErrorIs(t, err, assert.AnError)
	assert.Contains(t, err.Error(), "allocating a block of 2000 bytes")
	assert.Equal(t, 1, h.Stats().NumBlocks)
}

func TestHeapBadFrees(t *testing.T) {
	h := newTestHeap(t, HeapOptions{})
	other := newTestHeap(t, HeapOptions{})
	a, err := h.Alloc(64)
	require.NoError(t, err)
	foreign, err := other.Alloc(64)
	require.NoError(t, err)

	require.ErrorIs(t, h.Free(foreign), ErrBadFree)
	require.ErrorIs(t, h.Free(Chunk{}), ErrBadFree)
	require.NoError(t, h.Free(a))
	require.ErrorIs(t, h.Free(a), ErrBadFree, "double free")

	b, err := h.Alloc(64) // reuses a's address
	require.NoError(t, err)
	require.Equal(t, a.Offset(), b.Offset())
	err = h.Free(a)
	require.ErrorIs(t, err, ErrBadFree, "a stale copy must not free the new owner of its address")
	assert.Contains(t, err.Error(), "already freed")
	assert.Equal(t, int64(1), h.Stats().NumAllocs)
	require.NoError(t, h.Free(b))
}

func TestHeapTrimAndPeak(t *testing.T) {
	var released []int
	h := newTestHeap(t, HeapOptions{BlockSize: 1024, Release: func(b int) error {
		released = append(released, b)
		return nil
	}})
	a, err := h.Alloc(1024)
	require.NoError(t, err)
	b, err := h.Alloc(512)
	require.NoError(t, err)
	require.NoError(t, h.Free(a))
	h.ResetPeak()
	assert.Equal(t, int64(512), h.Stats().PeakBytesInUse)

	n, err := h.Trim()
	require.NoError(t, err)
	assert.Equal(t, int64(1024), n)
	assert.Equal(t, []int{0}, released)
	c, err := h.Alloc(16)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Block(), "best fit in the remaining block; released indices are not reused")
	require.NoError(t, h.Free(b))
	require.NoError(t, h.Free(c))
	require.NoError(t, h.ReleaseAll())
	assert.Equal(t, []int{0, 1}, released)
	assert.Equal(t, int64(0), h.Stats().BytesReserved)
}

func TestNewHeapRejectsBadLimits(t *testing.T) {
	for _, l := range []Limits{
		{Alignment: 0, MaxBindingRange: 1024, MaxBlockSize: 4096},
		{Alignment: 24, MaxBindingRange: 1024, MaxBlockSize: 4096},
		{Alignment: 16, MaxBindingRange: 8, MaxBlockSize: 4096},
		{Alignment: 16, MaxBindingRange: 1024, MaxBlockSize: 8},
	} {
		_, err := NewHeap(l, HeapOptions{})
		assert.ErrorIs(t, err, ErrInvalid, "%+v", l)
	}
}

// TestHeapRandomized is the fuzz test's property check on a fixed pseudo-random
// stream, so that every `go test` exercises thousands of operations.
func TestHeapRandomized(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		data := make([]byte, 1+3*3000)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		// Bias toward allocation early and freeing late so the heap fills and drains.
		for i := 1; i+3 <= len(data); i += 3 {
			if i < len(data)/2 && data[i]%16 >= 7 && data[i]%16 <= 11 && rng.IntN(2) == 0 {
				data[i] = 0
			}
		}
		require.NoError(t, runOps(data), "seed %d", seed)
	}
}

// FuzzAllocFree checks, after every operation of an arbitrary stream, that no two
// live allocations overlap, all are aligned and inside their block, the free list
// is coalesced, the statistics are exact, and bad frees change nothing.
// Seed corpus: testdata/fuzz/FuzzAllocFree.
func FuzzAllocFree(f *testing.F) {
	f.Add([]byte{0, 0, 0, 100, 0, 0, 200, 7, 0, 0, 12, 0, 1})
	f.Add([]byte{5, 6, 16, 0, 0, 3, 232, 13, 0, 0, 15, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := runOps(data); err != nil {
			t.Fatal(err)
		}
	})
}
