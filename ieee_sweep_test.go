package vkxla_test

// The IEEE edge sweep: every float elementwise op (and convert between every pair
// of float types) in every float dtype the device computes, at NaN, ±0, ±inf,
// subnormals, the extremes and huge arguments, GPU against cpuref within the
// tolerance table (vkxla.Tolerance). f16 and bf16 are swept exhaustively (all
// 65536 encodings); f32 and f64 at the edges plus values spread evenly over the
// exponent range. TestIEEEDefinitions then pins a few results to the ops'
// definitions (math/big references), not to cpuref.

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/bigref"
)

// floatLimits are a float type's extremes, as float64.
type floatLimits struct{ minSub, maxSub, minNormal, max float64 }

func limitsOf(dt hlo.DType) floatLimits {
	switch dt {
	case hlo.F16:
		return floatLimits{0x1p-24, 0x3ffp-24, 0x1p-14, 65504}
	case hlo.BF16:
		return floatLimits{0x1p-133, 0x7fp-133, 0x1p-126, 0x1.fep127}
	case hlo.F32:
		return floatLimits{0x1p-149, 0x7fffffp-149, 0x1p-126, math.MaxFloat32}
	}
	return floatLimits{0x1p-1074, 0xfffffffffffffp-1074, 0x1p-1022, math.MaxFloat64}
}

// edgeValues are the IEEE edges of dt and huge trig arguments (those beyond dt's
// range become infinities, which are edges too), both signs.
func edgeValues(dt hlo.DType) []float64 {
	l := limitsOf(dt)
	pos := []float64{0, l.minSub, 3 * l.minSub, l.maxSub / 2, l.maxSub, l.minNormal, 1.5 * l.minNormal,
		l.max, l.max / 2, l.max / 3, math.Inf(1), 1, 0.5, 2, 3, 7.75, 0.1, math.Pi / 2, math.Pi, 100,
		88.72, 709.78, 745.1, 1e-6, 1e-30, 3e9, 1e15, 1.2e20, 1e22, 1e35, 1e300}
	vals := []float64{math.NaN()}
	for _, v := range pos {
		vals = append(vals, v, -v)
	}
	return vals
}

// spreadValues are n values of both signs with exponents spread evenly over dt's
// whole range, subnormals included.
func spreadValues(dt hlo.DType, n int, rng *rand.Rand) []float64 {
	l := limitsOf(dt)
	lo, hi := math.Log2(l.minSub), math.Log2(l.max)
	out := make([]float64, n)
	for i := range out {
		v := math.Exp2(lo + (hi-lo)*rng.Float64())
		if rng.IntN(2) == 0 {
			v = -v
		}
		out[i] = v
	}
	return out
}

// allEncodings is every encoding of a 16-bit float type.
func allEncodings(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, 1<<16))
	for i := range 1 << 16 {
		l.SetBits(i, uint64(i))
	}
	return l
}

// sweepInputs is the unary sweep's input for dt.
func sweepInputs(dt hlo.DType) *hlo.Literal {
	if dt.Bits() == 16 {
		return allEncodings(dt)
	}
	return specialLiteral(dt, append(edgeValues(dt), spreadValues(dt, 4000, rnd(31))...))
}

// floatDTypes are the float types the device computes.
func floatDTypes(t *testing.T, rt *vkxla.Runtime) []hlo.DType {
	var out []hlo.DType
	for _, dt := range supportedDTypes(rt.Device().Caps()) {
		if dt.IsFloat() {
			out = append(out, dt)
		}
	}
	require := []hlo.DType{hlo.F32, hlo.F16, hlo.BF16, hlo.F64}
	for _, dt := range require {
		if !slices.Contains(out, dt) {
			t.Logf("the device does not compute %v; it is not swept", dt)
		}
	}
	return out
}

