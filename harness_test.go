package vkxla_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// newRuntime opens the test device (validation on; a validation message fails the
// test; no device fails in CI and skips elsewhere) and a runtime on it.
func newRuntime(t testing.TB) *vkxla.Runtime {
	t.Helper()
	d := devicetest.Open(t)
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "Vulkan objects the runtime left behind after Close")
	})
	return rt
}

// domain is the range random inputs are drawn from, chosen per op so that the op is
// defined (log of positives, say) and the comparison meaningful.
type domain struct{ lo, hi float64 }

var unitDomain = domain{-1, 1}

// randomLiteral fills a literal: floats (and both parts of complex numbers)
// uniform in d, integers across a range that exercises wrap-around for narrow
// types, preds at random.
func randomLiteral(rng *rand.Rand, s hlo.Shape, d domain) *hlo.Literal {
	if s.IsTuple() {
		elems := make([]*hlo.Literal, len(s.Elems))
		for i, e := range s.Elems {
			elems[i] = randomLiteral(rng, e, d)
		}
		return hlo.TupleLiteral(elems...)
	}
	lit := hlo.NewLiteral(s)
	for i := 0; i < lit.NumElements(); i++ {
		switch dt := s.DType; {
		case dt == hlo.Pred:
			lit.SetBool(i, rng.IntN(2) == 1)
		case dt.IsFloat():
			lit.SetFloat64(i, d.lo+(d.hi-d.lo)*rng.Float64())
		case dt.IsComplex(): // each part in d
			lit.SetComplex128(i, complex(d.lo+(d.hi-d.lo)*rng.Float64(), d.lo+(d.hi-d.lo)*rng.Float64()))
		case dt.IsUnsigned():
			lit.SetUint64(i, randomInt(rng, dt, d))
		default:
			lit.SetInt64(i, int64(randomInt(rng, dt, d)))
		}
	}
	return lit
}

// randomInt draws integers: inside the domain when it is integral and narrow (shift
// amounts, indices), else full-width random bits.
func randomInt(rng *rand.Rand, dt hlo.DType, d domain) uint64 {
	if d != unitDomain && d.hi-d.lo < 1<<20 {
		return uint64(int64(math.Floor(d.lo)) + rng.Int64N(int64(d.hi-d.lo)+1))
	}
	return rng.Uint64()
}

// checkAgainstCPU runs m on the device and on cpuref and compares every output
// within spec (exact when spec is zero).
func checkAgainstCPU(t testing.TB, rt *vkxla.Runtime, m *hlo.Module, spec vkxla.ErrorSpec, inputs ...*hlo.Literal) {
	t.Helper()
	checkCompiledAgainstCPU(t, rt, m, nil, spec, inputs...)
}

// checkCompiledAgainstCPU is checkAgainstCPU with compile options (passes off, …).
// Both sides draw rng from the state of testRngSeed.
func checkCompiledAgainstCPU(t testing.TB, rt *vkxla.Runtime, m *hlo.Module, opts []vkxla.CompileOption, spec vkxla.ErrorSpec, inputs ...*hlo.Literal) {
	t.Helper()
	checkAgainstReference(t, rt, m, m, opts, spec, inputs...)
}

// checkAgainstReference runs m on the GPU and ref (m itself, or a module that
// computes the same outputs from the same inputs by ops cpuref evaluates) in
// cpuref, and compares their outputs within spec.
func checkAgainstReference(t testing.TB, rt *vkxla.Runtime, m, ref *hlo.Module, opts []vkxla.CompileOption, spec vkxla.ErrorSpec, inputs ...*hlo.Literal) {
	t.Helper()
	want, _, err := cpuref.Limits{}.EvalWithRngState(context.Background(), ref, hlo.RngSeedState(testRngSeed), inputs...)
	require.NoError(t, err, "cpuref")
	exe, err := rt.Compile(context.Background(), m, opts...)
	require.NoError(t, err, "compile")
	defer func() { require.NoError(t, exe.Close()) }()
	require.NoError(t, exe.SeedRng(testRngSeed))
	got, err := exe.Run(context.Background(), inputs...)
	require.NoError(t, err, "run")
	wantLeaves := want.Leaves()
	require.Len(t, got, len(wantLeaves))
	for i := range got {
		require.NoError(t, spec.Check(got[i], wantLeaves[i]), "output %d (tolerance %+v) of\n%s", i, spec, hlo.Print(m))
		if got[i].DType().IsComplex() && !spec.Exact() {
			t.Logf("output %d: at most %.3g ε of the modulus from cpuref (tolerance %+v)", i, complexError(got[i], wantLeaves[i]), spec)
		}
	}
}

// testRngSeed seeds the RNG state of the differential checks.
const testRngSeed = 0x5eed

// mustBuild builds a module or fails the test.
func mustBuild(t testing.TB, b *hlo.Builder, root *hlo.Instruction) *hlo.Module {
	t.Helper()
	m, err := b.Build(root)
	require.NoError(t, err)
	return m
}

func inf() float64     { return math.Inf(1) }
func nan64() float64   { return math.NaN() }
func negZero() float64 { return math.Copysign(0, -1) }
