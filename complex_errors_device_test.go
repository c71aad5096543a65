package vkxla_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// TestComplexTranscendentalWorstError logs, for each differential case of c64
// and c128 tanh, tan, expm1, log1p and power, the worst error against cpuref relative to
// the modulus (as hlo.LiteralsClose measures it, the modulus at least 2^-126), and
// requires it within the op's relative tolerance: the figures of docs/complex.md
// and docs/results.md come from `go test -v -run TestComplexTranscendentalWorstError .`.
func TestComplexTranscendentalWorstError(t *testing.T) {
	rt := newRuntime(t)
	g := &gen{rng: rand.New(rand.NewPCG(1, 2)), dtypes: supportedDTypes(rt.Device().Caps())}
	for _, c := range append(complexOpCases(t, g, hlo.C64), complexOpCases(t, g, hlo.C128)...) {
		if !isComplexTranscendentalCase(strings.TrimPrefix(c.name, "c128 ")) {
			continue
		}
		want, _, err := cpuref.Limits{}.EvalWithRngState(context.Background(), c.module, hlo.RngSeedState(testRngSeed), c.inputs...)
		require.NoError(t, err, c.name)
		exe, err := rt.Compile(context.Background(), c.module)
		require.NoError(t, err, c.name)
		got, err := exe.Run(context.Background(), c.inputs...)
		require.NoError(t, err, c.name)
		require.NoError(t, exe.Close())
		worst, at := worstModulusError(got[0], want.Leaves()[0])
		t.Logf("%-40s worst %.2g (element %d: %v)", c.name, worst, at, c.inputs[0].Complex128(max(at, 0)))
		require.LessOrEqual(t, worst, c.spec.Rel, c.name)
	}
}

func isComplexTranscendentalCase(name string) bool {
	for _, op := range []string{"tanh", "tan", "exponential-minus-one", "log-plus-one", "power"} {
		if strings.HasPrefix(name, op) {
			return true
		}
	}
	return false
}

// worstModulusError is the largest |got − want| of a part over max(|want|,
// 2^-126), over the elements where both parts are finite on both sides (the
// others must match exactly, which the differential suite checks), and its
// element (−1 for none).
func worstModulusError(got, want *hlo.Literal) (float64, int) {
	worst, at := 0.0, -1
	finite := func(z complex128) bool {
		return !math.IsNaN(real(z)) && !math.IsNaN(imag(z)) && !math.IsInf(real(z), 0) && !math.IsInf(imag(z), 0)
	}
	for i := range want.NumElements() {
		g, w := got.Complex128(i), want.Complex128(i)
		if !finite(g) || !finite(w) {
			continue
		}
		s := max(math.Hypot(real(w), imag(w)), 0x1p-126)
		if e := max(math.Abs(real(g)-real(w)), math.Abs(imag(g)-imag(w))) / s; e > worst {
			worst, at = e, i
		}
	}
	return worst, at
}
