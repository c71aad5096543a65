package vkxla_test

// The IEEE edge sweep: every float elementwise op in every float dtype the device
// computes, at NaN, ±0, ±inf, subnormals, the extremes and huge arguments, GPU
// against cpuref within the tolerance table (vkxla.Tolerance). f16 and bf16 are
// swept exhaustively (all 65536 encodings); f32 and f64 at the edges plus values
// spread evenly over the exponent range. TestIEEEDefinitions then pins a few
// results to the ops' definitions (math/big references), not to cpuref.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
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

func TestIEEESweepUnary(t *testing.T) {
	rt := newRuntime(t)
	var cases []diffCase
	for _, dt := range floatDTypes(t, rt) {
		in := sweepInputs(dt)
		for _, op := range hlo.AllOpcodes() {
			if op.Info().Kind != hlo.KindUnary || !op.Info().Types.Allows(dt) || op == hlo.OpIsFinite {
				continue
			}
			cases = append(cases, diffCase{name: fmt.Sprintf("%v/%v", op, dt), spec: vkxla.Tolerance(op, dt),
				inputs: []*hlo.Literal{in},
				build:  func(b *hlo.Builder) *hlo.Instruction { return b.Unary(op, b.Parameter(in.Shape(), "x")) }})
		}
	}
	runDiffCasesOn(t, rt, cases)
}

// binarySweepOps are the float binary ops with edge behaviour of their own.
var binarySweepOps = []hlo.Opcode{hlo.OpRemainder, hlo.OpPower, hlo.OpAtan2, hlo.OpDivide,
	hlo.OpMaximum, hlo.OpMinimum, hlo.OpAdd, hlo.OpMultiply}

func TestIEEESweepBinary(t *testing.T) {
	rt := newRuntime(t)
	var cases []diffCase
	for _, dt := range floatDTypes(t, rt) {
		vals := append(edgeValues(dt), spreadValues(dt, 40, rnd(32))...)
		var xs, ys []float64
		for _, a := range vals {
			for _, c := range vals {
				xs, ys = append(xs, a), append(ys, c)
			}
		}
		x, y := specialLiteral(dt, xs), specialLiteral(dt, ys)
		for _, op := range binarySweepOps {
			cases = append(cases, diffCase{name: fmt.Sprintf("%v/%v", op, dt), spec: vkxla.Tolerance(op, dt),
				inputs: []*hlo.Literal{x, y},
				build: func(b *hlo.Builder) *hlo.Instruction {
					return b.Binary(op, b.Parameter(x.Shape(), "x"), b.Parameter(y.Shape(), "y"))
				}})
		}
	}
	runDiffCasesOn(t, rt, cases)
}

// runDiffCasesOn is runDiffCases on an open runtime.
func runDiffCasesOn(t *testing.T, rt *vkxla.Runtime, cases []diffCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := hlo.NewBuilder(sanitize(c.name))
			m := mustBuild(t, b, c.build(b))
			checkAgainstCPU(t, rt, m, c.spec, c.inputs...)
		})
	}
}
