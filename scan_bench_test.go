package vkxla_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/scanprog"
)

// BenchmarkScanBudgets: the time a memory budget costs issue 18's differentiated
// scans (internal/scanprog: ten chained scans, value and gradient), at a size
// lavapipe runs (100 steps over f32[64,128]): the plain step and the same step
// compiled under budgets of 50, 25 and 20 % of its peak (remat recomputes forward
// loops before their backward loops), and each scan checkpointed, interleaved
// in one process (best GPU time of the runs). x-plain is a variant's time over
// the plain one's; peak-% its planned peak over the plain peak.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench ScanBudgets -benchtime 5x .
func BenchmarkScanBudgets(b *testing.B) {
	rt := newRuntime(b)
	plain := scanprog.Program{Steps: 100, Rows: 64, Cols: 128, Scans: 10}
	m, err := plain.Module()
	require.NoError(b, err)
	x := randomLiteral(rand.New(rand.NewPCG(18, 19)), plain.State(), unitDomain)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(b, err)
	peak := exe.MemoryStats().PeakBytes
	require.NoError(b, exe.Close())
	ckpt := plain
	ckpt.Variant = scanprog.ScanCheckpointed
	mc, err := ckpt.Module()
	require.NoError(b, err)
	names := []string{"plain", "checkpointed"}
	runs := []timedRun{{m: m, in: []*hlo.Literal{x}}, {m: mc, in: []*hlo.Literal{x}}}
	for _, pct := range []int64{50, 25, 20} {
		names = append(names, fmt.Sprintf("budget%d%%", pct))
		runs = append(runs, timedRun{m: m, in: []*hlo.Literal{x}, opts: []vkxla.CompileOption{vkxla.WithMemoryBudget(peak * pct / 100)}})
	}
	peaks := make([]int64, len(runs))
	for i, r := range runs {
		exe, err := rt.Compile(context.Background(), r.m, r.opts...)
		require.NoError(b, err, names[i])
		peaks[i] = exe.MemoryStats().PeakBytes
		require.NoError(b, exe.Close())
	}
	times := bestInterleavedN(b, rt, runs) // its timer reset drops metrics reported before it
	for i := 1; i < len(runs); i++ {
		b.ReportMetric(100*float64(peaks[i])/float64(peak), names[i]+"-peak-%")
		b.ReportMetric(times[i].Seconds()/times[0].Seconds(), names[i]+"-x-plain")
	}
	b.ReportMetric(times[0].Seconds()*1e3, "plain-ms")
}
