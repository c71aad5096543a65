package arena

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

//go:generate glslc -O --target-env=vulkan1.1 testdata/add_one.comp -o testdata/add_one.spv

// newArena opens the device (validation on) and an arena on it, closed at cleanup
// before the device, so the layer would report any object the arena leaked.
func newArena(t testing.TB, o Options) (*device.Device, *Arena) {
	t.Helper()
	d := devicetest.Open(t)
	a, err := New(d, o)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, a.Close()) })
	return d, a
}

func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(rng.Uint32())
	}
	return p
}

// stagingModes runs f with memory mapped (lavapipe's only kind) and with every
// transfer forced through the staging buffer, in pieces smaller than the data.
func stagingModes(t *testing.T, f func(t *testing.T, d *device.Device, a *Arena)) {
	t.Run("mapped", func(t *testing.T) {
		d, a := newArena(t, Options{})
		f(t, d, a)
	})
	t.Run("staged", func(t *testing.T) {
		d, a := newArena(t, Options{StagingSize: 4096})
		a.xfer.force = true
		f(t, d, a)
	})
}

func TestArenaLimitsFromDevice(t *testing.T) {
	d, a := newArena(t, Options{Limits: Limits{MaxBindingRange: 4096}})
	c := d.Caps()
	l := a.Limits()
	assert.Equal(t, max(c.MinStorageBufferOffsetAlignment, MinAlignment), l.Alignment)
	assert.Equal(t, int64(4096), l.MaxBindingRange, "the override is smaller than the device's range")
	assert.Equal(t, c.MaxMemoryAllocationSize, l.MaxBlockSize)
	assert.Zero(t, l.Alignment%c.MinStorageBufferOffsetAlignment)
}

func TestArenaPlannedRoundTrip(t *testing.T) {
	d := devicetest.Open(t)
	p := &Plan{Ranges: []PlanRange{
		{Name: "a", Offset: 0, Size: 1000},
		{Name: "b", Offset: 1008, Size: 333},
		{Name: "c", Offset: 0, Size: 64}, // shares a's bytes (disjoint lifetimes)
		{Name: "d", Block: 1, Offset: 4096, Size: 4},
		{Name: "empty", Block: 2, Offset: 0, Size: 0}, // a block no bytes need
	}}
	a, err := NewPlanned(d, p, Options{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, a.Close()) }()

	s := a.Stats()
	assert.Equal(t, int64(1344+4112), s.BytesReserved, "each block is its plan size rounded up to the alignment")
	assert.Equal(t, s.BytesReserved, s.BytesInUse)
	assert.Equal(t, 2, s.NumBlocks)
	assert.Equal(t, int64(0), s.LargestFreeBlock, "planned blocks have no slack")
	assert.Equal(t, int64(1008), a.PlanRange(1).Offset(), "plan offsets are honoured")
	assert.Equal(t, a.PlanRange(0).Buffer(), a.PlanRange(2).Buffer())
	assert.NotEqual(t, a.PlanRange(0).Buffer(), a.PlanRange(3).Buffer())

	ctx := context.Background()
	for i, seed := range []uint64{1, 2, 4} {
		r := a.PlanRange([]int{0, 1, 3}[i])
		want := randomBytes(int(r.Size()), seed)
		require.NoError(t, a.Upload(ctx, r, want))
		got := make([]byte, r.Size())
		require.NoError(t, a.Download(ctx, r, got))
		assert.Equal(t, want, got, r.String())
	}
	got := make([]byte, 64)
	require.NoError(t, a.Download(ctx, a.PlanRange(2), got))
	assert.Equal(t, randomBytes(1000, 1)[:64], got, "c aliases a's first bytes")
	assert.Zero(t, a.PlanRange(4).Size())
	assert.NoError(t, a.Zero(ctx, a.PlanRange(4)))
	assert.NoError(t, a.Upload(ctx, a.PlanRange(4), nil))
}

func TestArenaNewPlannedRejectsBadPlan(t *testing.T) {
	d := devicetest.Open(t)
	_, err := NewPlanned(d, &Plan{Ranges: []PlanRange{{Name: "x", Offset: 8, Size: 16}}}, Options{})
	require.ErrorIs(t, err, ErrMisaligned)
	assert.Contains(t, err.Error(), `"x"`)
}

