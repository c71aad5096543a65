package train

import (
	"context"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// TestDataParallelStepMatchesWholeBatch: the MLP's data-parallel step on 2 and 3
// replicas, each on its shard of the batch (cpuref.EvalReplicas), gives every
// replica the outputs (loss, parameters, optimizer state, t) of the one-device
// step on the whole batch, in f64 to within 1e-12 relative: the same sums, in
// another order.
func TestDataParallelStepMatchesWholeBatch(t *testing.T) {
	x, y := Blobs(3, hlo.F64, 6, 3, 3, 0.5)
	for _, opt := range []Optimizer{SGD{LR: 0.1, Momentum: 0.9}, Adam{AdamConfig: nn.AdamConfig{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-3}}} {
		whole, err := Build(MLP("mlp", hlo.F64, 6, 3, 5, 4, 3), opt)
		if err != nil {
			t.Fatal(err)
		}
		state := whole.Init(7)
		want := run(t, whole, state, []*hlo.Literal{x, y})
		for _, n := range []int{2, 3} {
			step, err := BuildDataParallel(MLP("mlp", hlo.F64, int64(6/n), 3, 5, 4, 3), opt, n)
			if err != nil {
				t.Fatal(err)
			}
			if got := count(step.Module, hlo.OpAllReduce); got != 1 {
				t.Fatalf("%d all-reduces, want one for the loss and every gradient", got)
			}
			inputs := make([][]*hlo.Literal, n)
			for d := range inputs {
				xs, err := Shard(x, n, d)
				if err != nil {
					t.Fatal(err)
				}
				ys, err := Shard(y, n, d)
				if err != nil {
					t.Fatal(err)
				}
				inputs[d] = append(append([]*hlo.Literal{}, state...), xs, ys)
			}
			outs, err := cpuref.EvalReplicas(context.Background(), step.Module, n, 1, inputs)
			if err != nil {
				t.Fatal(err)
			}
			for d, out := range outs {
				got := out.Leaves()
				for i := range want {
					if err := hlo.LiteralsClose(got[i], want[i], 0, 1e-12); err != nil {
						t.Fatalf("%T, %d replicas, device %d, output %d: %v", opt, n, d, i, err)
					}
				}
			}
		}
	}
	if _, err := BuildDataParallel(MLP("mlp", hlo.F64, 6, 3, 3), SGD{}, 0); err == nil {
		t.Fatal("0 replicas built")
	}
	if _, err := Shard(x, 4, 0); err == nil {
		t.Fatal("6 rows split into 4")
	}
}

func count(m *hlo.Module, op hlo.Opcode) int {
	n := 0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == op {
				n++
			}
		}
	}
	return n
}
