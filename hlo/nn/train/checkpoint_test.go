package train

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// TestCheckpointedStepsMatchPlain: the MLP's layers and the transformer's blocks
// in checkpointed regions, under each policy, give the plain step's outputs (loss,
// updated parameters and velocities) on cpuref in f64 to within 1e-12 relative
// (the same ops on the same values; only cotangents meeting at a region's
// argument are summed in another order), and the step holds the recomputation's
// barriers.
func TestCheckpointedStepsMatchPlain(t *testing.T) {
	x, y := Blobs(3, hlo.F64, 6, 3, 3, 0.5)
	tok, tgt := OneHotSequences(4, hlo.F64, 2, 4, 5)
	lm := LMConfig{Vocab: 5, Seq: 4, Dim: 4, Heads: 2, Hidden: 8, Batch: 2, Blocks: 3}
	policies := []hlo.CheckpointPolicy{hlo.NothingSaveable(), hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("none")}
	for _, every := range []int{1, 2} {
		for _, p := range policies {
			r := Remat{Every: every, Policy: p}
			ckptLM := lm
			ckptLM.Remat = r
			cases := []struct {
				plain, ckpt Model
				batch       []*hlo.Literal
			}{
				{MLP("mlp", hlo.F64, 6, 3, 5, 4, 4, 3), CheckpointedMLP("mlp", hlo.F64, 6, r, 3, 5, 4, 4, 3), []*hlo.Literal{x, y}},
				{TransformerLM("lm", hlo.F64, lm), TransformerLM("lm", hlo.F64, ckptLM), []*hlo.Literal{tok, tgt}},
			}
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/every %d/%v", c.plain.Name, every, p), func(t *testing.T) {
					plain, err := Build(c.plain, SGD{LR: 0.1, Momentum: 0.9})
					if err != nil {
						t.Fatal(err)
					}
					ckpt, err := Build(c.ckpt, SGD{LR: 0.1, Momentum: 0.9})
					if err != nil {
						t.Fatal(err)
					}
					if !holds(ckpt.Module, hlo.OpOptBarrier) || holds(plain.Module, hlo.OpOptBarrier) {
						t.Fatal("only the checkpointed step recomputes behind barriers")
					}
					state := plain.Init(7)
					want := run(t, plain, state, c.batch)
					got := run(t, ckpt, state, c.batch)
					for i := range want {
						if err := hlo.LiteralsClose(got[i], want[i], 0, 1e-12); err != nil {
							t.Fatalf("output %d: %v", i, err)
						}
					}
				})
			}
		}
	}
}

func holds(m *hlo.Module, op hlo.Opcode) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == op {
				return true
			}
		}
	}
	return false
}