// runSweepCases runs each case on the device against reference.
func runSweepCases(t *testing.T, rt *vkxla.Runtime, cases []sweepCase) {
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v", c.op, c.inputs[0].DType()), func(t *testing.T) {
			b := hlo.NewBuilder(sanitize(c.op.String()))
			params := make([]*hlo.Instruction, len(c.inputs))
			for i, in := range c.inputs {
				params[i] = b.Parameter(in.Shape(), fmt.Sprint("x", i))
			}
			var root *hlo.Instruction
			if len(params) == 1 {
				root = b.Unary(c.op, params[0])
			} else {
				root = b.Binary(c.op, params[0], params[1])
			}
			m := mustBuild(t, b, root)
			// cpuref is the definition here: its f64 sine, cosine, tangent and power
			// are correctly rounded (checked against math/big in its own tests).
			want, err := cpuref.Eval(m, c.inputs...)
			require.NoError(t, err, "cpuref")
			exe, err := rt.Compile(context.Background(), m)
			require.NoError(t, err, "compile")
			defer func() { require.NoError(t, exe.Close()) }()
			got, err := exe.Run(context.Background(), c.inputs...)
			require.NoError(t, err, "run")
			spec := vkxla.Tolerance(c.op, want.DType())
			require.NoError(t, spec.Check(got[0], want), "tolerance %+v", spec)
		})
	}
}

type sweepCase struct {
	op     hlo.Opcode
	inputs []*hlo.Literal
}

func TestIEEESweepUnary(t *testing.T) {
	rt := newRuntime(t)
	var cases []sweepCase
	for _, dt := range floatDTypes(t, rt) {
		in := sweepInputs(dt)
		for _, op := range hlo.AllOpcodes() {
			if op.Info().Kind != hlo.KindUnary || !op.Info().Types.Allows(dt) {
				continue
			}
			cases = append(cases, sweepCase{op, []*hlo.Literal{in}})
		}
	}
	runSweepCases(t, rt, cases)
}

func TestIEEESweepBinary(t *testing.T) {
	rt := newRuntime(t)
	var cases []sweepCase
	for _, dt := range floatDTypes(t, rt) {
		vals := append(edgeValues(dt), spreadValues(dt, 40, rnd(32))...)
		var xs, ys []float64
		for _, a := range vals {
			for _, c := range vals {
				xs, ys = append(xs, a), append(ys, c)
			}
		}
		x, y := specialLiteral(dt, xs), specialLiteral(dt, ys)
		for _, op := range hlo.AllOpcodes() {
			if op.Info().Kind == hlo.KindBinary && op.Info().Types.Allows(dt) {
				cases = append(cases, sweepCase{op, []*hlo.Literal{x, y}})
			}
		}
	}
	runSweepCases(t, rt, cases)
}

// TestIEEESweepConvert converts the sweep's inputs between every pair of float
// types: NaN, ±0, ±inf, subnormals (which the narrower type may round to zero or
// to its own subnormals) and values past the narrower type's range (which round
// to ±inf). Convert is exact: bit for bit against cpuref.
func TestIEEESweepConvert(t *testing.T) {
	rt := newRuntime(t)
	dts := floatDTypes(t, rt)
	for _, from := range dts {
		in := sweepInputs(from)
		for _, to := range dts {
			if to == from {
				continue
			}
			t.Run(fmt.Sprintf("%v-to-%v", from, to), func(t *testing.T) {
				b := hlo.NewBuilder("convert")
				m := mustBuild(t, b, b.Convert(b.Parameter(in.Shape(), "x"), to))
				want, err := cpuref.Eval(m, in)
				require.NoError(t, err, "cpuref")
				exe, err := rt.Compile(context.Background(), m)
				require.NoError(t, err, "compile")
				defer func() { require.NoError(t, exe.Close()) }()
				got, err := exe.Run(context.Background(), in)
				require.NoError(t, err, "run")
				require.NoError(t, vkxla.Tolerance(hlo.OpConvert, to).Check(got[0], want))
			})
		}
	}
}

// exactFmod is fmod(x, y) of finite floats, y != 0, in exact integer arithmetic.
func exactFmod(x, y float64) float64 {
	mx, ex := math.Frexp(math.Abs(x))
	my, ey := math.Frexp(math.Abs(y))
	// |x| = MX·2^(ex−53), |y| = MY·2^(ey−53) with integer MX, MY.
	MX, MY := big.NewInt(int64(math.Ldexp(mx, 53))), big.NewInt(int64(math.Ldexp(my, 53)))
	if ex < ey {
		return x
	}
	r := new(big.Int).Lsh(MX, uint(ex-ey))
	r.Mod(r, MY)
	v, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(r), ey-53).Float64()
	return math.Copysign(v, x)
}

