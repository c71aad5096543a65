package vkxla_test

// Numerics of mixed-precision programs and of signed zeros: GPU against cpuref with
// the one tolerance table (vkxla.ProgramTolerance) or exactly.

import (
	"fmt"
	"math"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// An f32 exp rounded to bf16 and back may land one bf16 step from cpuref's where
// the two exps straddle a bf16 rounding boundary; the program's tolerance must
// allow that step although the output is f32 (it allowed f32's 1e-5 before). The
// inputs are the logs of bf16 midpoints, where the exps straddle most often.
func TestProgramToleranceMixedExpBF16Chain(t *testing.T) {
	rng := rnd(41)
	in := hlo.NewLiteral(f32(1 << 16))
	for i := range in.NumElements() {
		// A bf16 value in [e^-10, e^10) (exponents -14 … 14) and the midpoint above it.
		e := rng.IntN(29) - 14
		mid := math.Ldexp(1+float64(rng.IntN(128))/128, e) + math.Ldexp(1, e-8)
		in.SetFloat64(i, math.Log(mid))
	}
	rt := newRuntime(t)
	b := hlo.NewBuilder("exp_bf16_chain")
	x := b.Parameter(f32(1<<16), "x")
	root := b.Convert(b.Convert(b.Unary(hlo.OpExp, x), hlo.BF16), hlo.F32)
	m := mustBuild(t, b, root)
	checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, hlo.F32), in)
}

// A dot and a convolution whose products are all -0 (-0·1 and 1·-0) sum to +0
// (cpuref, like XLA's evaluator, starts the sum at +0, and +0 + -0 = +0); a
// driver that folds +0 + x into x returns -0, which 1/x turns into -inf. The
// kernels declare SignedZeroInfNanPreserve where the device supports it.
func TestSignedZeroDotConvolution(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range floatDTypes(t, rt) {
		if !signedZeroPreserved(rt, dt) {
			t.Logf("%v: the device does not preserve signed zeros on request; the sign of a zero sum may differ (docs/codegen.md)", dt)
			continue
		}
		// 4×8·8×3 is emitted per element; 64×128·128×64 by the tiled GEMM (f32).
		for _, s := range [][3]int64{{4, 8, 3}, {64, 128, 64}} {
			t.Run(fmt.Sprintf("dot%v/%v", s, dt), func(t *testing.T) {
				b := hlo.NewBuilder("dot_neg_zero")
				lhs := b.Parameter(hlo.MakeShape(dt, s[0], s[1]), "lhs")
				rhs := b.Parameter(hlo.MakeShape(dt, s[1], s[2]), "rhs")
				one := b.BroadcastScalar(b.ScalarConstant(dt, 1), s[0], s[2])
				m := mustBuild(t, b, b.Binary(hlo.OpDivide, one, b.Dot(lhs, rhs)))
				checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, filled(dt, math.Copysign(0, -1), s[0], s[1]), filled(dt, 1, s[1], s[2]))
			})
		}
		// The second sums 2048·9 terms per output element: the split convolution.
		for _, s := range [][2]hlo.Shape{
			{hlo.MakeShape(dt, 1, 2, 5, 5), hlo.MakeShape(dt, 3, 2, 3, 3)},
			{hlo.MakeShape(dt, 1, 2048, 3, 3), hlo.MakeShape(dt, 2, 2048, 3, 3)},
		} {
			xs, ks := s[0], s[1]
			t.Run(fmt.Sprintf("convolution%v/%v", ks.Dims, dt), func(t *testing.T) {
				b := hlo.NewBuilder("conv_neg_zero")
				conv := b.Conv(b.Parameter(xs, "x"), b.Parameter(ks, "k"), hlo.MakeWindow([]int64{3, 3}, []int64{1, 1}), hlo.DefaultConvDims(2), 1, 1)
				one := b.BroadcastScalar(b.ScalarConstant(dt, 1), conv.Shape.Dims...)
				m := mustBuild(t, b, b.Binary(hlo.OpDivide, one, conv))
				checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, filled(dt, 1, xs.Dims...), filled(dt, math.Copysign(0, -1), ks.Dims...))
			})
		}
	}
}

// signedZeroPreserved reports whether kernels computing dt (f16 and bf16 accumulate
// in f32) run with signed zeros preserved on rt's device.
func signedZeroPreserved(rt *vkxla.Runtime, dt hlo.DType) bool {
	w := rt.Device().Caps().FloatControls.SignedZeroInfNanPreserve
	switch dt {
	case hlo.F64:
		return w.F64
	case hlo.F16:
		return w.F16 && w.F32
	}
	return w.F32
}

// filled is a literal of dt and dims with every element v.
func filled(dt hlo.DType, v float64, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i := range l.NumElements() {
		l.SetFloat64(i, v)
	}
	return l
}
