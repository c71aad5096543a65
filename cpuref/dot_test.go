package cpuref

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vkxla/vkxla/hlo"
)

func dotText(lhs, rhs, out, attrs string) string {
	return oneOp(`
  a = ` + lhs + ` parameter(0)
  b = ` + rhs + ` parameter(1)
  ROOT d = ` + out + ` dot(a, b), ` + attrs)
}

func TestDotMatrices(t *testing.T) {
	a := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)
	b := mat(dims(3, 2), float32(7), 8, 9, 10, 11, 12)
	// [1 2 3; 4 5 6] × [7 8; 9 10; 11 12] = [58 64; 139 154].
	assertLit(t, mat(dims(2, 2), float32(58), 64, 139, 154), evalText(t,
		dotText("f32[2,3]", "f32[3,2]", "f32[2,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), a, b))
	assertLit(t, vec(float32(-2), -2), evalText(t,
		dotText("f32[2,3]", "f32[3]", "f32[2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"), a, vec(float32(1), 0, -1)))
	assertLit(t, scalar(float32(32)), evalText(t,
		dotText("f32[3]", "f32[3]", "f32[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		vec(float32(1), 2, 3), vec(float32(4), 5, 6)))
	// Contracting lhs dimension 0: aᵀ·b, a = [1 2; 3 4; 5 6], b = ones.
	assertLit(t, mat(dims(2, 1), float32(9), 12), evalText(t,
		dotText("f32[3,2]", "f32[3,1]", "f32[2,1]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		mat(dims(3, 2), float32(1), 2, 3, 4, 5, 6), mat(dims(3, 1), float32(1), 1, 1)))
	// No contracting dimensions: the outer product.
	assertLit(t, mat(dims(2, 3), float32(3), 4, 5, 6, 8, 10), evalText(t,
		dotText("f32[2]", "f32[3]", "f32[2,3]", "lhs_contracting_dims={}, rhs_contracting_dims={}"),
		vec(float32(1), 2), vec(float32(3), 4, 5)))
	// An empty contraction gives zeros.
	assertLit(t, mat(dims(2, 3), float32(0), 0, 0, 0, 0, 0), evalText(t,
		dotText("f32[2,0]", "f32[0,3]", "f32[2,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
		mat[float32](dims(2, 0)), mat[float32](dims(0, 3))))
}

func TestDotBatch(t *testing.T) {
	lhs := mat(dims(2, 2, 2), float32(1), 2, 3, 4, 5, 6, 7, 8)
	rhs := mat(dims(2, 2, 2), float32(1), 0, 0, 1, 2, 0, 0, 2) // I and 2I
	assertLit(t, mat(dims(2, 2, 2), float32(1), 2, 3, 4, 10, 12, 14, 16), evalText(t, dotText("f32[2,2,2]", "f32[2,2,2]", "f32[2,2,2]",
		"lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}"), lhs, rhs))
	// Batch dimension last in rhs, two contracting dimensions.
	x := mat(dims(2, 3, 2), seq(12, 1)...)
	ones := mat(dims(3, 2, 2), float32(1), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	assertLit(t, vec(float32(21), 57), evalText(t, dotText("f32[2,3,2]", "f32[3,2,2]", "f32[2]",
		"lhs_batch_dims={0}, lhs_contracting_dims={1,2}, rhs_batch_dims={2}, rhs_contracting_dims={0,1}"), x, ones))
}

func TestDotAccumulation(t *testing.T) {
	// f32 accumulates sequentially in f32: 1e8 + 1 = 1e8, so the sum is 1, not 2.
	assertLit(t, scalar(float32(1)), evalText(t,
		dotText("f32[4]", "f32[4]", "f32[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		vec(float32(1e8), 1, -1e8, 1), vec(float32(1), 1, 1, 1)))

	// f16 and bf16 accumulate in f32 and round once: summing ones in the half type
	// would stall at 2048 (f16) or 256 (bf16).
	ones := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	out := evalText(t, dotText("f16[4096]", "f16[4096]", "f16[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		f16s(ones(4096)...), f16s(ones(4096)...))
	assert.Equal(t, 4096.0, out.Float64(0))
	out = evalText(t, dotText("bf16[512]", "bf16[512]", "bf16[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		bf16s(ones(512)...), bf16s(ones(512)...))
	assert.Equal(t, 512.0, out.Float64(0))

	// Integers wrap: 65536² + 5 = 2^32 + 5 → 5 in s32.
	assertLit(t, scalar(int32(5)), evalText(t,
		dotText("s32[2]", "s32[2]", "s32[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		vec(int32(65536), 1), vec(int32(65536), 5)))
	assertLit(t, scalar(int8(126)), evalText(t,
		dotText("s8[2]", "s8[2]", "s8[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		vec(int8(-128), 127), vec(int8(-1), 2)), "-128·-1 + 127·2 = 382 ≡ 126 (mod 256)")
	assertLit(t, scalar(math.Inf(1)), evalText(t,
		dotText("f64[2]", "f64[2]", "f64[]", "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
		vec(1e200, 1), vec(1e200, 1)))
}

func TestDotMixedResultType(t *testing.T) {
	// s8 × s8 accumulating into s32, as XLA's preferred element type allows (hlo's
	// verifier does not, so the kernel is run without it).
	lhs, rhs := vec(int8(-128), 127), vec(int8(-128), 127)
	m := oneInstruction(hlo.OpDot, hlo.Scalar(hlo.S32), hlo.Attributes{Dot: &hlo.DotDims{
		LhsContracting: []int64{0}, RhsContracting: []int64{0}}}, lhs, rhs)
	out, err := EvalComputation(m.Entry, lhs, rhs)
	if assert.NoError(t, err) {
		assertLit(t, scalar(int32(16384+16129)), out)
	}
}
