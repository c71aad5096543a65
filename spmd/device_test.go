package spmd

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

func newRuntimes(t testing.TB, n int) []*vkxla.Runtime {
	rts := make([]*vkxla.Runtime, n)
	for i := range rts {
		d := devicetest.Open(t)
		rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
		require.NoError(t, err)
		t.Cleanup(func() {
			require.NoError(t, rt.Close())
			require.Zero(t, d.LiveObjects(), "Vulkan objects the runtime left behind after Close")
		})
		rts[i] = rt
	}
	return rts
}

// The data-parallel MLP step partitioned for 2 and 4 logical devices runs on
// the GPU (one lavapipe device, one runtime per logical device) and gives every
// device the one-device step's loss, weights, momenta and t within the
// program's tolerance, and cpuref's. Each device's plan holds its share of the
// batch: its peak is below the one-device step's.
func TestDataParallelStepOnGPU(t *testing.T) {
	step := mlpStep(t)
	in := stepInputs(step)
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	ctx := context.Background()
	rts := newRuntimes(t, 4)
	exe, err := rts[0].Compile(ctx, step.Module)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	want, err := exe.Run(ctx, in...)
	require.NoError(t, err)
	ref, err := cpuref.Eval(step.Module, in...)
	require.NoError(t, err)
	onePeak := exe.MemoryStats().PeakBytes
	peaks := map[int]int64{}
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := dataParallel(step, n)
			pm, err := Partition(m, n)
			require.NoError(t, err)
			per, err := ShardInputs(m, n, in)
			require.NoError(t, err)
			r, err := vkxla.CompileReplicated(ctx, pm, rts[:n], vkxla.WithPartitions(n))
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			got, err := r.Run(ctx, per)
			require.NoError(t, err)
			for d := range got {
				require.Len(t, got[d], len(want))
				for k := range want {
					require.NoError(t, spec.Check(got[d][k], want[k]), "device %d of %d, output %d", d, n, k)
					require.NoError(t, spec.Check(got[d][k], ref.Elems()[k]), "device %d of %d, output %d vs cpuref", d, n, k)
				}
				assert.Equal(t, r.MemoryStats(0), r.MemoryStats(d))
			}
			peaks[n] = r.MemoryStats(0).PeakBytes
			t.Logf("peak per device: %d of %d devices, one device %d", peaks[n], n, onePeak)
		})
	}
	// The plans' peaks (deterministic: the planner's bytes for this step).
	assert.Equal(t, int64(31152), onePeak)
	assert.Equal(t, int64(21488), peaks[2])
	assert.Equal(t, int64(17984), peaks[4])
	assert.Less(t, peaks[2], onePeak)
	assert.Less(t, peaks[4], peaks[2])
}
