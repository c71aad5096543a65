package vkxla_test

// Numerics of mixed-precision programs and of signed zeros: GPU against cpuref with
// the one tolerance table (vkxla.ProgramTolerance) or exactly.

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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

// sin(−0) = −0 and sin(+0) = +0 (C, IEEE 754), on the device exactly as in cpuref
// and by the definition, at f32 and f64.
func TestSineOfSignedZero(t *testing.T) {
	rt := newRuntime(t)
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
		t.Run(dt.String(), func(t *testing.T) {
			b := hlo.NewBuilder("sin_zero")
			m := mustBuild(t, b, b.Unary(hlo.OpSin, b.Parameter(hlo.MakeShape(dt, 2), "x")))
			in := specialLiteral(dt, []float64{math.Copysign(0, -1), 0})
			checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, in)
			exe, err := rt.Compile(context.Background(), m)
			require.NoError(t, err)
			defer func() { require.NoError(t, exe.Close()) }()
			got, err := exe.Run(context.Background(), in)
			require.NoError(t, err)
			require.True(t, got[0].Float64(0) == 0 && math.Signbit(got[0].Float64(0)), "sin(-0) = %v, want -0", got[0].Float64(0))
			require.True(t, got[0].Float64(1) == 0 && !math.Signbit(got[0].Float64(1)), "sin(+0) = %v, want +0", got[0].Float64(1))
		})
	}
}

// BenchmarkPowF64 measures f64 power (double-word y·ln|x|) on f64[256K] against
// exp(y·log(x)) in the same process: the old power's arithmetic, without its
// special-case selects (x in [0.5, 2e3], y in [-40, 40]). Metrics from the best GPU
// time of the runs: ns/elem, and x-old = power's time ÷ exp(y·log(x))'s.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench PowF64 -benchtime 10x .
func BenchmarkPowF64(b *testing.B) {
	rt := newRuntime(b)
	if !rt.Device().Caps().Float64 {
		b.Fatal("the device does not compute f64")
	}
	const n = 1 << 18
	s := hlo.MakeShape(hlo.F64, n)
	x := randomLiteral(rnd(51), s, domain{0.5, 2e3})
	y := randomLiteral(rnd(52), s, domain{-40, 40})
	build := func(name string, body func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction) *hlo.Module {
		bl := hlo.NewBuilder(name)
		return mustBuild(b, bl, body(bl, bl.Parameter(s, "x"), bl.Parameter(s, "y")))
	}
	old := build("exp_y_log_x", func(bl *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
		return bl.Unary(hlo.OpExp, bl.Binary(hlo.OpMultiply, y, bl.Unary(hlo.OpLog, x)))
	})
	pow := build("power", func(bl *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
		return bl.Binary(hlo.OpPower, x, y)
	})
	var oldTime time.Duration
	for _, v := range []struct {
		name string
		m    *hlo.Module
	}{{"exp-y-log-x", old}, {"power", pow}} {
		b.Run(v.name, func(b *testing.B) {
			best := bestModuleTime(b, rt, v.m, x, y)
			if v.m == old {
				oldTime = best
			} else if oldTime == 0 {
				oldTime = bestModuleTime(b, rt, old, x, y)
			}
			b.ReportMetric(float64(best.Nanoseconds())/n, "ns/elem")
			b.ReportMetric(float64(best)/float64(oldTime), "x-old")
		})
	}
}
