package spmd

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
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
			tiles := make([]int64, p.Shape.Rank())
			for d := range tiles {
				tiles[d] = 1
			}
			tiles[0] = int64(n)
			p.Sharding = hlo.Tiled(tiles, nil)
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