// TestIEEEDefinitions pins results at the edges to the ops' definitions, computed
// without cpuref: math/big (bigref), exact integer arithmetic, powers of two.
func TestIEEEDefinitions(t *testing.T) {
	rt := newRuntime(t)
	sinOf := func(x float64) float64 { s, _ := bigref.SinCos(x); return s }
	cosOf := func(x float64) float64 { _, c := bigref.SinCos(x); return c }
	f32 := func(v float64) float64 { return float64(float32(v)) }
	cases := []struct {
		op   hlo.Opcode
		dt   hlo.DType
		x, y float64
		want float64
		// exact: bit-equal (the result is representable and the algorithm exact);
		// otherwise within the tolerance table's bound for the op.
		exact bool
		// ulp, where set, bounds the distance instead of the table: subnormal results,
		// which the table's absolute term would accept as 0.
		ulp float64
	}{
		// Item 3: huge and near-multiple-of-π/2 arguments.
		{hlo.OpSin, hlo.F32, 3e9, 0, f32(sinOf(3e9)), false, 0}, // 0.98700488, not −1
		{hlo.OpSin, hlo.F64, math.Pi, 0, 1.2246467991473532e-16, false, 0},
		{hlo.OpCos, hlo.F64, math.Pi / 2, 0, 6.123233995736766e-17, false, 0},
		{hlo.OpSin, hlo.F64, 1e15, 0, sinOf(1e15), false, 0},
		{hlo.OpSin, hlo.F64, 1.2e20, 0, sinOf(1.2e20), false, 0},
		{hlo.OpSin, hlo.F64, 1e22, 0, -0.8522008497671888, false, 0},
		{hlo.OpCos, hlo.F64, 1e35, 0, cosOf(1e35), false, 0},
		{hlo.OpSin, hlo.F64, math.MaxFloat64, 0, 0.004961954789184062, false, 0},
		{hlo.OpCos, hlo.F32, math.MaxFloat32, 0, f32(cosOf(float64(float32(math.MaxFloat32)))), false, 0},
		{hlo.OpSin, hlo.F32, -0x1p-149, 0, -0x1p-149, true, 0},
		{hlo.OpSin, hlo.F64, math.Copysign(0, -1), 0, math.Copysign(0, -1), true, 0},
		// Item 4: subnormal divisors, exact.
		{hlo.OpRemainder, hlo.F32, 100, f32(1e-44), exactFmod(100, f32(1e-44)), true, 0},
		{hlo.OpRemainder, hlo.F32, 1, 0x1p-149, 0, true, 0},
		{hlo.OpRemainder, hlo.F64, 1, 0x1p-1074, 0, true, 0},
		{hlo.OpRemainder, hlo.F64, 100, 3e-320, exactFmod(100, 3e-320), true, 0},
		{hlo.OpRemainder, hlo.F32, -math.MaxFloat32, 0x3p-149, exactFmod(-float64(float32(math.MaxFloat32)), 0x3p-149), true, 0},
		// Item 5: the range ends of cbrt, log and power.
		{hlo.OpCbrt, hlo.F32, math.MaxFloat32, 0, f32(math.Cbrt(float64(float32(math.MaxFloat32)))), false, 0},
		{hlo.OpCbrt, hlo.F64, 0x1p-1074, 0, 0x1p-358, false, 0},
		{hlo.OpCbrt, hlo.F64, -0x1p1023, 0, -0x1p341, false, 0},
		{hlo.OpLog, hlo.F32, 0x1p-149, 0, f32(-149 * math.Ln2), false, 0}, // −103.27893, not −88
		{hlo.OpLog, hlo.F64, 0x1p-1074, 0, -1074 * math.Ln2, false, 0},
		{hlo.OpPower, hlo.F32, 0x1p-148, 0.5, 0x1p-74, true, 0},
		{hlo.OpPower, hlo.F32, 0x1p-149, -1, math.Inf(1), true, 0},
		{hlo.OpPower, hlo.F32, math.MaxFloat32, 1, f32(math.MaxFloat32), false, 0},
		{hlo.OpPower, hlo.F64, 0x1p-1074, 0.5, 0x1p-537, false, 0},
		{hlo.OpAtan2, hlo.F32, 0x1p-149, 0x3p-149, f32(math.Atan(1.0 / 3)), false, 0},
		// Subnormal results of exp, logistic and power (found by the sweep: 0 before).
		{hlo.OpExp, hlo.F32, -100, 0, f32(math.Exp(-100)), false, 1},
		{hlo.OpExp, hlo.F32, -87.5, 0, f32(math.Exp(-87.5)), false, 64}, // 64 units of 2^-149: 9e-6 relative
		{hlo.OpLogistic, hlo.F32, -100, 0, f32(math.Exp(-100)), false, 1},
		{hlo.OpPower, hlo.F32, 0.5, 140, 0x1p-140, true, 0},
		{hlo.OpPower, hlo.F32, 0x1p-100, 1.4, 0x1p-140, false, 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v(%g,%g)", c.op, c.dt, c.x, c.y), func(t *testing.T) {
			b := hlo.NewBuilder("definition")
			x := specialLiteral(c.dt, []float64{c.x})
			var root *hlo.Instruction
			inputs := []*hlo.Literal{x}
			if c.op.Info().Arity == 1 {
				root = b.Unary(c.op, b.Parameter(x.Shape(), "x"))
			} else {
				y := specialLiteral(c.dt, []float64{c.y})
				inputs = append(inputs, y)
				root = b.Binary(c.op, b.Parameter(x.Shape(), "x"), b.Parameter(y.Shape(), "y"))
			}
			exe, err := rt.Compile(context.Background(), mustBuild(t, b, root))
			require.NoError(t, err)
			defer func() { require.NoError(t, exe.Close()) }()
			got, err := exe.Run(context.Background(), inputs...)
			require.NoError(t, err)
			want := specialLiteral(c.dt, []float64{c.want})
			spec := vkxla.Tolerance(c.op, c.dt)
			if c.exact {
				spec = vkxla.ErrorSpec{}
			} else if c.ulp > 0 {
				spec = vkxla.ErrorSpec{ULP: c.ulp}
			}
			require.NoError(t, spec.Check(got[0], want), "tolerance %+v", spec)
		})
	}
}

