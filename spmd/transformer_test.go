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

// The transformer LM step of hlo/nn/train (2 blocks, causal attention, GELU MLP,
// SGD with momentum), batch 4, partitioned data-parallel (dataParallel: the
// token and target batches split along dimension 0) for 2 and 4 devices: on
// cpuref.EvalReplicas and on as many logical GPU devices, every device's loss,
// updated weights and momenta are the one-device step's within the program
// tolerance.
func TestDataParallelTransformerStep(t *testing.T) {
	c := train.LMConfig{Blocks: 2, Seq: 8, Dim: 16, Heads: 2, Hidden: 32, Vocab: 11, Batch: 4}
	step, err := train.Build(train.TransformerLM("lm", hlo.F32, c), train.SGD{LR: 0.1, Momentum: 0.9})
	require.NoError(t, err)
	tokens, targets := train.OneHotSequences(3, hlo.F32, c.Batch, c.Seq, c.Vocab)
	in := append(step.Init(4), tokens, targets)
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	want, err := cpuref.Eval(step.Module, in...)
	require.NoError(t, err)
	ctx := context.Background()
	rts := newRuntimes(t, 4)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			m := dataParallel(step, n)
			pm, err := Partition(m, n)
			require.NoError(t, err)
			per, err := ShardInputs(m, n, in)
			require.NoError(t, err)
			onCPU, err := cpuref.EvalReplicas(ctx, pm, 1, n, per)
			require.NoError(t, err)
			r, err := vkxla.CompileReplicated(ctx, pm, rts[:n], vkxla.WithPartitions(n))
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			onGPU, err := r.Run(ctx, per)
			require.NoError(t, err)
			for d := range n {
				require.NoError(t, spec.Check(onCPU[d], want), "cpuref, device %d of %d", d, n)
				require.Len(t, onGPU[d], len(want.Elems()))
				for k, w := range want.Elems() {
					require.NoError(t, spec.Check(onGPU[d][k], w), "GPU, device %d of %d, output %d", d, n, k)
				}
			}
		})
	}
}
