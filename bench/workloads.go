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
	"fmt"
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

// TrainStep adds one training step of a tanh MLP to b: the forward pass through
// layers weights W_i (f32[width,width], parameters 1…layers after the input x of
// f32[batch,width]), and the backward pass that reads every activation again in
// reverse order: dz_i = g_i·(1−a_i²), the weight gradient dW_i = a_{i−1}ᵀ·dz_i
// and g_{i−1} = dz_i·W_iᵀ, and a gradient-descent update W_i − 0.01·dW_i. It returns
// (g_0, W_1', …, W_layers'). The activations are what a memory budget must trade:
// all of them are live when the backward pass starts, as in any network trained by
// backpropagation, and each can be recomputed from the one before it.
func TrainStep(b *hlo.Builder, layers, batch, width int) *hlo.Instruction {
	x := b.Parameter(hlo.MakeShape(hlo.F32, int64(batch), int64(width)), "x")
	ws := make([]*hlo.Instruction, layers)
	for i := range ws {
		ws[i] = b.Parameter(hlo.MakeShape(hlo.F32, int64(width), int64(width)), fmt.Sprintf("w%d", i+1))
	}
	acts := []*hlo.Instruction{x}
	for _, w := range ws {
		acts = append(acts, b.Tanh(b.Dot(acts[len(acts)-1], w)))
	}
	one := b.BroadcastScalar(b.ScalarConstant(hlo.F32, 1), int64(batch), int64(width))
	lr := b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.01), int64(width), int64(width))
	g := acts[layers]
	updated := make([]*hlo.Instruction, layers)
	for i := layers; i >= 1; i-- {
		a := acts[i]
		dz := b.Mul(g, b.Sub(one, b.Mul(a, a)))
		dw := b.Dot(b.Transpose(acts[i-1], 1, 0), dz)
		updated[i-1] = b.Sub(ws[i-1], b.Mul(lr, dw))
		g = b.Dot(dz, b.Transpose(ws[i-1], 1, 0))
	}
	return b.Tuple(append([]*hlo.Instruction{g}, updated...)...)
}
