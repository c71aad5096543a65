package shaders_test

// Every shader against a Go computation on the device (lavapipe in CI) with the
// validation layer on. Each shader also runs with a single workgroup, so that its
// grid-stride loops take many iterations even at test sizes.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/shaders"
)

// sentinel marks words a shader must not touch.
const sentinel = 0xdeadbeef

// u is the unit roundoff of float32.
const u = 1.0 / (1 << 24)

func randF32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	return v
}

// randInts returns integers in [-2, 2] as float32.
func randInts(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(5) - 2)
	}
	return v
}

func filled(n int, w uint32) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = w
	}
	return v
}

func newKernel(t testing.TB, d *device.Device, s shaders.Shader) *device.Kernel {
	t.Helper()
	k, err := d.NewKernel(s.SPIRV, device.KernelSpec{
		EntryPoint: s.EntryPoint, Bindings: s.Bindings, PushConstantSize: s.PushConstantSize,
	})
	require.NoError(t, err, s.Name)
	t.Cleanup(func() { k.Close() })
	return k
}

// newBuffer creates a buffer holding data.
func newBuffer(t testing.TB, d *device.Device, data []byte) *device.Buffer {
	t.Helper()
	b, err := d.NewBuffer(int64(len(data)))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	require.NoError(t, b.Write(0, data))
	return b
}

func readU32(t testing.TB, b *device.Buffer) []uint32 {
	t.Helper()
	out := make([]byte, b.Size())
	require.NoError(t, b.Read(0, out))
	return devicetest.BytesU32(out)
}

func readF32(t testing.TB, b *device.Buffer) []float32 {
	t.Helper()
	out := make([]byte, b.Size())
	require.NoError(t, b.Read(0, out))
	return devicetest.BytesF32(out)
}

// step is one dispatch of a recording.
type step struct {
	k        *device.Kernel
	bindings []device.BufferRange
	g        shaders.Dispatch
}

// run records the steps, submits and waits.
func run(t testing.TB, d *device.Device, steps ...step) {
	t.Helper()
	cb, err := d.NewCommandBuffer()
	require.NoError(t, err)
	defer cb.Close()
	record(t, cb, steps...)
	require.NoError(t, d.Submit(context.Background(), cb))
}

// record records the steps into cb with a barrier between each two.
func record(t testing.TB, cb *device.CommandBuffer, steps ...step) {
	t.Helper()
	require.NoError(t, cb.Begin())
	for i, s := range steps {
		if i > 0 {
			require.NoError(t, cb.Barrier())
		}
		require.NoError(t, cb.Dispatch(s.k, s.bindings, s.g.Push, s.g.Groups[0], s.g.Groups[1], s.g.Groups[2]))
	}
	require.NoError(t, cb.End())
}

// oneGroup is g with a single workgroup.
func oneGroup(g shaders.Dispatch) shaders.Dispatch {
	return shaders.Dispatch{Push: g.Push, Groups: [3]uint32{1, 1, 1}}
}

func TestFill(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, shaders.Fill)
	const n = 1000
	cases := []struct{ offset, count int }{
		{0, n}, {0, 0}, {5, 0}, {0, 1}, {1, 1}, {3, 1}, {1, 2}, {2, 3}, {5, 2}, {4, 4},
		{3, 5}, {1, 7}, {7, 993}, {13, 600}, {996, 4}, {999, 1},
	}
	for _, c := range cases {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("offset=%d/count=%d/oneGroup=%v", c.offset, c.count, single), func(t *testing.T) {
				buf := newBuffer(t, d, devicetest.U32Bytes(filled(n, sentinel)...))
				g, err := shaders.FillDispatch(c.offset, c.count, 0x01020304)
				require.NoError(t, err)
				if single {
					g = oneGroup(g)
				}
				run(t, d, step{k, []device.BufferRange{{Buffer: buf}}, g})
				want := filled(n, sentinel)
				for i := c.offset; i < c.offset+c.count; i++ {
					want[i] = 0x01020304
				}
				assert.Equal(t, want, readU32(t, buf))
			})
		}
	}
}

