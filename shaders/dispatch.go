package shaders

import (
	"encoding/binary"
	"fmt"
	"math"
)

// MaxGroups is the most workgroups any Dispatch here asks for in one dimension: the
// minimum every Vulkan device supports, and lavapipe's limit.
const MaxGroups = 65535

// streamGroups caps the workgroups of the streaming kernels (fill, copy, saxpy,
// reduction); their grid-stride loops cover the rest. 4096×64 invocations fill an
// H100/H200 (132 SMs × 2048 threads); on lavapipe (2 threads) 1024–4096 workgroups
// measured as fast as any other count for saxpy at 16M, and the loops amortise the
// per-workgroup cost that 65535 groups of a few elements would pay.
const streamGroups = 4096

// maxLoopIterations bounds the loop iterations one invocation may run, all loops
// together. lavapipe (Mesa 22.3) keeps one counter per invocation that every loop
// iteration decrements, nested loops included, starting at 65535, and ends all loops
// silently when it runs out: measured, a 300×300 nested loop ran 65101 inner
// iterations and a loop after it ran once. The Dispatch functions keep every shader
// below this with room to spare, raising workgroup counts where the grid-stride loops
// would need more, or return an error (only GEMMs with K near 65535 or more).
const maxLoopIterations = 60000

// nestedIterations counts the iterations of loops nested in the given order with the
// given trip counts: t0 + t0·t1 + t0·t1·t2 + ...
func nestedIterations(trips ...int) int {
	total, prod := 0, 1
	for _, t := range trips {
		prod *= t
		total += prod
	}
	return total
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// reducePartials caps the workgroups of ReduceSum's first pass, so the second pass is
// one workgroup summing at most 1024 values (16 per invocation).
const reducePartials = 1024

// Push-constant block sizes, as laid out (std430) in the .comp files.
const (
	fillPushSize   = 12 // offset, count, value
	copyPushSize   = 56 // shape uvec4, srcStride ivec4, dstStride ivec4, srcOffset, dstOffset
	saxpyPushSize  = 8  // n, a
	gemmPushSize   = 12 // M, N, K
	reducePushSize = 4  // n
)

// Dispatch is one dispatch of a shader: its push constants (exactly the shader's
// PushConstantSize bytes) and workgroup counts.
type Dispatch struct {
	Push   []byte
	Groups [3]uint32
}

func words(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

// groups returns ceil(items/per) clamped to [1, limit]: at least one workgroup, so
// that shaders which must write something for empty input (ReduceSum) do.
func groups(items, per, limit int) uint32 {
	g := (items + per - 1) / per
	return uint32(max(1, min(g, limit)))
}

// checkCount reports whether v is a valid element count or index for the uint32
// arithmetic in the shaders.
func checkCount(what string, v int) error {
	if v < 0 || v > math.MaxUint32 {
		return fmt.Errorf("shaders: %s %d out of range [0, 2^32)", what, v)
	}
	return nil
}

// FillDispatch sets words [offset, offset+count) of binding 0 to value. Push
// constants: uint offset, uint count, uint value (12 bytes). For a float fill pass
// math.Float32bits(v); for zeroing, 0.
func FillDispatch(offset, count int, value uint32) (Dispatch, error) {
	if err := checkCount("fill offset", offset); err != nil {
		return Dispatch{}, err
	}
	if err := checkCount("fill end", offset+count); err != nil || count < 0 {
		return Dispatch{}, fmt.Errorf("shaders: fill of %d words at %d: range past 2^32 words or negative", count, offset)
	}
	return Dispatch{
		Push:   words(uint32(offset), uint32(count), value),
		Groups: [3]uint32{groups((count+3)/4, 64, streamGroups), 1, 1},
	}, nil
}

// SaxpyDispatch computes y = a·x + y over n floats with Saxpy. Push constants: uint n,
// float a (8 bytes).
func SaxpyDispatch(n int, a float32) (Dispatch, error) {
	if err := checkCount("saxpy n", n); err != nil {
		return Dispatch{}, err
	}
	return Dispatch{
		Push:   words(uint32(n), math.Float32bits(a)),
		Groups: [3]uint32{groups(n, 64, streamGroups), 1, 1},
	}, nil
}

// SaxpyVec4Dispatch is SaxpyDispatch for SaxpyVec4 (same push constants; a quarter of
// the invocations). n need not be a multiple of 4.
func SaxpyVec4Dispatch(n int, a float32) (Dispatch, error) {
	if err := checkCount("saxpy n", n); err != nil {
		return Dispatch{}, err
	}
	return Dispatch{
		Push:   words(uint32(n), math.Float32bits(a)),
		Groups: [3]uint32{groups((n+3)/4, 64, streamGroups), 1, 1},
	}, nil
}

// gemmPush validates a GEMM's sizes: every index the shaders compute (row*K+k, k*N+n,
// row*N+n) must fit in uint32.
func gemmPush(m, n, k int) ([]byte, error) {
	for _, v := range []struct {
		what string
		n    int
	}{{"M", m}, {"N", n}, {"K", k}, {"M·K", m * k}, {"K·N", k * n}, {"M·N", m * n}} {
		if v.n < 0 || v.n > math.MaxUint32 {
			return nil, fmt.Errorf("shaders: sgemm %d×%d×%d: %s = %d out of range [0, 2^32)", m, n, k, v.what, v.n)
		}
	}
	return words(uint32(m), uint32(n), uint32(k)), nil
}

// gemmDispatch checks that one invocation's loops stay below maxLoopIterations: the
// block loops over rows and columns (trip counts from the workgroup counts), and the
// k loop of kTrips.
func gemmDispatch(push []byte, err error, groups [3]uint32, rowTrips, colTrips, kTrips int) (Dispatch, error) {
	if err != nil {
		return Dispatch{}, err
	}
	if it := nestedIterations(rowTrips, colTrips, kTrips); it > maxLoopIterations {
		return Dispatch{}, fmt.Errorf("shaders: sgemm needs %d loop iterations per invocation, above the %d lavapipe allows (split K)",
			it, maxLoopIterations)
	}
	return Dispatch{Push: push, Groups: groups}, nil
}

// SgemmNaiveDispatch computes C = A·B (row-major f32, A m×k, B k×n, C m×n) with
// SgemmNaive. Push constants: uint M, N, K (12 bytes); the same for every sgemm.
// K is limited to about 60000 (lavapipe's loop limit).
func SgemmNaiveDispatch(m, n, k int) (Dispatch, error) {
	push, err := gemmPush(m, n, k)
	g := [3]uint32{groups(n, 16, MaxGroups), groups(m, 4, MaxGroups), 1}
	return gemmDispatch(push, err, g, ceilDiv(m, 4*int(g[1])), ceilDiv(n, 16*int(g[0])), k)
}

// SgemmTiledDispatch is SgemmNaiveDispatch for SgemmTiled: one workgroup per 64×64
// block of C. K is limited to about 16·60000.
func SgemmTiledDispatch(m, n, k int) (Dispatch, error) {
	push, err := gemmPush(m, n, k)
	g := [3]uint32{groups(n, 64, MaxGroups), groups(m, 64, MaxGroups), 1}
	return gemmDispatch(push, err, g, ceilDiv(m, 64*int(g[1])), ceilDiv(n, 64*int(g[0])), ceilDiv(k, 16))
}

// SgemmVec4Dispatch is SgemmNaiveDispatch for SgemmVec4: one invocation per 8×8 block
// of C, 32 invocations per workgroup along N. Any sizes work; the fast vec4 path runs
// when K and N are multiples of 4 (and the bindings 16-byte aligned, as Vulkan's
// minStorageBufferOffsetAlignment makes them on every common device). K is limited
// to about 4·60000 on the fast path and 60000 otherwise.
func SgemmVec4Dispatch(m, n, k int) (Dispatch, error) {
	push, err := gemmPush(m, n, k)
	g := [3]uint32{groups(ceilDiv(n, 8), 32, MaxGroups), groups(m, 8, MaxGroups), 1}
	kTrips := k
	if k%4 == 0 && n%4 == 0 {
		kTrips = k / 4
	}
	return gemmDispatch(push, err, g, ceilDiv(m, 8*int(g[1])), ceilDiv(n, 8*32*int(g[0])), kTrips)
}

// ReduceSumDispatch plans the two-pass sum of n floats. Pass 1 reads the input at
// binding 0 and writes `partials` floats to binding 1; pass 2 reads those partials at
// binding 0 and writes the sum to element 0 of its binding 1 (a different range: a
// shader's input and output bindings must not overlap). Record a Barrier between the
// passes. Push constants: uint n (4 bytes). n = 0 gives 0.
func ReduceSumDispatch(n int) (pass1, pass2 Dispatch, partials int, err error) {
	if err := checkCount("reduce n", n); err != nil {
		return Dispatch{}, Dispatch{}, 0, err
	}
	g := groups((n+3)/4, 64, reducePartials)
	pass1 = Dispatch{Push: words(uint32(n)), Groups: [3]uint32{g, 1, 1}}
	pass2 = Dispatch{Push: words(g), Groups: [3]uint32{1, 1, 1}}
	return pass1, pass2, int(g), nil
}
