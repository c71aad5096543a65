package spmd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// The MLP training step of hlo/nn/train (SGD with momentum), batch 32:
// 8 → 32 → 32 → 4.
const stepBatch = 32

func mlpStep(t testing.TB) *train.Step {
	step, err := train.Build(train.MLP("mlp", hlo.F32, stepBatch, 8, 32, 32, 4), train.SGD{LR: 0.1, Momentum: 0.9})
	require.NoError(t, err)
	return step
}

// dataParallel annotates the step's batch inputs (the last two parameters)
// split along dimension 0 over n devices, everything else replicated, as
// jax.jit with a batch NamedSharding writes it.
func dataParallel(step *train.Step, n int) *hlo.Module {
	m := step.Module.Clone()
	params := m.Entry.Params
	for i, p := range params {
		if i >= len(params)-len(step.Model.Batch) {
			p.Sharding = hlo.Tiled([]int64{int64(n), 1}, nil)
		} else {
			p.Sharding = hlo.Replicated()
		}
	}
	return m
}

func stepInputs(step *train.Step) []*hlo.Literal {
	x, labels := train.Blobs(7, hlo.F32, stepBatch, 8, 4, 0.5)
	return append(step.Init(3), x, labels)
}

// The data-parallel step on 2 and 4 partitions of cpuref equals the one-device
// step: the same loss, updated weights, momenta and t on every device.
func TestDataParallelStepOnCPU(t *testing.T) {
	step := mlpStep(t)
	in := stepInputs(step)
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := dataParallel(step, n)
			want, err := cpuref.Eval(m, in...)
			require.NoError(t, err)
			pm, err := Partition(m, n)
			require.NoError(t, err)
			per, err := ShardInputs(m, n, in)
			require.NoError(t, err)
			got, err := cpuref.EvalReplicas(context.Background(), pm, 1, n, per)
			require.NoError(t, err)
			for d, g := range got {
				require.NoError(t, spec.Check(g, want), "device %d of %d", d, n)
			}
		})
	}
}

// The data-parallel step partitioned for 2 and 4 devices runs on as many
// logical devices of the GPU (vkxla.CompileReplicated, one lavapipe device
// opened n times) and gives the one-device step's outputs on every device,
// within the program tolerance. Each device's planned peak is stated before
// the run; its batch tiles shrink with n, the replicated weights do not.
func TestDataParallelStepOnDevice(t *testing.T) {
	step := mlpStep(t)
	in := stepInputs(step)
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	one := openRuntime(t)
	exe, err := one.Compile(ctx, step.Module)
	require.NoError(t, err)
	onePeak := exe.MemoryStats().PeakBytes
	want, err := exe.Run(ctx, in...)
	require.NoError(t, err)
	require.NoError(t, exe.Close())
	peaks := map[int]int64{}
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := dataParallel(step, n)
			pm, err := Partition(m, n)
			require.NoError(t, err)
			per, err := ShardInputs(m, n, in)
			require.NoError(t, err)
			rts := make([]*vkxla.Runtime, n)
			for i := range rts {
				rts[i] = openRuntime(t)
			}
			rep, err := vkxla.CompileReplicated(ctx, pm, rts, vkxla.WithPartitions(n))
			require.NoError(t, err)
			defer func() { require.NoError(t, rep.Close()) }()
			got, err := rep.Run(ctx, per)
			require.NoError(t, err)
			for d, outs := range got {
				require.Len(t, outs, len(want))
				for k := range want {
					require.NoError(t, spec.Check(outs[k], want[k]), "device %d of %d, output %d", d, n, k)
				}
				require.Equal(t, rep.MemoryStats(0).PeakBytes, rep.MemoryStats(d).PeakBytes, "every device runs the same plan")
			}
			peaks[n] = rep.MemoryStats(0).PeakBytes
			t.Logf("%d devices: per-device peak %d B (one device: %d B)", n, peaks[n], onePeak)
		})
	}
	// Planned bytes are deterministic: 31152 B on one device (batch 32), 21488 B
	// on each of 2 (16 rows each), 17984 B on each of 4 (8 rows each).
	require.Equal(t, int64(31152), onePeak)
	require.Equal(t, map[int]int64{2: 21488, 4: 17984}, peaks)
}

func openRuntime(t *testing.T) *vkxla.Runtime {
	t.Helper()
	d := devicetest.Open(t)
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "Vulkan objects the runtime left behind after Close")
	})
	return rt
}
