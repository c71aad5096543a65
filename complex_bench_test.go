package vkxla_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkComplexTranscendentals measures the c64 kernels on c64[1M] random
// values in [−2, 2]² against c64 negate (one load, one store, a sign flip) in the
// same process: exp and sine (the existing kernels, for scale), tanh, tan, expm1,
// log1p and power. Metrics from the best GPU time of the runs (timestamps):
// ns/elem, and x-copy = time ÷ negate's time.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench ComplexTranscendentals -benchtime 10x .
func BenchmarkComplexTranscendentals(b *testing.B) {
	rt := newRuntime(b)
	const n = 1 << 20
	g := &gen{rng: rand.New(rand.NewPCG(7, 9))}
	x, y := randomC64With(g, nil, n), randomC64With(g, nil, n)
	var copyTime time.Duration
	negate := func(b *testing.B) time.Duration { return bestGPUTime(b, rt, hlo.OpNegate, x) }
	for _, op := range []hlo.Opcode{hlo.OpNegate, hlo.OpExp, hlo.OpSin, hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p, hlo.OpPower} {
		b.Run(op.String(), func(b *testing.B) {
			var best time.Duration
			if op == hlo.OpPower {
				bl := hlo.NewBuilder("power")
				m := mustBuild(b, bl, bl.Pow(bl.Parameter(x.Shape(), "x"), bl.Parameter(y.Shape(), "y")))
				best = bestModuleTime(b, rt, m, x, y)
			} else {
				best = bestGPUTime(b, rt, op, x)
			}
			if op == hlo.OpNegate {
				copyTime = best
			} else if copyTime == 0 {
				copyTime = negate(b)
			}
			b.ReportMetric(float64(best.Nanoseconds())/n, "ns/elem")
			b.ReportMetric(float64(best)/float64(copyTime), "x-copy")
		})
	}
}