// TestFillLarge covers several grid-stride rounds with the dispatch's own workgroup
// count, in a binding that starts 256 bytes into its buffer (offsets are relative to
// the bound range).
func TestFillLarge(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, shaders.Fill)
	const n, skip = 3<<20 + 5, 64 // words; skip words before the binding
	buf := newBuffer(t, d, devicetest.U32Bytes(filled(n+skip, sentinel)...))
	g, err := shaders.FillDispatch(3, n-3, 0)
	require.NoError(t, err)
	require.Less(t, int(g.Groups[0])*64*4, n, "the test must need more than one round")
	run(t, d, step{k, []device.BufferRange{{Buffer: buf, Offset: 4 * skip}}, g})
	got := readU32(t, buf)
	for i, w := range got {
		want := uint32(sentinel)
		if i >= skip+3 {
			want = 0
		}
		if w != want {
			require.Equal(t, want, w, "word %d", i)
		}
	}
}

func TestCopy(t *testing.T) {
	d := devicetest.Open(t)
	k := newKernel(t, d, shaders.Copy)
	r := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		c    shaders.StridedCopy
	}{
		{"contiguous", rowMajorCopy([]int{1000}, 0, 0)},
		{"offsets", rowMajorCopy([]int{777}, 13, 101)},
		{"strided1d", shaders.StridedCopy{Shape: []int{500}, SrcStride: []int{3}, DstStride: []int{2}, SrcOffset: 1, DstOffset: 5}},
		{"reverse", shaders.StridedCopy{Shape: []int{1000}, SrcStride: []int{-1}, DstStride: []int{1}, SrcOffset: 999}},
		{"transpose", transposeCopy(67, 130)},
		{"transposeTall", transposeCopy(1000, 3)},
		{"broadcastRow", shaders.StridedCopy{Shape: []int{40, 33}, SrcStride: []int{0, 1}, DstStride: []int{33, 1}}},
		{"broadcastCol", shaders.StridedCopy{Shape: []int{40, 33}, SrcStride: []int{1, 0}, DstStride: []int{33, 1}}},
		{"slice3d", shaders.StridedCopy{Shape: []int{5, 6, 7}, SrcStride: []int{200, 20, 2}, DstStride: []int{42, 7, 1}, SrcOffset: 3}},
		{"permute4d", permuteCopy([]int{3, 5, 7, 11}, []int{2, 0, 3, 1})},
		{"mergeable6d", rowMajorCopy([]int{2, 3, 1, 4, 5, 6}, 0, 0)},
		{"subview6d", shaders.StridedCopy{Shape: []int{2, 3, 4, 5, 1, 6}, SrcStride: []int{720, 240, 60, 12, 7, 2},
			DstStride: []int{360, 120, 30, 6, 6, 1}}},
		{"empty", shaders.StridedCopy{Shape: []int{4, 0, 3}, SrcStride: []int{3, 3, 1}, DstStride: []int{3, 3, 1}}},
		{"scalar", shaders.StridedCopy{Shape: []int{}, SrcStride: []int{}, DstStride: []int{}, SrcOffset: 7, DstOffset: 2}},
	}
	for i := range 6 {
		cases = append(cases, struct {
			name string
			c    shaders.StridedCopy
		}{fmt.Sprintf("random%d", i), randomCopy(r)})
	}
	for _, c := range cases {
		for _, single := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/oneGroup=%v", c.name, single), func(t *testing.T) {
				g, err := shaders.CopyDispatch(c.c)
				require.NoError(t, err)
				if single {
					g = oneGroup(g)
				}
				srcLen, dstLen := extent(c.c.Shape, c.c.SrcStride, c.c.SrcOffset), extent(c.c.Shape, c.c.DstStride, c.c.DstOffset)
				src := make([]uint32, srcLen)
				for i := range src {
					src[i] = uint32(i)*2654435761 + 1
				}
				sb := newBuffer(t, d, devicetest.U32Bytes(src...))
				db := newBuffer(t, d, devicetest.U32Bytes(filled(dstLen, sentinel)...))
				run(t, d, step{k, []device.BufferRange{{Buffer: sb}, {Buffer: db}}, g})
				assert.Equal(t, refCopy(c.c, src, dstLen), readU32(t, db))
			})
		}
	}
}