func TestArenaUploadDownloadAtOffsets(t *testing.T) {
	stagingModes(t, func(t *testing.T, d *device.Device, a *Arena) {
		ctx := context.Background()
		x, err := a.Alloc(20000)
		require.NoError(t, err)
		whole := randomBytes(20000, 3)
		require.NoError(t, a.Upload(ctx, x.Range, whole[:16]), "a small staging buffer first, grown next")
		require.NoError(t, a.Upload(ctx, x.Range, whole))
		for _, c := range []struct{ off, size int64 }{{0, 16}, {16, 4096}, {4112, 10000}, {3, 77}, {19999, 1}} {
			sub, err := x.Sub(c.off, c.size)
			require.NoError(t, err)
			part := randomBytes(int(c.size), uint64(c.off))
			require.NoError(t, a.Upload(ctx, sub, part))
			copy(whole[c.off:], part)
			got := make([]byte, c.size)
			require.NoError(t, a.Download(ctx, sub, got))
			assert.Equal(t, part, got, "offset %d", c.off)
		}
		got := make([]byte, 20000)
		require.NoError(t, a.Download(ctx, x.Range, got))
		assert.True(t, bytes.Equal(whole, got), "bytes around each sub-range are untouched")
	})
}

func TestArenaZero(t *testing.T) {
	stagingModes(t, func(t *testing.T, d *device.Device, a *Arena) {
		ctx := context.Background()
		x, err := a.Alloc(300)
		require.NoError(t, err)
		ones := bytes.Repeat([]byte{0xff}, 300)
		require.NoError(t, a.Upload(ctx, x.Range, ones))

		sub, err := x.Sub(5, 250) // unaligned at both ends
		require.NoError(t, err)
		require.NoError(t, a.Zero(ctx, sub))
		tiny, err := x.Sub(281, 2) // within one 4-byte word
		require.NoError(t, err)
		require.NoError(t, a.Zero(ctx, tiny))

		want := bytes.Repeat([]byte{0xff}, 300)
		clear(want[5:255])
		clear(want[281:283])
		got := make([]byte, 300)
		require.NoError(t, a.Download(ctx, x.Range, got))
		assert.Equal(t, want, got)
	})
}

func TestArenaRecordZero(t *testing.T) {
	d, a := newArena(t, Options{})
	ctx := context.Background()
	x, err := a.Alloc(30) // not a whole number of words
	require.NoError(t, err)
	require.NoError(t, a.Upload(ctx, x.Range, bytes.Repeat([]byte{1}, 30)))
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	require.NoError(t, cb.Begin())
	require.NoError(t, a.RecordZero(cb, x.Range))
	require.NoError(t, cb.End())
	for range 3 { // recorded once, replayed
		require.NoError(t, d.Submit(ctx, cb))
	}
	got := make([]byte, 30)
	require.NoError(t, a.Download(ctx, x.Range, got))
	assert.Equal(t, make([]byte, 30), got)

	sub, err := x.Sub(2, 8)
	require.NoError(t, err)
	require.NoError(t, cb.Begin())
	assert.ErrorIs(t, a.RecordZero(cb, sub), ErrMisaligned)
	require.NoError(t, cb.End())
}

// addOne is testdata/add_one.comp: dst[i] = src[i] + 1 for i < n (push constant).
func addOne(t testing.TB, d *device.Device) *device.Kernel {
	t.Helper()
	spv, err := os.ReadFile("testdata/add_one.spv")
	require.NoError(t, err)
	k, err := d.NewKernel(spv, device.KernelSpec{Bindings: 2, PushConstantSize: 4})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, k.Close()) })
	return k
}

func words(n int, f func(i int) uint32) []byte {
	p := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(p[4*i:], f(i))
	}
	return p
}

// TestArenaBindingsSplitDispatch splits two 10000-byte ranges into bindings of at
// most 4096 bytes (a small fake maxStorageBufferRange) and runs a kernel over each
// pair of pieces: the pieces cover the ranges exactly, in order, at offsets the
// device and the validation layer accept.
func TestArenaBindingsSplitDispatch(t *testing.T) {
	d, a := newArena(t, Options{Limits: Limits{MaxBindingRange: 4096}})
	k := addOne(t, d)
	ctx := context.Background()
	const n = 2500 // words
	src, err := a.Alloc(4 * n)
	require.NoError(t, err)
	dst, err := a.Alloc(4 * n)
	require.NoError(t, err)
	require.NoError(t, a.Upload(ctx, src.Range, words(n, func(i int) uint32 { return uint32(i * 3) })))

	sb, err := a.Bindings(src.Range, 4)
	require.NoError(t, err)
	db, err := a.Bindings(dst.Range, 4)
	require.NoError(t, err)
	require.Len(t, sb, 3)
	assert.Equal(t, []int64{4096, 4096, 1808}, []int64{sb[0].Size, sb[1].Size, sb[2].Size})

	runPieces(t, d, k, sb, db)
	got := make([]byte, 4*n)
	require.NoError(t, a.Download(ctx, dst.Range, got))
	assert.Equal(t, words(n, func(i int) uint32 { return uint32(i*3 + 1) }), got)
}