// TestSinCosNearMultiplesOfPiOver2 runs sine and cosine where argument reduction is
// hardest, against the definition (bigref): the floats nearest n·π/2 and their
// neighbours, for every n of the f32 fast path (|x| < 2^12) and a spread of n
// beyond it, and the floats around the fast path's bound.
func TestSinCosNearMultiplesOfPiOver2(t *testing.T) {
	rt := newRuntime(t)
	pio2 := new(big.Float).Quo(bigref.Pi(1200), big.NewFloat(2))
	nearest := func(n float64) float64 {
		v, _ := new(big.Float).SetPrec(1200).Mul(pio2, big.NewFloat(n)).Float64()
		return v
	}
	rng := rnd(41)
	for _, dt := range []hlo.DType{hlo.F32, hlo.F64} {
		var xs []float64
		add := func(v float64) {
			if dt == hlo.F32 {
				f := float32(v)
				xs = append(xs, float64(math.Nextafter32(f, 0)), float64(f), float64(math.Nextafter32(f, float32(math.Inf(1)))))
				return
			}
			xs = append(xs, math.Nextafter(v, 0), v, math.Nextafter(v, math.Inf(1)))
		}
		for n := 1.0; n <= 2700; n++ {
			add(nearest(n))
		}
		for range 1000 {
			add(nearest(math.Round(math.Exp2(12 + 40*rng.Float64()))))
		}
		add(0x1p12)
		add(0x1p20)
		for _, x := range slices.Clone(xs) {
			xs = append(xs, -x)
		}
		in := specialLiteral(dt, xs)
		sin, cos := hlo.NewLiteral(in.Shape()), hlo.NewLiteral(in.Shape())
		for i := range in.NumElements() {
			s, c := bigref.SinCos(in.Float64(i))
			sin.SetFloat64(i, s)
			cos.SetFloat64(i, c)
		}
		for op, want := range map[hlo.Opcode]*hlo.Literal{hlo.OpSin: sin, hlo.OpCos: cos} {
			t.Run(fmt.Sprintf("%v/%v", op, dt), func(t *testing.T) {
				b := hlo.NewBuilder("trig")
				exe, err := rt.Compile(context.Background(), mustBuild(t, b, b.Unary(op, b.Parameter(in.Shape(), "x"))))
				require.NoError(t, err)
				defer func() { require.NoError(t, exe.Close()) }()
				got, err := exe.Run(context.Background(), in)
				require.NoError(t, err)
				spec := vkxla.Tolerance(op, dt)
				require.NoError(t, spec.Check(got[0], want), "tolerance %+v", spec)
			})
		}
	}
}
