package passes

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// keptAcross keeps a (4 KiB) from the start to the end while x lives and b, c
// come and go: four 4 KiB buffers are live at c (x, a, b, c).
const keptAcross = `HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] exponential(x)
  b = f32[1024] log(x)
  c = f32[1024] sine(b)
  e = f32[1024] add(c, x)
  ROOT s = f32[1024] add(a, e)
}`

// TestOffloadToMeetBudget: under a budget of three buffers the pass moves a to
// the host right after it is made and back right before its reader after the
// peak (s); the plan then needs three buffers and holds a's 4 KiB on the host.
// Without a budget, or within it, nothing changes.
func TestOffloadToMeetBudget(t *testing.T) {
	const kib4 = 4096
	parse := func() *hlo.Module {
		m, err := hlo.ParseModule(keptAcross)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, budget := range []int64{0, 4 * kib4} {
		m := parse()
		if changed, err := OffloadToMeetBudget(m, Config{MemoryBudget: budget}); err != nil || changed {
			t.Fatalf("budget %d: changed %v, %v; want no change", budget, changed, err)
		}
	}
	m := parse()
	changed, err := OffloadToMeetBudget(m, Config{MemoryBudget: 3 * kib4})
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	var order []string
	for _, in := range m.Entry.Instructions {
		order = append(order, in.Name)
	}
	if got, want := strings.Join(order, " "), "x a a.host b c e a.device s"; got != want {
		t.Fatalf("order %q, want %q\n%s", got, want, hlo.Print(m))
	}
	if s := m.Entry.Root; s.Operands[0].Name != "a.device" {
		t.Fatalf("s reads %s, want the moved-back a.device", s.Operands[0].Name)
	}
	model, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if model.Stats.PeakBytes != 3*kib4 || model.Stats.HostBytes != kib4 {
		t.Fatalf("peak %d B, host %d B; want %d and %d", model.Stats.PeakBytes, model.Stats.HostBytes, 3*kib4, kib4)
	}
}

// TestOffloadKeepsParameters: a parameter live across the peak is the caller's
// (or the arena's input) memory: it is never moved, and a budget only moving it
// would meet is left unmet for the planner to report.
func TestOffloadKeepsParameters(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  b = f32[1024] log(x)
  c = f32[1024] sine(b)
  ROOT s = f32[1024] add(c, y)
}`)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := OffloadToMeetBudget(m, Config{MemoryBudget: 4096}); err != nil || changed {
		t.Fatalf("changed %v, %v; want no change", changed, err)
	}
}
