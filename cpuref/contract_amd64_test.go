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
// "normal" is the GEMM benchmark proper: operands uniform in [-1, 1), as the peak
// loop's are normal numbers. "subnormals" is randomLiteral's mix (one operand in 40
// an f32 subnormal, others over 2^±20): cpuref keeps subnormals exact (no
// flush-to-zero), and on processors whose multiplies take a microcode assist for
// them (Sapphire Rapids-class Xeons: about 15× slower, docs/cpuref.md) that mix
// measures the assists, not the kernel.
func BenchmarkDot1024(b *testing.B) {
	const n = 1024
	s := hlo.MakeShape(hlo.F32, n, n)
	uniform := func(r *rand.Rand) *hlo.Literal {
		l := hlo.NewLiteral(s)
		for i := range l.NumElements() {
			l.SetFloat64(i, r.Float64()*2-1)
		}
		return l
	}
	for _, data := range []struct {
		name    string
		operand func(r *rand.Rand) *hlo.Literal
	}{
		{"normal", uniform},
		{"subnormals", func(r *rand.Rand) *hlo.Literal { return randomLiteral(r, s, false) }},
	} {
		b.Run(data.name, func(b *testing.B) {
			r := rand.New(rand.NewSource(1))
			x, y := data.operand(r), data.operand(r)
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
		})
	}
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
