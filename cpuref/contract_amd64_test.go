package cpuref

import (
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/vkxla/vkxla/hlo"
)

// measuredPeak is the float32 GFLOP/s of fused multiply-adds on every core at once,
// measured now (so in the same conditions as the benchmark beside it).
func measuredPeak(b *testing.B) float64 {
	if !cpuidFMA() || !hasAVX2 {
		b.Fatal("the peak measure needs AVX2 and FMA")
	}
	const iters = 20_000_000
	workers := runtime.GOMAXPROCS(0)
	best := 0.0
	for range 3 {
		start := time.Now()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() { fmaPeakLoop(iters) })
		}
		wg.Wait()
		best = max(best, float64(workers)*iters*192/time.Since(start).Seconds()/1e9)
	}
	return best
}

// BenchmarkDot1024: a 1024³ float32 dot, reported in GFLOP/s and as a share of the
// machine's float32 FMA peak measured in the same process (issue 17: at least 25 %).
func BenchmarkDot1024(b *testing.B) {
	const n = 1024
	r := rand.New(rand.NewSource(1))
	s := hlo.MakeShape(hlo.F32, n, n)
	x, y := randomLiteral(r, s, false), randomLiteral(r, s, false)
	bld := hlo.NewBuilder("dot")
	d := bld.Dot(bld.Parameter(s, "x"), bld.Parameter(s, "y"))
	if err := bld.Err(); err != nil {
		b.Fatal(err)
	}
	ops := []*hlo.Literal{x, y}
	peak := measuredPeak(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := evalDot(newEvaluator(b.Context(), Limits{}), d, ops); err != nil {
			b.Fatal(err)
		}
	}
	gflops := 2 * n * n * n * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(gflops, "GFLOP/s")
	b.ReportMetric(peak, "peak-GFLOP/s")
	b.ReportMetric(100*gflops/peak, "%peak")
}

// TestContractionKernelsMatchSerialLoop: the bit-for-bit tests again on the AVX2
// kernels and on the portable one, whichever this processor would pick.
func TestContractionKernelsMatchSerialLoop(t *testing.T) {
	avx2, avx512 := hasAVX2, hasAVX512
	defer func() { hasAVX2, hasAVX512 = avx2, avx512 }()
	for _, k := range []struct {
		name         string
		avx2, avx512 bool
	}{{"avx2", avx2, false}, {"portable", false, false}} {
		hasAVX2, hasAVX512 = k.avx2, k.avx512
		t.Run(k.name+"/dot", TestDotMatchesSerialLoop)
		t.Run(k.name+"/convolution", TestConvolutionMatchesSerialLoop)
	}
}