// runPieces dispatches add_one over each (src, dst) binding pair in one submission.
func runPieces(t testing.TB, d *device.Device, k *device.Kernel, src, dst []device.BufferRange) {
	t.Helper()
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	require.NoError(t, cb.Begin())
	for i := range src {
		push := binary.LittleEndian.AppendUint32(nil, uint32(min(src[i].Size, dst[i].Size)/4))
		require.NoError(t, cb.Dispatch(k, []device.BufferRange{src[i], dst[i]}, push, 16, 1, 1))
	}
	require.NoError(t, cb.End())
	require.NoError(t, d.Submit(context.Background(), cb))
}

// TestArenaBindingsRealLimit binds a range just past the device's real
// maxStorageBufferRange (128 MiB on lavapipe): the first piece is a binding of
// exactly the maximum, which the validation layer accepts, and the second starts
// at an aligned offset. Only a few KiB of the range are written or read.
func TestArenaBindingsRealLimit(t *testing.T) {
	d, a := newArena(t, Options{})
	maxRange := a.Limits().MaxBindingRange
	if maxRange > 1<<30 {
		t.Skipf("maxStorageBufferRange %d: a range past it is too big for a unit test", maxRange)
	}
	k := addOne(t, d)
	ctx := context.Background()
	big, err := a.Alloc(maxRange + 8192)
	require.NoError(t, err)
	out, err := a.Alloc(8192)
	require.NoError(t, err)
	parts, err := a.Bindings(big.Range, 4)
	require.NoError(t, err)
	require.Len(t, parts, 2)
	assert.Equal(t, maxRange, parts[0].Size)
	assert.Equal(t, int64(8192), parts[1].Size)

	tail, err := big.Sub(maxRange, 8192)
	require.NoError(t, err)
	require.NoError(t, a.Upload(ctx, tail, words(2048, func(i int) uint32 { return uint32(i) })))
	runPieces(t, d, k, parts[1:], []device.BufferRange{out.BufferRange()})
	got := make([]byte, 8192)
	require.NoError(t, a.Download(ctx, out.Range, got))
	assert.Equal(t, words(2048, func(i int) uint32 { return uint32(i + 1) }), got)

	_, err = a.Bindings(big.Range, 3*maxRange) // a granule no binding can hold
	assert.ErrorIs(t, err, ErrBindingTooLarge)
}

func TestArenaStatsAndClose(t *testing.T) {
	d := devicetest.Open(t)
	a, err := New(d, Options{BlockSize: 1 << 16})
	require.NoError(t, err)
	ctx := context.Background()
	x, err := a.Alloc(1000)
	require.NoError(t, err)
	y, err := a.Alloc(1 << 17) // larger than a block: a block of its own
	require.NoError(t, err)
	require.NoError(t, a.Upload(ctx, y.Range, make([]byte, 8)))
	a.xfer.force = true
	require.NoError(t, a.Upload(ctx, x.Range, make([]byte, 8)), "makes the staging buffer and command buffer")

	s := a.Stats()
	assert.Equal(t, Stats{BytesInUse: 1008 + 1<<17, PeakBytesInUse: 1008 + 1<<17, LargestAllocSize: 1 << 17,
		BytesReserved: 1<<16 + 1<<17, PeakBytesReserved: 1<<16 + 1<<17, NumAllocs: 2, TotalAllocs: 2,
		NumBlocks: 2, LargestFreeBlock: 1<<16 - 1008}, s)
	require.NoError(t, a.Free(y))
	assert.ErrorIs(t, a.Free(y), ErrBadFree)
	released, err := a.Trim()
	require.NoError(t, err)
	assert.Equal(t, int64(1<<17), released)
	a.ResetPeak()
	assert.Equal(t, int64(1008), a.Stats().PeakBytesInUse)

	require.NoError(t, a.Close())
	assert.Equal(t, int64(0), a.Stats().BytesReserved)
	assert.ErrorIs(t, x.Buffer().Write(0, []byte{1}), device.ErrClosed, "Close freed the block's buffer")
	assert.ErrorIs(t, a.Upload(ctx, x.Range, []byte{1}), ErrClosed)
	_, err = a.Alloc(16)
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, a.Free(x), ErrClosed)
	assert.NoError(t, a.Close(), "a second Close does nothing")
	assert.Nil(t, a.xfer.cb)
	assert.Nil(t, a.xfer.staging)
}

