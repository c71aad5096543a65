package passes

import (
	"slices"
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

// paramAndOutput keeps y (a parameter read before and after the peak at c) and
// o (an output made first) live across the peak, 24 KiB with b and c.
const paramAndOutput = `HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  o = f32[1024] exponential(x)
  a = f32[1024] multiply(x, y)
  b = f32[2048] concatenate(a, a), dimensions={0}
  c = f32[2048] reverse(b), dimensions={0}
  d = f32[1024] slice(c), slice={[0:1024]}
  e = f32[1024] add(d, y)
  ROOT s = (f32[1024], f32[1024]) tuple(e, o)
}`

// TestOffloadParameterAndOutput: under a budget of b and c alone (16 KiB) the
// parameter y stays in host memory, read through one MoveToDevice on each side
// of the peak, and the output o goes to the host as soon as it is made, the root
// returning the host copy: the plan is 16 KiB with 8 KiB on the host.
func TestOffloadParameterAndOutput(t *testing.T) {
	m, err := hlo.ParseModule(paramAndOutput)
	if err != nil {
		t.Fatal(err)
	}
	before, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil || before.Stats.PeakBytes != 24576 {
		t.Fatalf("plain peak %v, %v; want 24576 B", before.Stats, err)
	}
	if changed, err := OffloadToMeetBudget(m, Config{MemoryBudget: 16384}); err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	var order []string
	for _, in := range m.Entry.Instructions {
		order = append(order, in.Name)
	}
	if got, want := strings.Join(order, " "), "x y o o.host y.device.1 a b c d y.device e s"; got != want {
		t.Fatalf("order %q, want %q\n%s", got, want, hlo.Print(m))
	}
	byName := map[string]*hlo.Instruction{}
	for _, in := range m.Entry.Instructions {
		byName[in.Name] = in
	}
	for reader, copy := range map[string]string{"a": "y.device.1", "e": "y.device"} {
		if op := byName[reader].Operands[1]; op.Name != copy || op.Operands[0].Name != "y" {
			t.Fatalf("%s reads %s, want %s, a MoveToDevice of y", reader, op.Name, copy)
		}
	}
	if op := m.Entry.Root.Operands[1]; op.Name != "o.host" {
		t.Fatalf("the root returns %s, want o.host", op.Name)
	}
	after, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	st := after.Stats
	if st.PeakBytes != 16384 || st.HostBytes != 8192 || st.HostBuffers != 2 || st.ParameterBytes != 4096 || st.OutputBytes != 4096 {
		t.Fatalf("%v; want peak 16384 B, host 8192 B in 2 buffers (y, o), parameters 4096 B (x), outputs 4096 B (e)", st)
	}
}

// TestOffloadKeepsCallerMemory: a parameter whose memory the caller provides
// (donated, borrowed, or named by input_output_alias) and an output that may be
// written over a parameter stay on the device.
func TestOffloadKeepsCallerMemory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		mem    heapsim.Config
		stay   []string
	}{
		{"borrowed", "", heapsim.Config{Borrow: []int{1}}, []string{"y"}},
		// A donated parameter's memory may take an output of its shape: every
		// output stays.
		{"donated", "", heapsim.Config{Donate: []int{1}}, []string{"y", "o"}},
		{"aliased", ", input_output_alias={ {1}: (1, {}, may-alias) }", heapsim.Config{}, []string{"y", "o"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule(strings.Replace(paramAndOutput, "HloModule m", "HloModule m"+tc.header, 1))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := OffloadToMeetBudget(m, Config{MemoryBudget: 16384, Memory: tc.mem}); err != nil {
				t.Fatal(err)
			}
			for _, in := range m.Entry.Instructions {
				if _, moves := hlo.Placement(in); moves && slices.Contains(tc.stay, in.Operands[0].Name) {
					t.Fatalf("%s moves %s, which is the caller's memory:\n%s", in.Name, in.Operands[0].Name, hlo.Print(m))
				}
			}
		})
	}
}

// TestOffloadMultiOutputResults: the two results of a multi-output kernel made
// first, returned through get-tuple-elements (as an optimizer step's fused
// parameter and momentum updates are), go to the host right after the kernel,
// through get-tuple-elements made there; the root returns the host copies and
// the old get-tuple-elements are gone.
func TestOffloadMultiOutputResults(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
%update (p: f32[1024]) -> (f32[1024], f32[1024]) {
  %p = f32[1024] parameter(0)
  %e = f32[1024] exponential(%p)
  %l = f32[1024] log(%p)
  ROOT %t = (f32[1024], f32[1024]) tuple(%e, %l)
}
ENTRY e {
  x = f32[1024] parameter(0)
  f = (f32[1024], f32[1024]) fusion(x), kind=kLoop, calls=%update
  a = f32[1024] multiply(x, x)
  b = f32[2048] concatenate(a, a), dimensions={0}
  c = f32[2048] reverse(b), dimensions={0}
  d = f32[1024] slice(c), slice={[0:1024]}
  g0 = f32[1024] get-tuple-element(f), index=0
  g1 = f32[1024] get-tuple-element(f), index=1
  ROOT s = (f32[1024], f32[1024], f32[1024]) tuple(d, g0, g1)
}`)
	if err != nil {
		t.Fatal(err)
	}
	before, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := OffloadToMeetBudget(m, Config{MemoryBudget: before.Stats.PeakBytes - 8192}); err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	var order []string
	for _, in := range m.Entry.Instructions {
		order = append(order, in.Name)
	}
	if got, want := strings.Join(order, " "), "x f g0.out g0.out.host g1.out g1.out.host a b c d s"; got != want {
		t.Fatalf("order %q, want %q\n%s", got, want, hlo.Print(m))
	}
	for k, want := range map[int]string{1: "g0.out.host", 2: "g1.out.host"} {
		if op := m.Entry.Root.Operands[k]; op.Name != want || op.Operands[0].Operands[0].Name != "f" {
			t.Fatalf("root operand %d is %s, want %s, a MoveToHost of a get-tuple-element of f", k, op.Name, want)
		}
	}
	after, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if st := after.Stats; st.PeakBytes != before.Stats.PeakBytes-8192 || st.HostBytes != 8192 {
		t.Fatalf("%v; want the peak 8192 B lower (%d B) and f's 8192 B on the host", st, before.Stats.PeakBytes-8192)
	}
}
