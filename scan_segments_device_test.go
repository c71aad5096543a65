package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/scanprog"
)

// segmentScan is the runnable every-k scan: two scans of 64 steps over
// f32[64,16], plain and with the segments of every (0: ⌈√64⌉ = 8).
func segmentScan(every int64) (plain, seg scanprog.Program) {
	plain = scanprog.Program{Steps: 64, Rows: 64, Cols: 16, Scans: 2}
	seg = plain
	seg.Segmented, seg.Every = true, every
	return plain, seg
}

// TestScanSegmentedOnDevice runs the every-k derivative of the scans on the GPU
// (segments of 8, and of 5: twelve and a tail of 4) against cpuref of the same
// module and against cpuref of the plain derivative (the same gradients), and
// checks that its plan is smaller than the plain one's.
func TestScanSegmentedOnDevice(t *testing.T) {
	rt := newRuntime(t)
	for _, every := range []int64{0, 5} {
		plain, seg := segmentScan(every)
		x := randomLiteral(rand.New(rand.NewPCG(18, 3)), plain.State(), unitDomain)
		pm, err := plain.Module()
		require.NoError(t, err)
		sm, err := seg.Module()
		require.NoError(t, err)
		spec := vkxla.ProgramTolerance(sm, hlo.F32)
		checkAgainstCPU(t, rt, sm, spec, x)
		want, err := cpuref.Eval(pm, x)
		require.NoError(t, err)
		exe, err := rt.Compile(context.Background(), sm)
		require.NoError(t, err)
		got, err := exe.Run(context.Background(), x)
		require.NoError(t, err)
		for i, w := range want.Leaves() {
			require.NoError(t, spec.Check(got[i], w), "every %d: output %d against the plain derivative", every, i)
		}
		segPeak := exe.MemoryStats().PeakBytes
		require.NoError(t, exe.Close())
		pe, err := rt.Compile(context.Background(), pm)
		require.NoError(t, err)
		plainPeak := pe.MemoryStats().PeakBytes
		require.NoError(t, pe.Close())
		assert.Less(t, segPeak, plainPeak, "every %d: the segmented plan is smaller", every)
		t.Logf("every %d: plain peak %d B, segmented %d B", every, plainPeak, segPeak)
	}
}

// BenchmarkScanSegmentedOnDevice reports the recompute cost of every-k
// checkpointing on the device: the best run time of the segmented derivative
// (k = 8) over the plain one's, measured in the same process.
func BenchmarkScanSegmentedOnDevice(b *testing.B) {
	rt := newRuntime(b)
	plain, seg := segmentScan(0)
	x := randomLiteral(rand.New(rand.NewPCG(18, 3)), plain.State(), unitDomain)
	best := func(p scanprog.Program) time.Duration {
		m, err := p.Module()
		require.NoError(b, err)
		exe, err := rt.Compile(context.Background(), m)
		require.NoError(b, err)
		defer func() { require.NoError(b, exe.Close()) }()
		fastest := time.Duration(1 << 62)
		for range 5 {
			start := time.Now()
			_, err := exe.Run(context.Background(), x)
			require.NoError(b, err)
			fastest = min(fastest, time.Since(start))
		}
		return fastest
	}
	for range b.N {
		p, s := best(plain), best(seg)
		b.ReportMetric(p.Seconds()*1e3, "plain-ms")
		b.ReportMetric(s.Seconds()*1e3, "segmented-ms")
		b.ReportMetric(float64(s)/float64(p), "segmented/plain")
	}
}
