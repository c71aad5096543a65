package mlp

import (
	"math"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"

	vkgomlx "github.com/vkxla/vkxla/gomlx"
)

// TestTrainsLikeSimplego trains the MLP on vkxla and on simplego from the same
// initial weights and batches: the loss curves agree within the tolerance of
// float32 reductions summed in different orders, and both learn.
func TestTrainsLikeSimplego(t *testing.T) {
	c := Default
	c.Steps = 30
	v := true
	vk, err := vkgomlx.NewWithConfig(vkgomlx.Config{Validation: &v})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := vk.Close(); err != nil {
			t.Error(err)
		}
	}()
	got, err := Train(vk, c)
	if err != nil {
		t.Fatal(err)
	}
	sg, err := simplego.New("")
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Finalize()
	want, err := Train(sg, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Losses) != c.Steps || len(want.Losses) != c.Steps {
		t.Fatalf("%d and %d losses for %d steps", len(got.Losses), len(want.Losses), c.Steps)
	}
	for i := range got.Losses {
		if d := math.Abs(float64(got.Losses[i] - want.Losses[i])); d > 1e-3*(1+math.Abs(float64(want.Losses[i]))) {
			t.Errorf("step %d: loss %g on vkxla, %g on simplego", i, got.Losses[i], want.Losses[i])
		}
	}
	if got.Losses[c.Steps-1] > 0.8*got.Losses[0] {
		t.Errorf("loss %g → %g: not learning", got.Losses[0], got.Losses[c.Steps-1])
	}
	if stats, ok := vk.MemoryStats(); !ok || stats.PeakBytes <= 0 {
		t.Errorf("train step MemoryStats: %v %v", stats, ok)
	}
	accGot, err := Accuracy(vk, got.Context, c)
	if err != nil {
		t.Fatal(err)
	}
	accWant, err := Accuracy(sg, want.Context, c)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(accGot-accWant) > 0.01 || accGot < 2.0/float64(c.Classes) {
		t.Errorf("accuracy %g on vkxla, %g on simplego (chance %g)", accGot, accWant, 1/float64(c.Classes))
	}
}
