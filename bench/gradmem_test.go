package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// TestGradMemoryCurve measures a small deep-MLP step and a 2-block transformer
// step: every met budget's plan is within it (and runs with the unbudgeted run's
// bits), 5% of the peak is refused with ErrOverBudget, the floor lies between the
// largest refused budget and the unbudgeted peak and is met, and the unfused
// unshared total is above the default plan's peak. The MLP's first checkpointed
// variant (regions that save nothing; the others are left out for time) needs
// less than the unbudgeted peak, runs within the program's tolerance of the
// unbudgeted step, and its budgets and floor follow the same rules.
func TestGradMemoryCurve(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	mlp, err := DeepMLPCase(4, 16, 64)
	require.NoError(t, err)
	lm, err := TransformerCase(train.LMConfig{Blocks: 2, Seq: 8, Dim: 8, Heads: 2, Hidden: 16, Vocab: 8, Batch: 2})
	require.NoError(t, err)
	mlp.Checkpointed, lm.Checkpointed = mlp.Checkpointed[:1], nil
	for _, c := range []GradCase{mlp, lm} {
		curve, err := GradMemory(context.Background(), rt, c, []int{80, 5}, 1, true)
		require.NoError(t, err, c.Name)
		p := curve.Points
		ckpt := p[5:]
		p = p[:5]
		require.Equal(t, curve.Unbudgeted, p[0].Peak)
		require.Greater(t, p[1].Peak, curve.Unbudgeted, "no fusion, no reuse")
		require.False(t, p[2].Refused)
		require.LessOrEqual(t, p[2].Peak, p[2].Budget)
		require.True(t, p[3].Refused, "a budget of 5%% of %d bytes", curve.Unbudgeted)
		floor := p[4]
		require.Greater(t, curve.Floor, p[3].Budget)
		require.LessOrEqual(t, curve.Floor, curve.Unbudgeted)
		require.LessOrEqual(t, floor.Peak, curve.Floor)
		for _, q := range p {
			if !q.Refused {
				require.Positive(t, q.Time, q.Config)
			}
		}
		var out bytes.Buffer
		WriteMemoryCurve(&out, curve)
		require.Contains(t, out.String(), "over budget (ErrOverBudget)")
		require.Contains(t, out.String(), "| floor (smallest budget met) |")
		if c.Checkpointed == nil {
			require.Empty(t, ckpt)
			continue
		}
		require.Contains(t, out.String(), "| "+ckpt[0].Config+" |")
		require.Equal(t, "checkpoint: "+c.Checkpointed[0].Name, ckpt[0].Config)
		require.Less(t, ckpt[0].Peak, curve.Unbudgeted)
		floor = ckpt[len(ckpt)-1]
		require.True(t, strings.HasSuffix(floor.Config, "floor (smallest budget met)"), floor.Config)
		require.LessOrEqual(t, floor.Budget, ckpt[0].Peak)
		for i, q := range ckpt[1:] {
			require.True(t, strings.HasPrefix(q.Config, ckpt[0].Config+" + "), q.Config)
			if i < len(ckpt)-2 { // the floor may be the variant's own peak (checked above)
				require.Less(t, q.Budget, ckpt[0].Peak, "budgets above the variant's own peak are left out")
			}
			if !q.Refused {
				require.LessOrEqual(t, q.Peak, q.Budget, q.Config)
				require.Positive(t, q.Time, q.Config)
			}
		}
	}
}
