package spmd

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkDataParallelStep: the MLP training step (mlpStep, batch 32) on one
// device against the same step partitioned for 2 and 4 logical devices of the
// one lavapipe device (CompileReplicated), interleaved in one process, median
// wall time per step of each (literals in and out for both: the replicated run
// takes and returns literals). Metrics: x-one, a partitioned step's time over
// the one-device step's; allreduces and allreduce-bytes, the all-reduces of the
// partitioned step and the bytes each device contributes to them per step (the
// host step moves each through host memory; every device receives every
// member's).
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench DataParallelStep -benchtime 20x ./spmd/
func BenchmarkDataParallelStep(b *testing.B) {
	step := mlpStep(b)
	in := stepInputs(step)
	ctx := context.Background()
	one := newRuntimes(b, 1)[0]
	exe, err := one.Compile(ctx, step.Module)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, exe.Close()) })
	for _, n := range []int{2, 4} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := dataParallel(step, n)
			pm, err := Partition(m, n)
			require.NoError(b, err)
			per, err := ShardInputs(m, n, in)
			require.NoError(b, err)
			rep, err := vkxla.CompileReplicated(ctx, pm, newRuntimes(b, n), vkxla.WithPartitions(n))
			require.NoError(b, err)
			b.Cleanup(func() { require.NoError(b, rep.Close()) })
			runs := []func() error{
				func() error { _, err := exe.Run(ctx, in...); return err },
				func() error { _, err := rep.Run(ctx, per); return err },
			}
			times := [2][]time.Duration{}
			for k := range b.N {
				for j := range runs {
					i := (j + k) % 2
					start := time.Now()
					require.NoError(b, runs[i]())
					times[i] = append(times[i], time.Since(start))
				}
			}
			med := func(ts []time.Duration) float64 {
				ts = slices.Clone(ts)
				slices.Sort(ts)
				return ts[len(ts)/2].Seconds()
			}
			count, bytes := allReduces(pm)
			b.ReportMetric(med(times[1])/med(times[0]), "x-one")
			b.ReportMetric(med(times[0])*1e3, "one-ms/step")
			b.ReportMetric(med(times[1])*1e3, "partitioned-ms/step")
			b.ReportMetric(float64(count), "allreduces")
			b.ReportMetric(float64(bytes), "allreduce-bytes")
		})
	}
}

// allReduces counts the all-reduces of m's entry and the bytes of their operands.
func allReduces(m *hlo.Module) (count int, bytes int64) {
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpAllReduce {
			count++
			for _, x := range in.Operands {
				bytes += x.Shape.ByteSize()
			}
		}
	}
	return count, bytes
}
