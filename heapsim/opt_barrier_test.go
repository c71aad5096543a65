package heapsim_test

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// TestOptBarrierIsAnAlias: the schedule and remat passes model modules that still
// hold opt-barriers (they are expanded last). A barrier is its operand's buffers:
// the model of a module with one equals that of the module where the barrier's
// tuple is used directly. (The model refused barriers as kernels with a tuple
// operand, so both passes silently skipped every checkpointed gradient.)
func TestOptBarrierIsAnAlias(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] log(x)
  t = (f32[256], f32[256]) tuple(a, b)
  f = (f32[256], f32[256]) opt-barrier(t)
  a1 = f32[256] get-tuple-element(f), index=0
  b1 = f32[256] get-tuple-element(f), index=1
  ROOT s = f32[256] add(a1, b1)
}`
	plain := strings.Replace(strings.Replace(text, "  f = (f32[256], f32[256]) opt-barrier(t)\n", "", 1), "(f), index", "(t), index", 2)
	stats := func(text string) heapsim.MemoryStats {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		model, err := heapsim.Simulate(m, heapsim.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return model.Stats
	}
	got, want := stats(text), stats(plain)
	if got.PeakBytes != want.PeakBytes || got.PeakBytes < 3*256*4 {
		t.Fatalf("peak with the barrier %d, without %d (x, a and b are live together: at least %d)", got.PeakBytes, want.PeakBytes, 3*256*4)
	}
}
