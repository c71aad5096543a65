// Package bench measures vkxla's generated kernels against the hand-written GLSL
// baselines of package shaders on the same device, in the same process: saxpy
// (GB/s), sgemm (GFLOP/s) and the overhead of one Run. The root package's
// benchmarks (bench_test.go, `go test -bench`) and the vkxlabench program
// (bench/cmd/vkxlabench, a markdown table) both take their workloads from here.
//
// Every variant is a Runner: one Run is one execution, timed on the host (wall) and
// on the device (the sum of the dispatches' GPU times, from timestamp queries). The
// figure compared is the best GPU time of a few runs, as DESIGN.md advises on a
// noisy machine; mean wall time is reported next to it. Each runner checks its
// output against a host computation on its first run, so a broken kernel fails the
// benchmark instead of timing garbage.
package bench

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/vkxla/vkxla/hlo"
)

// SaxpyA is the scalar a of every saxpy run.
const SaxpyA = 2

// Saxpy adds a·x + y over f32[n] to b and returns it: parameters a (f32[]), x and y
// (f32[n]), in that order. Without fusion vkxla runs it as three kernels
// (broadcast, multiply, add).
func Saxpy(b *hlo.Builder, n int) *hlo.Instruction {
	s := hlo.MakeShape(hlo.F32, int64(n))
	a := b.Parameter(hlo.Scalar(hlo.F32), "a")
	x := b.Parameter(s, "x")
	y := b.Parameter(s, "y")
	return b.Add(b.Mul(b.BroadcastScalar(a, int64(n)), x), y)
}

// Gemm adds lhs·rhs to b and returns it: parameters lhs f32[m,k] and rhs f32[k,n].
func Gemm(b *hlo.Builder, m, n, k int) *hlo.Instruction {
	lhs := b.Parameter(hlo.MakeShape(hlo.F32, int64(m), int64(k)), "lhs")
	rhs := b.Parameter(hlo.MakeShape(hlo.F32, int64(k), int64(n)), "rhs")
	return b.Dot(lhs, rhs)
}

// Negate adds -x over f32[n] to b: the one-op program of the overhead benchmark.
func Negate(b *hlo.Builder, n int) *hlo.Instruction {
	return b.Negate(b.Parameter(hlo.MakeShape(hlo.F32, int64(n)), "x"))
}

// F32Literal is an f32 literal of the given dims filled with values uniform in
// [-1, 1) drawn from seed (fast enough for 16M elements).
func F32Literal(seed uint64, dims ...int64) *hlo.Literal {
	lit := hlo.NewLiteral(hlo.MakeShape(hlo.F32, dims...))
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	data := lit.Bytes()
	for i := 0; i < len(data); i += 4 {
		binary.LittleEndian.PutUint32(data[i:], math.Float32bits(2*rng.Float32()-1))
	}
	return lit
}

// ScalarF32 is an f32[] literal.
func ScalarF32(v float32) *hlo.Literal {
	lit := hlo.NewLiteral(hlo.Scalar(hlo.F32))
	binary.LittleEndian.PutUint32(lit.Bytes(), math.Float32bits(v))
	return lit
}

// f32At reads element i of little-endian f32 data.
func f32At(data []byte, i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
}

// saxpyInputs are the x and y of every saxpy variant.
func saxpyInputs(n int) (x, y *hlo.Literal) {
	return F32Literal(1, int64(n)), F32Literal(2, int64(n))
}

// gemmInputs are the lhs (m×k) and rhs (k×n) of every GEMM variant.
func gemmInputs(m, n, k int) (a, b *hlo.Literal) {
	return F32Literal(3, int64(m), int64(k)), F32Literal(4, int64(k), int64(n))
}
