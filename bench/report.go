package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vkxla/vkxla"
)

// Compared is the time per run that the workload's variants are compared by: the
// best GPU time (best wall time without timestamps) for throughput workloads, the
// mean wall time for a latency workload.
func (w Workload) Compared(s Stats) time.Duration {
	if w.Latency() {
		return s.MeanWall()
	}
	return s.Best()
}

// Measured is one variant's outcome.
type Measured struct {
	Name      string // the runner's name, with its dispatch count
	Generated bool
	Stats     Stats
	PeakBytes int64
	// LowerBoundBytes is the executable's MemoryStats().LowerBoundBytes (0 for
	// variants that are not executables).
	LowerBoundBytes int64
	Dispatches      int
}

// Result is a measured workload.
type Result struct {
	Workload Workload
	Variants []Measured
}

// BestBaseline returns the fastest baseline (ok false if none was measured).
func (r Result) BestBaseline() (Measured, bool) {
	var best Measured
	ok := false
	for _, v := range r.Variants {
		if !v.Generated && (!ok || r.Workload.Compared(v.Stats) < r.Workload.Compared(best.Stats)) {
			best, ok = v, true
		}
	}
	return best, ok
}

// LatencyRuns is the fewest runs of a latency workload: one run is a few hundred
// microseconds, and a handful of them says little on a shared machine.
const LatencyRuns = 200

// Run sets up every variant of w on rt, runs them reps times interleaved (at least
// LatencyRuns times for a latency workload), and closes them.
func Run(ctx context.Context, rt *vkxla.Runtime, w Workload, reps int) (res Result, err error) {
	res.Workload = w
	var runners []Runner
	defer func() {
		for _, r := range runners {
			err = errors.Join(err, r.Close())
		}
	}()
	add := func(vs []Variant, generated bool) error {
		for _, v := range vs {
			r, err := v.New(ctx, rt)
			if err != nil {
				return fmt.Errorf("%s: %w", w.Name, err)
			}
			runners = append(runners, r)
			res.Variants = append(res.Variants, Measured{Generated: generated})
		}
		return nil
	}
	if err := add(w.Generated, true); err != nil {
		return res, err
	}
	if err := add(w.Baselines, false); err != nil {
		return res, err
	}
	if w.Latency() {
		reps = max(reps, LatencyRuns)
	}
	stats, err := Measure(ctx, runners, reps)
	if err != nil {
		return res, fmt.Errorf("%s: %w", w.Name, err)
	}
	for i, r := range runners {
		v := &res.Variants[i]
		v.Name, v.Stats, v.PeakBytes, v.Dispatches = r.Name(), stats[i], r.PeakBytes(), stats[i].Dispatches
		if lb, ok := r.(interface{ LowerBoundBytes() int64 }); ok {
			v.LowerBoundBytes = lb.LowerBoundBytes()
		}
	}
	return res, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Nanoseconds())/1e6) }

// figure formats a variant's figure with the workload's unit.
func (w Workload) figure(s Stats) string {
	return fmt.Sprintf("%s %s", num(w.Figure(w.Compared(s))), w.Unit)
}

// num formats a figure with three significant digits, never in exponent form.
func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// WriteSummary writes the markdown table of generated variants against the best
// baseline: one row per generated variant, with the ratio of best times and the
// median ratio of the interleaved rounds (RoundRatio).
func WriteSummary(out io.Writer, results []Result) {
	fmt.Fprintln(out, "| benchmark | generated | figure | best baseline | figure | ratio | round ratio | peak bytes (generated) |")
	fmt.Fprintln(out, "|---|---|---:|---|---:|---:|---:|---:|")
	for _, r := range results {
		base, ok := r.BestBaseline()
		for _, v := range r.Variants {
			if !v.Generated {
				continue
			}
			baseName, baseFig, ratio, round := "—", "—", "—", "—"
			if ok {
				baseName, baseFig = base.Name, r.Workload.figure(base.Stats)
				ratio = fmt.Sprintf("%.2f×", Speedup(r.Workload.Compared(v.Stats), r.Workload.Compared(base.Stats)))
				round = fmt.Sprintf("%.2f×", RoundRatio(v.Stats, base.Stats))
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", r.Workload.Name, v.Name,
				r.Workload.figure(v.Stats), baseName, baseFig, ratio, round, v.PeakBytes)
		}
	}
}

// WriteDetails writes the markdown table of every variant's times.
func WriteDetails(out io.Writer, results []Result) {
	fmt.Fprintln(out, "| benchmark | variant | runs | best GPU ms | mean wall ms | figure | peak bytes |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range results {
		for _, v := range r.Variants {
			fmt.Fprintf(out, "| %s | %s | %d | %s | %s | %s | %d |\n", r.Workload.Name, v.Name, v.Stats.Runs,
				ms(v.Stats.BestGPU), ms(v.Stats.MeanWall()), r.Workload.figure(v.Stats), v.PeakBytes)
		}
	}
}
