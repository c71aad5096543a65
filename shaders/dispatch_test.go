package shaders

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeWords(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

// decodeCopy splits Copy's push constants into shape, strides and offsets.
func decodeCopy(t *testing.T, push []byte) (shape [4]uint32, src, dst [4]int32, srcOff, dstOff uint32) {
	t.Helper()
	require.Len(t, push, copyPushSize)
	w := decodeWords(push)
	for i := range 4 {
		shape[i], src[i], dst[i] = w[i], int32(w[4+i]), int32(w[8+i])
	}
	return shape, src, dst, w[12], w[13]
}

func TestPushSizesMatchShaders(t *testing.T) {
	f, err := FillDispatch(1, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, []uint32{1, 2, 3}, decodeWords(f.Push))
	assert.Len(t, f.Push, Fill.PushConstantSize)

	s, err := SaxpyDispatch(10, 1.5)
	require.NoError(t, err)
	assert.Equal(t, []uint32{10, math.Float32bits(1.5)}, decodeWords(s.Push))
	assert.Len(t, s.Push, Saxpy.PushConstantSize)
	s4, err := SaxpyVec4Dispatch(10, 1.5)
	require.NoError(t, err)
	assert.Equal(t, s.Push, s4.Push)

	for _, f := range []func(m, n, k int) (Dispatch, error){SgemmNaiveDispatch, SgemmTiledDispatch, SgemmVec4Dispatch} {
		g, err := f(3, 4, 5)
		require.NoError(t, err)
		assert.Equal(t, []uint32{3, 4, 5}, decodeWords(g.Push))
		assert.Len(t, g.Push, SgemmNaive.PushConstantSize)
	}

	p1, p2, partials, err := ReduceSumDispatch(1000)
	require.NoError(t, err)
	assert.Equal(t, []uint32{1000}, decodeWords(p1.Push))
	assert.Equal(t, []uint32{uint32(partials)}, decodeWords(p2.Push))
	assert.Equal(t, [3]uint32{uint32(partials), 1, 1}, p1.Groups)
	assert.Equal(t, [3]uint32{1, 1, 1}, p2.Groups)
	assert.Len(t, p1.Push, ReduceSum.PushConstantSize)

	c, err := CopyDispatch(StridedCopy{Shape: []int{5}, SrcStride: []int{1}, DstStride: []int{1}})
	require.NoError(t, err)
	assert.Len(t, c.Push, Copy.PushConstantSize)
}

func TestGroupCounts(t *testing.T) {
	for _, n := range []int{0, 1, 64, 65, 1 << 20, 1 << 31, math.MaxUint32} {
		f, err := FillDispatch(0, n, 0)
		require.NoError(t, err)
		s, err := SaxpyDispatch(n, 1)
		require.NoError(t, err)
		s4, err := SaxpyVec4Dispatch(n, 1)
		require.NoError(t, err)
		p1, _, partials, err := ReduceSumDispatch(n)
		require.NoError(t, err)
		for _, g := range []Dispatch{f, s, s4, p1} {
			assert.GreaterOrEqual(t, g.Groups[0], uint32(1), "n=%d", n)
			assert.LessOrEqual(t, g.Groups[0], uint32(streamGroups), "n=%d", n)
			assert.Equal(t, uint32(1), g.Groups[1])
			assert.Equal(t, uint32(1), g.Groups[2])
		}
		assert.LessOrEqual(t, partials, reducePartials)
		// Grid-stride rounds per invocation stay far below lavapipe's loop limit.
		assert.LessOrEqual(t, ceilDiv(n, int(s.Groups[0])*64), maxLoopIterations, "saxpy n=%d", n)
		assert.LessOrEqual(t, ceilDiv(ceilDiv(n, 4), int(f.Groups[0])*64), maxLoopIterations, "fill n=%d", n)
	}
	s, err := SaxpyDispatch(1000, 1)
	require.NoError(t, err)
	assert.Equal(t, uint32(16), s.Groups[0])
	s4, err := SaxpyVec4Dispatch(1000, 1)
	require.NoError(t, err)
	assert.Equal(t, uint32(4), s4.Groups[0])

	g, err := SgemmNaiveDispatch(100, 50, 7)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{4, 25, 1}, g.Groups)
	g, err = SgemmTiledDispatch(100, 50, 7)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{1, 2, 1}, g.Groups)
	g, err = SgemmVec4Dispatch(100, 300, 7)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{2, 13, 1}, g.Groups)
	g, err = SgemmNaiveDispatch(1<<20, 2048, 1)
	require.NoError(t, err)
	assert.Equal(t, [3]uint32{128, MaxGroups, 1}, g.Groups)
}

func TestDispatchErrors(t *testing.T) {
	_, err := FillDispatch(-1, 1, 0)
	assert.Error(t, err)
	_, err = FillDispatch(0, -1, 0)
	assert.Error(t, err)
	_, err = FillDispatch(math.MaxUint32, 2, 0)
	assert.Error(t, err, "range past 2^32 words")
	_, err = SaxpyDispatch(-1, 0)
	assert.Error(t, err)
	_, err = SaxpyVec4Dispatch(1<<32, 0)
	assert.Error(t, err)
	_, _, _, err = ReduceSumDispatch(-5)
	assert.Error(t, err)
	_, err = SgemmNaiveDispatch(1<<16, 1<<16, 1)
	assert.Error(t, err, "M·N overflows uint32 indices")
	_, err = SgemmTiledDispatch(-1, 2, 2)
	assert.Error(t, err)

	// lavapipe's loop limit bounds K.
	_, err = SgemmNaiveDispatch(4, 4, 59_990)
	assert.NoError(t, err)
	_, err = SgemmNaiveDispatch(4, 4, 70_000)
	assert.ErrorContains(t, err, "split K")
	_, err = SgemmVec4Dispatch(4, 4, 200_000)
	assert.NoError(t, err, "fast path: K/4 steps")
	_, err = SgemmVec4Dispatch(4, 4, 70_001)
	assert.Error(t, err, "general path: K steps")
	_, err = SgemmTiledDispatch(4, 4, 900_000)
	assert.NoError(t, err)
	_, err = SgemmTiledDispatch(4, 4, 1_000_000)
	assert.Error(t, err)
}

