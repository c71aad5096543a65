package vkxla_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// TestErfTanSweep holds erf and tan to their tolerance rows on a dense grid, not the
// differential suite's few random inputs: erf over [-6, 6] (both of codegen's
// branches and the split between them), tan over (-π/2, π/2) up to 1e-4 from the
// poles, in f32 and f64, against Go's math (f32 rounded once from float64).
func TestErfTanSweep(t *testing.T) {
	rt := newRuntime(t)
	const n = 1 << 18
	for _, tc := range []struct {
		op     hlo.Opcode
		lo, hi float64
		ref    func(float64) float64
	}{
		{hlo.OpErf, -6, 6, math.Erf},
		{hlo.OpTan, -math.Pi/2 + 1e-4, math.Pi/2 - 1e-4, math.Tan},
	} {
		for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
			shape := hlo.MakeShape(dt, n)
			b := hlo.NewBuilder(tc.op.String())
			exe, err := rt.Compile(context.Background(), mustBuild(t, b, b.Unary(tc.op, b.Parameter(shape, "x"))))
			require.NoError(t, err)
			in, want := hlo.NewLiteral(shape), hlo.NewLiteral(shape)
			for i := range n {
				x := tc.lo + (tc.hi-tc.lo)*float64(i)/(n-1)
				if dt == hlo.F32 {
					x = float64(float32(x))
					in.SetBits(i, uint64(math.Float32bits(float32(x))))
					want.SetBits(i, uint64(math.Float32bits(float32(tc.ref(x)))))
				} else {
					in.SetBits(i, math.Float64bits(x))
					want.SetBits(i, math.Float64bits(tc.ref(x)))
				}
			}
			got, err := exe.Run(context.Background(), in)
			require.NoError(t, err)
			worst := 0.0
			for i := range n {
				worst = max(worst, vkxla.ULPDistance(dt, got[0].Bits(i), want.Bits(i)))
			}
			t.Logf("%v %v: worst %g ulp over %d points", tc.op, dt, worst, n)
			require.LessOrEqual(t, worst, vkxla.Tolerance(tc.op, dt).ULP, "%v %v", tc.op, dt)
			require.NoError(t, exe.Close())
		}
	}
}
