package vkxla_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
)

// Generated kernels against the hand-written GLSL baselines of package shaders, on
// the same device in the same process (workloads from package bench):
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench . -benchtime 3x .
//
// Sub-benchmarks are the variants: the baselines first (named after their shader),
// then the generated ones ("vkxla": the module compiled and run with
// Executable.Run; "codegen-fused": the whole computation lowered by codegen.Lower
// into one program and dispatched directly, what fusion will give the runtime).
// Metrics: ns/op is the mean wall time of a run (for "vkxla", the whole Run with
// host upload and download); the unit metric (GB/s, GFLOP/s) comes from the best
// GPU time of the runs (timestamps, summed over dispatches), "wall-GB/s" etc. from
// the mean wall time; "x-best-baseline" is generated ÷ best baseline throughput
// (≥ 1 meets the target), "kernels" the dispatches per run, "peak-bytes" the
// device memory the variant holds (exe.MemoryStats().PeakBytes when generated).
// The validation layer (on by default in tests) slows host-side calls; turn it off
// for figures.

func BenchmarkSaxpy(b *testing.B) { benchWorkload(b, bench.SaxpyWorkload(16<<20)) }

// BenchmarkSgemm1024 takes about a second per run on lavapipe: use -benchtime 3x.
func BenchmarkSgemm1024(b *testing.B) { benchWorkload(b, bench.SgemmWorkload(1024, 1024, 1024)) }

func BenchmarkSgemm256(b *testing.B) { benchWorkload(b, bench.SgemmWorkload(256, 256, 256)) }

// BenchmarkDispatchOverhead: µs per Run of a one-op executable (negate f32[16]),
// wall, against the device package's raw round trip of one recorded dispatch. One
// op is a batch of latencyBatch runs, so that -benchtime 3x still averages
// hundreds; µs/run is per run.
func BenchmarkDispatchOverhead(b *testing.B) { benchWorkload(b, bench.DispatchWorkload(16)) }

// BenchmarkTrainStep: an 8-layer training step without a memory budget and under
// budgets of 95 and 90% of that plan's peak (rematerialisation): peak-bytes next
// to time.
func BenchmarkTrainStep(b *testing.B) {
	benchWorkload(b, bench.TrainWorkload(8, 128, 256, []int{95, 90}))
}

// latencyBatch is the runs per op of a latency benchmark.
const latencyBatch = 100

// benchWorkload runs each variant of w as a sub-benchmark on one runtime.
func benchWorkload(b *testing.B, w bench.Workload) {
	rt := newRuntime(b)
	ctx := context.Background()
	var best time.Duration // the best baseline's compared time; 0 until measured
	note := func(d time.Duration) {
		if best == 0 || d < best {
			best = d
		}
	}
	for _, v := range w.Baselines {
		b.Run(v.Name, func(b *testing.B) { note(benchVariant(b, ctx, rt, w, v, 0)) })
	}
	for _, v := range w.Generated {
		b.Run(v.Name, func(b *testing.B) {
			if best == 0 { // the baselines were filtered out: measure them here, untimed
				for _, bv := range w.Baselines {
					note(w.Compared(measureOnce(b, ctx, rt, bv)))
				}
			}
			benchVariant(b, ctx, rt, w, v, best)
		})
	}
}

// benchVariant times one variant and reports its metrics; with base > 0 (the best
// baseline's time) also the ratio. It returns the variant's compared time.
func benchVariant(b *testing.B, ctx context.Context, rt *vkxla.Runtime, w bench.Workload, v bench.Variant, base time.Duration) time.Duration {
	r, err := v.New(ctx, rt)
	require.NoError(b, err)
	defer func() { require.NoError(b, r.Close()) }()
	batch := 1
	if w.Latency() {
		batch = latencyBatch
	}
	var st bench.Stats
	for b.Loop() {
		for range batch {
			s, err := r.Run(ctx)
			if err != nil {
				b.Fatal(err)
			}
			st.Add(s)
		}
	}
	d := w.Compared(st)
	if w.Latency() {
		b.ReportMetric(w.Figure(d), "µs/run")
		if st.BestGPU > 0 {
			b.ReportMetric(float64(st.BestGPU.Nanoseconds())/1e3, "gpu-µs/run")
		}
	} else {
		b.ReportMetric(w.Figure(d), w.Unit)
		b.ReportMetric(w.Figure(st.MeanWall()), "wall-"+w.Unit)
	}
	if base > 0 {
		b.ReportMetric(bench.Speedup(d, base), "x-best-baseline")
	}
	b.ReportMetric(float64(st.Dispatches), "kernels")
	b.ReportMetric(float64(r.PeakBytes()), "peak-bytes")
	b.Logf("%s: best GPU %v, mean wall %v", r.Name(), st.BestGPU, st.MeanWall())
	return d
}

// measureOnce sets up a variant, runs it three times and returns its statistics.
func measureOnce(b *testing.B, ctx context.Context, rt *vkxla.Runtime, v bench.Variant) bench.Stats {
	r, err := v.New(ctx, rt)
	require.NoError(b, err)
	defer func() { require.NoError(b, r.Close()) }()
	st, err := bench.Measure(ctx, []bench.Runner{r}, 3)
	require.NoError(b, err)
	return st[0]
}