func TestArenaPoolPlacesPlans(t *testing.T) {
	_, a := newArena(t, Options{BlockSize: 1 << 16})
	p := &Plan{Ranges: []PlanRange{{Offset: 0, Size: 100}, {Offset: 112, Size: 200}}}
	p1, err := a.Place(p)
	require.NoError(t, err)
	p2, err := a.Place(p)
	require.NoError(t, err)
	assert.Equal(t, 1, a.Stats().NumBlocks, "both plans fit one pool block")
	assert.Equal(t, p1.Range(0).Offset()+320, p2.Range(0).Offset())
	assert.Equal(t, p2.Range(0).Offset()+112, p2.Range(1).Offset())
	assert.Equal(t, 2, p1.Len())

	require.NoError(t, p1.Free())
	p3, err := a.Place(p)
	require.NoError(t, err)
	assert.Equal(t, p1.Range(0).Offset(), p3.Range(0).Offset(), "the freed plan's memory is reused")
	require.NoError(t, p2.Free())
	require.NoError(t, p3.Free())
	assert.Equal(t, int64(0), a.Stats().BytesInUse)
}

func TestArenaRejectsForeignAndOversize(t *testing.T) {
	d, a := newArena(t, Options{Limit: 1 << 20})
	b, err := New(d, Options{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, b.Close()) }()
	ctx := context.Background()
	x, err := a.Alloc(64)
	require.NoError(t, err)
	y, err := b.Alloc(64)
	require.NoError(t, err)

	assert.ErrorIs(t, a.Free(y), ErrBadFree)
	assert.ErrorIs(t, a.Upload(ctx, y.Range, []byte{1}), ErrInvalid, "a range of another arena")
	assert.ErrorIs(t, a.Upload(ctx, x.Range, make([]byte, 65)), ErrInvalid)
	assert.ErrorIs(t, a.Download(ctx, Range{}, make([]byte, 1)), ErrInvalid)
	for _, c := range [][2]int64{{60, 8}, {-1, 1}, {65, 0}, {0, -1}, {1, 1 << 62}} {
		_, err := x.Sub(c[0], c[1])
		assert.ErrorIs(t, err, ErrInvalid, "Sub(%d, %d)", c[0], c[1])
	}
	_, err = a.Alloc(2 << 20)
	assert.ErrorIs(t, err, ErrOutOfMemory)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, a.Upload(cancelled, x.Range, []byte{1}), context.Canceled)
}

// TestArenaConcurrent allocates, transfers and frees from several goroutines (run
// with -race in CI).
func TestArenaConcurrent(t *testing.T) {
	_, a := newArena(t, Options{BlockSize: 1 << 16})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				n := 16 + (g*50+i)%700
				x, err := a.Alloc(int64(n))
				if !assert.NoError(t, err) {
					return
				}
				want := randomBytes(n, uint64(g*1000+i))
				got := make([]byte, n)
				assert.NoError(t, a.Upload(ctx, x.Range, want))
				assert.NoError(t, a.Download(ctx, x.Range, got))
				assert.Equal(t, want, got)
				assert.NoError(t, a.Free(x))
			}
		})
	}
	wg.Wait()
	s := a.Stats()
	assert.Equal(t, int64(0), s.BytesInUse)
	assert.Equal(t, int64(200), s.TotalAllocs)
}

// TestArenaLargeMappedTransfer moves 9 MiB, which the mapped path splits across
// goroutines (GOMAXPROCS permitting), at an unaligned offset.
func TestArenaLargeMappedTransfer(t *testing.T) {
	_, a := newArena(t, Options{})
	ctx := context.Background()
	x, err := a.Alloc(9<<20 + 100)
	require.NoError(t, err)
	sub, err := x.Sub(3, 9<<20+97)
	require.NoError(t, err)
	want := randomBytes(int(sub.Size()), 9)
	require.NoError(t, a.Upload(ctx, sub, want))
	got := make([]byte, sub.Size())
	require.NoError(t, a.Download(ctx, sub, got))
	assert.True(t, bytes.Equal(want, got))
}