// refCopy is the Go definition of a strided copy.
func refCopy(c shaders.StridedCopy, src []uint32, dstLen int) []uint32 {
	dst := filled(dstLen, sentinel)
	idx := make([]int, len(c.Shape))
	for _, n := range c.Shape {
		if n == 0 {
			return dst
		}
	}
	for {
		s, t := c.SrcOffset, c.DstOffset
		for d, i := range idx {
			s += i * c.SrcStride[d]
			t += i * c.DstStride[d]
		}
		dst[t] = src[s]
		d := len(idx) - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < c.Shape[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return dst
		}
	}
}

// extent is one more than the largest index an access reaches (at least 1, plus a
// few words of margin so that writes past it would show).
func extent(shape, stride []int, offset int) int {
	hi := offset
	for d, n := range shape {
		if n > 0 && stride[d] > 0 {
			hi += (n - 1) * stride[d]
		}
	}
	return hi + 1 + 5
}

func rowMajor(shape []int) []int {
	s := make([]int, len(shape))
	acc := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s[d] = acc
		acc *= shape[d]
	}
	return s
}

func rowMajorCopy(shape []int, srcOff, dstOff int) shaders.StridedCopy {
	return shaders.StridedCopy{Shape: shape, SrcStride: rowMajor(shape), DstStride: rowMajor(shape), SrcOffset: srcOff, DstOffset: dstOff}
}

// transposeCopy writes the m×n row-major source as its n×m transpose.
func transposeCopy(m, n int) shaders.StridedCopy {
	return shaders.StridedCopy{Shape: []int{m, n}, SrcStride: []int{n, 1}, DstStride: []int{1, m}}
}

// permuteCopy copies a row-major source of shape into a destination whose dimension
// perm[i] is the source's dimension i... that is, dst = transpose(src, perm).
func permuteCopy(shape, perm []int) shaders.StridedCopy {
	dstShape := make([]int, len(shape))
	for i, p := range perm {
		dstShape[i] = shape[p]
	}
	dstRM := rowMajor(dstShape)
	dstStride := make([]int, len(shape))
	for i, p := range perm {
		dstStride[p] = dstRM[i]
	}
	return shaders.StridedCopy{Shape: shape, SrcStride: rowMajor(shape), DstStride: dstStride}
}

// randomCopy draws a rank-1..4 copy: the destination a random permutation of a dense
// layout (so no two elements collide), the source random strides of either sign, zero
// included, with the offset that keeps every index non-negative.
func randomCopy(r *rand.Rand) shaders.StridedCopy {
	rank := 1 + r.IntN(4)
	shape := make([]int, rank)
	for i := range shape {
		shape[i] = 1 + r.IntN(9)
	}
	shape[r.IntN(rank)] = 1 + r.IntN(200)
	c := permuteCopy(shape, r.Perm(rank))
	c.SrcStride = make([]int, rank)
	for i := range c.SrcStride {
		c.SrcStride[i] = r.IntN(41) - 20
		if c.SrcStride[i] < 0 {
			c.SrcOffset -= (shape[i] - 1) * c.SrcStride[i]
		}
	}
	c.SrcOffset += r.IntN(4)
	c.DstOffset = r.IntN(4)
	return c
}

// saxpyTolerance bounds |got - want| for one a·x + y in float32, fused or not, against
// the exact value: two roundings.
func saxpyTolerance(a, x, y float32) float64 {
	return 2 * u * (math.Abs(float64(a)*float64(x)) + math.Abs(float64(y)))
}

