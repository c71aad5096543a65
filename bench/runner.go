package bench

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vkxla/vkxla"
)

// Sample is one run of a variant.
type Sample struct {
	Wall       time.Duration // host time of the run, submission to completion
	GPU        time.Duration // sum of the dispatches' GPU times; 0 without timestamps
	Dispatches int
}

// Runner is one variant of a workload, set up on a device and ready to run.
type Runner interface {
	// Name describes the variant (its dispatch count included once known).
	Name() string
	// Run executes the variant once.
	Run(ctx context.Context) (Sample, error)
	// PeakBytes is the device memory the variant holds.
	PeakBytes() int64
	// Close frees the variant's device objects.
	Close() error
}

// Stats accumulates the samples of one variant.
type Stats struct {
	Runs       int
	BestGPU    time.Duration
	BestWall   time.Duration
	TotalWall  time.Duration
	Dispatches int
	// Times is each run's time in order (GPU time, or wall time without
	// timestamps): run k of every variant of a workload is round k of the
	// interleaving, which RoundRatio pairs up.
	Times []time.Duration
}

// Add records a sample.
func (s *Stats) Add(x Sample) {
	if s.Runs == 0 || x.GPU < s.BestGPU {
		s.BestGPU = x.GPU
	}
	if s.Runs == 0 || x.Wall < s.BestWall {
		s.BestWall = x.Wall
	}
	s.Runs++
	s.TotalWall += x.Wall
	s.Dispatches = x.Dispatches
	s.Times = append(s.Times, cmp.Or(x.GPU, x.Wall))
}

// RoundRatio is the median over the rounds of base's time ÷ gen's time in the same
// round: a speedup that a load spike during one round cannot move much, unlike the
// ratio of best times, where each variant keeps its own luckiest run.
func RoundRatio(gen, base Stats) float64 {
	n := min(len(gen.Times), len(base.Times))
	if n == 0 {
		return math.NaN()
	}
	ratios := make([]float64, n)
	for k := range n {
		ratios[k] = Speedup(gen.Times[k], base.Times[k])
	}
	slices.Sort(ratios)
	if n%2 == 1 {
		return ratios[n/2]
	}
	return (ratios[n/2-1] + ratios[n/2]) / 2
}

// MeanWall is the mean wall time per run.
func (s Stats) MeanWall() time.Duration {
	if s.Runs == 0 {
		return 0
	}
	return s.TotalWall / time.Duration(s.Runs)
}

// Best is the time compared between variants: the best GPU time, or the best wall
// time where the device has no timestamps.
func (s Stats) Best() time.Duration {
	if s.BestGPU > 0 {
		return s.BestGPU
	}
	return s.BestWall
}

// Variant is a named way to run a workload.
type Variant struct {
	Name string // short, usable as a sub-benchmark name
	New  func(ctx context.Context, rt *vkxla.Runtime) (Runner, error)
}

// Workload is one comparison: generated variants against hand-written baselines.
type Workload struct {
	Name string // "saxpy f32[16777216]"
	// Unit is the figure reported: "GB/s" or "GFLOP/s" (Work per second, ×1e-9), or
	// "µs" for a latency workload (Work is then 0, and less is better).
	Unit      string
	Work      float64 // bytes or floating-point operations per run
	Generated []Variant
	Baselines []Variant
}

// Latency reports whether the workload's figure is a time per run.
func (w Workload) Latency() bool { return w.Work == 0 }

// Figure is the workload's figure for a time per run: a rate, or microseconds.
func (w Workload) Figure(d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	if w.Latency() {
		return float64(d.Nanoseconds()) / 1e3
	}
	return w.Work / d.Seconds() / 1e9
}

// Speedup is how many times faster a variant taking d runs than one taking base:
// the "generated / best baseline" ratio of throughputs (≥ 1 meets the target).
func Speedup(d, base time.Duration) float64 {
	if d <= 0 || base <= 0 {
		return math.NaN()
	}
	return base.Seconds() / d.Seconds()
}

// Measure runs every runner reps times, interleaved (one run of each in turn, so
// that the machine's noise falls on all alike), and returns their statistics.
func Measure(ctx context.Context, runners []Runner, reps int) ([]Stats, error) {
	stats := make([]Stats, len(runners))
	for range reps {
		for i, r := range runners {
			s, err := r.Run(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.Name(), err)
			}
			stats[i].Add(s)
		}
	}
	return stats, nil
}
