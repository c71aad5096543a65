package cpuref

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// randomFloat32s mixes ordinary values, huge and tiny magnitudes and subnormals, so
// that rounding, overflow and gradual underflow all occur.
func randomFloat32s(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		switch i % 4 {
		case 0:
			v[i] = float32(r.NormFloat64())
		case 1:
			v[i] = math.Float32frombits(r.Uint32()) // any bit pattern, NaNs included
		case 2:
			v[i] = float32(r.NormFloat64() * 1e-40) // subnormal range
		default:
			v[i] = float32(r.NormFloat64() * 1e38)
		}
	}
	return v
}

// f32 arithmetic must be exactly Go's float32 arithmetic: each op rounded once to
// float32 (the definition docs/cpuref.md gives).
func TestFloat32ArithmeticRoundsOncePerOp(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const n = 4096
	x, y := randomFloat32s(r, n), randomFloat32s(r, n)
	ops := map[hlo.Opcode]func(a, b float32) float32{
		hlo.OpAdd:      func(a, b float32) float32 { return a + b },
		hlo.OpSubtract: func(a, b float32) float32 { return a - b },
		hlo.OpMultiply: func(a, b float32) float32 { return a * b },
		hlo.OpDivide:   func(a, b float32) float32 { return a / b },
	}
	for op, f := range ops {
		want := make([]float32, n)
		for i := range want {
			want[i] = f(x[i], y[i])
		}
		require.NoError(t, hlo.LiteralsEqual(evalBinaryOp(t, op, vec(x...), vec(y...)), vec(want...)), "%v", op)
	}
	want := make([]float32, n)
	for i, a := range x {
		want[i] = float32(math.Sqrt(float64(a))) // sqrt of a float32 is exact in float64 before rounding
	}
	require.NoError(t, hlo.LiteralsEqual(evalUnaryOp(t, hlo.OpSqrt, vec(x...)), vec(want...)))
}

// f16 and bf16 arithmetic is float32 arithmetic on the widened operands, rounded
// back to the type after every op.
func TestHalfArithmeticIsFloat32RoundedBack(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	const n = 4096
	hx, hy := make([]hlo.Float16, n), make([]hlo.Float16, n)
	bx, by := make([]hlo.BFloat16, n), make([]hlo.BFloat16, n)
	for i := range hx {
		hx[i], hy[i] = hlo.Float16(r.Uint32()), hlo.Float16(r.Uint32())
		bx[i], by[i] = hlo.BFloat16(r.Uint32()), hlo.BFloat16(r.Uint32())
	}
	ops := map[hlo.Opcode]func(a, b float32) float32{
		hlo.OpAdd:      func(a, b float32) float32 { return a + b },
		hlo.OpMultiply: func(a, b float32) float32 { return a * b },
		hlo.OpDivide:   func(a, b float32) float32 { return a / b },
	}
	for op, f := range ops {
		wantH, wantB := make([]hlo.Float16, n), make([]hlo.BFloat16, n)
		for i := range wantH {
			wantH[i] = hlo.F16FromFloat32(f(hx[i].Float32(), hy[i].Float32()))
			wantB[i] = hlo.BF16FromFloat32(f(bx[i].Float32(), by[i].Float32()))
		}
		require.NoError(t, hlo.LiteralsEqual(evalBinaryOp(t, op, vec(hx...), vec(hy...)), vec(wantH...)), "f16 %v", op)
		require.NoError(t, hlo.LiteralsEqual(evalBinaryOp(t, op, vec(bx...), vec(by...)), vec(wantB...)), "bf16 %v", op)
	}
}