func TestCopyCanonical(t *testing.T) {
	cases := []struct {
		name                 string
		c                    StridedCopy
		shape                [4]uint32
		src, dst             [4]int32
		srcOffset, dstOffset uint32
	}{
		{"row-major 6-D merges into one dimension",
			StridedCopy{Shape: []int{2, 3, 1, 4, 5, 6}, SrcStride: []int{360, 120, 999, 30, 6, 1}, DstStride: []int{360, 120, 7, 30, 6, 1}, SrcOffset: 3, DstOffset: 4},
			[4]uint32{1, 1, 1, 720}, [4]int32{0, 0, 0, 1}, [4]int32{0, 0, 0, 1}, 3, 4},
		{"transpose keeps a long inner dimension",
			StridedCopy{Shape: []int{67, 130}, SrcStride: []int{130, 1}, DstStride: []int{1, 67}},
			[4]uint32{1, 1, 67, 130}, [4]int32{0, 0, 130, 1}, [4]int32{0, 0, 1, 67}, 0, 0},
		{"a short inner dimension swaps with the longest",
			StridedCopy{Shape: []int{1000, 3}, SrcStride: []int{3, 1}, DstStride: []int{1, 1000}},
			[4]uint32{1, 1, 3, 1000}, [4]int32{0, 0, 1, 3}, [4]int32{0, 0, 1000, 1}, 0, 0},
		{"broadcast merges zero strides",
			StridedCopy{Shape: []int{4, 5, 6}, SrcStride: []int{0, 0, 0}, DstStride: []int{30, 6, 1}, SrcOffset: 9},
			[4]uint32{1, 1, 1, 120}, [4]int32{0, 0, 0, 0}, [4]int32{0, 0, 0, 1}, 9, 0},
		{"rank 0 copies one element",
			StridedCopy{SrcOffset: 2, DstOffset: 3},
			[4]uint32{1, 1, 1, 1}, [4]int32{}, [4]int32{}, 2, 3},
		{"a zero extent copies nothing",
			StridedCopy{Shape: []int{3, 0}, SrcStride: []int{1, 1}, DstStride: []int{1, 1}},
			[4]uint32{}, [4]int32{}, [4]int32{}, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := CopyDispatch(c.c)
			require.NoError(t, err)
			shape, src, dst, so, do := decodeCopy(t, g.Push)
			assert.Equal(t, c.shape, shape)
			assert.Equal(t, c.src, src)
			assert.Equal(t, c.dst, dst)
			assert.Equal(t, c.srcOffset, so)
			assert.Equal(t, c.dstOffset, do)
		})
	}
}

func TestCopyErrors(t *testing.T) {
	for name, c := range map[string]StridedCopy{
		"stride rank":      {Shape: []int{2, 2}, SrcStride: []int{1}, DstStride: []int{2, 1}},
		"negative extent":  {Shape: []int{-2}, SrcStride: []int{1}, DstStride: []int{1}},
		"rank 5":           {Shape: []int{2, 2, 2, 2, 2}, SrcStride: []int{1, 2, 4, 8, 16}, DstStride: []int{16, 8, 4, 2, 1}},
		"negative index":   {Shape: []int{10}, SrcStride: []int{-1}, DstStride: []int{1}, SrcOffset: 8},
		"index past int32": {Shape: []int{3}, SrcStride: []int{1 << 30}, DstStride: []int{1}},
		"2^32 elements":    {Shape: []int{1 << 16, 1 << 16}, SrcStride: []int{0, 0}, DstStride: []int{0, 0}},
	} {
		_, err := CopyDispatch(c)
		assert.Error(t, err, name)
	}
}

// TestCopyLoopBudget checks, over random large shapes, that the workgroup counts stay
// within the device limit and keep every invocation below lavapipe's loop limit.
func TestCopyLoopBudget(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 20000 {
		var shape [4]uint32
		total := 1
		for i := range shape {
			shape[i] = uint32(1 + r.IntN(1<<uint(r.IntN(20))))
			total = min(total*int(shape[i]), 1<<40) // no int overflow
		}
		if total > math.MaxUint32 {
			continue
		}
		// As CopyDispatch arranges: a short innermost extent is the longest one.
		if longest := slices.Index(shape[:], slices.Max(shape[:])); shape[3] < 64 {
			shape[3], shape[longest] = shape[longest], shape[3]
		}
		g, err := copyGroups(shape)
		require.NoError(t, err, "shape %v", shape)
		for _, n := range g {
			require.True(t, n >= 1 && n <= MaxGroups, "shape %v groups %v", shape, g)
		}
		it := nestedIterations(ceilDiv(int(shape[0])*int(shape[1]), int(g[2])), ceilDiv(int(shape[2]), int(g[1])),
			ceilDiv(int(shape[3]), 64*int(g[0])))
		require.LessOrEqual(t, it, maxLoopIterations, "shape %v groups %v", shape, g)
	}
}