func TestSaxpy(t *testing.T) {
	d := devicetest.Open(t)
	r := rand.New(rand.NewPCG(3, 4))
	variants := []struct {
		s        shaders.Shader
		dispatch func(int, float32) (shaders.Dispatch, error)
	}{
		{shaders.Saxpy, shaders.SaxpyDispatch},
		{shaders.SaxpyVec4, shaders.SaxpyVec4Dispatch},
	}
	for _, v := range variants {
		k := newKernel(t, d, v.s)
		for _, n := range []int{0, 1, 3, 4, 5, 1000, 99_999, 100_000} {
			for _, single := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/n=%d/oneGroup=%v", v.s.Name, n, single), func(t *testing.T) {
					const a = float32(-2.5)
					x, y := randF32(r, n+4), randF32(r, n+4) // 4 past n must stay
					xb, yb := newBuffer(t, d, devicetest.F32Bytes(x...)), newBuffer(t, d, devicetest.F32Bytes(y...))
					g, err := v.dispatch(n, a)
					require.NoError(t, err)
					if single {
						g = oneGroup(g)
					}
					run(t, d, step{k, []device.BufferRange{{Buffer: xb}, {Buffer: yb}}, g})
					got := readF32(t, yb)
					for i := range got {
						if i >= n {
							require.Equal(t, y[i], got[i], "element %d past n", i)
							continue
						}
						want := float64(a)*float64(x[i]) + float64(y[i])
						if math.Abs(float64(got[i])-want) > saxpyTolerance(a, x[i], y[i]) {
							require.InDelta(t, want, got[i], saxpyTolerance(a, x[i], y[i]), "element %d", i)
						}
					}
				})
			}
		}
	}
}

// TestSgemm compares each GEMM with a float64 product. Tolerance: a dot product of
// length K summed in float32 in any order, fused or not, is within
// K·u·Σₖ|aᵢₖ·bₖⱼ| of the exact value (u = 2⁻²⁴, the standard bound γ_K); the test
// allows twice that.
func TestSgemm(t *testing.T) {
	d := devicetest.Open(t)
	r := rand.New(rand.NewPCG(5, 6))
	variants := []struct {
		s        shaders.Shader
		dispatch func(m, n, k int) (shaders.Dispatch, error)
	}{
		{shaders.SgemmNaive, shaders.SgemmNaiveDispatch},
		{shaders.SgemmTiled, shaders.SgemmTiledDispatch},
		{shaders.SgemmVec4, shaders.SgemmVec4Dispatch},
	}
	sizes := [][3]int{ // M, N, K
		{64, 64, 64},   // whole tiles, vec4 fast path
		{65, 67, 69},   // everything odd: general path
		{130, 128, 96}, // odd M, fast path
		{127, 132, 130},
		{128, 130, 64},
		{1, 1, 1},
		{3, 5, 7},
		{8, 4, 1},
		{70, 9, 2},
		{2, 3, 0}, // K = 0: C = 0
	}
	for _, v := range variants {
		k := newKernel(t, d, v.s)
		for _, sz := range sizes {
			for _, single := range []bool{false, true} {
				m, n, kk := sz[0], sz[1], sz[2]
				t.Run(fmt.Sprintf("%s/%dx%dx%d/oneGroup=%v", v.s.Name, m, n, kk, single), func(t *testing.T) {
					a, b := randF32(r, m*kk+1), randF32(r, kk*n+1) // +1: no zero-size buffers
					ab, bb := newBuffer(t, d, devicetest.F32Bytes(a...)), newBuffer(t, d, devicetest.F32Bytes(b...))
					cb := newBuffer(t, d, devicetest.U32Bytes(filled(m*n+4, sentinel)...))
					g, err := v.dispatch(m, n, kk)
					require.NoError(t, err)
					if single {
						g = oneGroup(g)
					}
					run(t, d, step{k, []device.BufferRange{{Buffer: ab}, {Buffer: bb}, {Buffer: cb}}, g})
					got := readF32(t, cb)
					for i := range m {
						for j := range n {
							var want, mag float64
							for l := range kk {
								p := float64(a[i*kk+l]) * float64(b[l*n+j])
								want += p
								mag += math.Abs(p)
							}
							tol := 2 * float64(kk) * u * mag
							if diff := math.Abs(float64(got[i*n+j]) - want); diff > tol {
								require.InDelta(t, want, got[i*n+j], tol, "C[%d,%d]", i, j)
							}
						}
					}
					for i := m * n; i < len(got); i++ {
						require.Equal(t, uint32(sentinel), math.Float32bits(got[i]), "word %d past C", i)
					}
				})
			}
		}
	}
}

