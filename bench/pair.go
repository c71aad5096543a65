package bench

import (
	"context"
	"math"
	"time"

	"github.com/vkxla/vkxla"
)

// Pair is a program measured against a reference program in the same
// interleaved rounds, each with its own work per run (flops or bytes), so that
// the two figures (work per second) can be compared although the work differs:
// a model's GFLOP/s against the same run's sgemm, a convolution against the GEMM
// of its im2col shape, a softmax against an elementwise copy.
type Pair struct {
	Name                       string
	Unit                       string // of both figures: "GFLOP/s" or "GB/s"
	Program, Reference         Variant
	ProgramWork, ReferenceWork float64
}

// PairResult is a measured pair.
type PairResult struct {
	Pair
	Program, Reference Measured
}

// MeasurePair sets up both programs on rt and runs them reps times interleaved.
func MeasurePair(ctx context.Context, rt *vkxla.Runtime, p Pair, reps int) (PairResult, error) {
	res, err := Run(ctx, rt, Workload{Name: p.Name, Unit: p.Unit, Work: p.ProgramWork,
		Generated: []Variant{p.Program}, Baselines: []Variant{p.Reference}}, reps)
	if err != nil {
		return PairResult{}, err
	}
	return PairResult{Pair: p, Program: res.Variants[0], Reference: res.Variants[1]}, nil
}

// rate is work per second ×1e-9 for a time per run.
func rate(work float64, d time.Duration) float64 {
	if d <= 0 {
		return math.NaN()
	}
	return work / d.Seconds() / 1e9
}

// ProgramFigure is the program's figure from its best time.
func (r PairResult) ProgramFigure() float64 { return rate(r.ProgramWork, r.Program.Stats.Best()) }

// ReferenceFigure is the reference's figure from its best time.
func (r PairResult) ReferenceFigure() float64 { return rate(r.ReferenceWork, r.Reference.Stats.Best()) }

// RoundShare is the median over the rounds of the program's figure ÷ the
// reference's figure in the same round (RoundRatio scaled by the works).
func (r PairResult) RoundShare() float64 {
	return RoundRatio(r.Program.Stats, r.Reference.Stats) * r.ProgramWork / r.ReferenceWork
}

// RoundTimeRatio is how many times the reference's time the program takes: the
// reciprocal of the median over the rounds of reference time ÷ program time.
func (r PairResult) RoundTimeRatio() float64 {
	return 1 / RoundRatio(r.Program.Stats, r.Reference.Stats)
}