// TestReduceSum runs both passes. Integer-valued inputs have an exact float32 sum in
// any order; for random inputs the bound is depth·u·Σ|x|, where depth counts the
// additions on the longest path: the grid-stride accumulation, 3 in the vec4 and tail,
// 6 in the workgroup tree, and the same again in pass 2.
func TestReduceSum(t *testing.T) {
	d := devicetest.Open(t)
	r := rand.New(rand.NewPCG(7, 8))
	k := newKernel(t, d, shaders.ReduceSum)
	for _, n := range []int{0, 1, 3, 4, 5, 1000, 99_999, 100_000, 300_001} {
		for _, integer := range []bool{false, true} {
			for _, single := range []bool{false, true} {
				t.Run(fmt.Sprintf("n=%d/integer=%v/oneGroup=%v", n, integer, single), func(t *testing.T) {
					x := randF32(r, n+1)
					if integer {
						for i := range x {
							x[i] = float32(i%7 - 3)
						}
					}
					x[n] = 1e30 // past n: must not be read
					pass1, pass2, partials, err := shaders.ReduceSumDispatch(n)
					require.NoError(t, err)
					if single {
						pass1, partials = oneGroup(pass1), 1
						pass2.Push = devicetest.U32Bytes(1)
					}
					xb := newBuffer(t, d, devicetest.F32Bytes(x...))
					pb := newBuffer(t, d, devicetest.U32Bytes(filled(partials, sentinel)...))
					ob := newBuffer(t, d, devicetest.U32Bytes(filled(4, sentinel)...))
					run(t, d,
						step{k, []device.BufferRange{{Buffer: xb}, {Buffer: pb}}, pass1},
						step{k, []device.BufferRange{{Buffer: pb}, {Buffer: ob}}, pass2})
					out := readF32(t, ob)
					var want, mag float64
					for _, v := range x[:n] {
						want += float64(v)
						mag += math.Abs(float64(v))
					}
					if integer {
						assert.Equal(t, float32(want), out[0])
					} else {
						depth := ceilDiv(n, 4*64*partials) + 9 + ceilDiv(partials, 4*64) + 9
						assert.InDelta(t, want, out[0], float64(depth)*u*mag)
					}
					assert.Equal(t, filled(3, sentinel), devicetest.BytesU32(devicetest.F32Bytes(out[1:]...)), "only element 0 is written")
				})
			}
		}
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TestSgemmLongK runs GEMMs whose k loop is long enough that any loop left inside it
// (one not unrolled in the SPIR-V) would push an invocation past lavapipe's limit of
// 65535 loop iterations, which ends the loops silently with a wrong sum. Inputs are
// small integers, so every partial sum is an integer below 2^24 and the result is
// exact in any summation order.
func TestSgemmLongK(t *testing.T) {
	d := devicetest.Open(t)
	r := rand.New(rand.NewPCG(9, 10))
	cases := []struct {
		s        shaders.Shader
		dispatch func(m, n, k int) (shaders.Dispatch, error)
		m, n, k  int
	}{
		{shaders.SgemmNaive, shaders.SgemmNaiveDispatch, 3, 5, 50_001},
		{shaders.SgemmTiled, shaders.SgemmTiledDispatch, 9, 12, 70_000},
		{shaders.SgemmVec4, shaders.SgemmVec4Dispatch, 9, 12, 70_000}, // fast path: 17500 k steps
		{shaders.SgemmVec4, shaders.SgemmVec4Dispatch, 9, 13, 50_001}, // general path
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%dx%dx%d", c.s.Name, c.m, c.n, c.k), func(t *testing.T) {
			k := newKernel(t, d, c.s)
			a, b := randInts(r, c.m*c.k), randInts(r, c.k*c.n)
			ab, bb := newBuffer(t, d, devicetest.F32Bytes(a...)), newBuffer(t, d, devicetest.F32Bytes(b...))
			cb := newBuffer(t, d, devicetest.U32Bytes(filled(c.m*c.n, sentinel)...))
			g, err := c.dispatch(c.m, c.n, c.k)
			require.NoError(t, err)
			run(t, d, step{k, []device.BufferRange{{Buffer: ab}, {Buffer: bb}, {Buffer: cb}}, g})
			got := readF32(t, cb)
			for i := range c.m {
				for j := range c.n {
					var want float32
					for l := range c.k {
						want += a[i*c.k+l] * b[l*c.n+j]
					}
					require.Equal(t, want, got[i*c.n+j], "C[%d,%d]", i, j)
				}
			}
		})
	}
}
