package heapsim_test

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
)

// offloadModule keeps a (4 KiB) from the start to the end while x lives and
// temporaries come and go: offloaded, a is in host memory in between, and the
// device holds at most three 4 KiB buffers at once (x, b, c at c).
const offloadModule = `HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] exponential(x)
  h = f32[1024] custom-call(a), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  b = f32[1024] log(x)
  c = f32[1024] sine(b)
  e = f32[1024] add(c, x)
  d = f32[1024] custom-call(h), custom_call_target="MoveToDevice"
  ROOT s = f32[1024] add(d, e)
}`

func simulate(t *testing.T, text string) *heapsim.Model {
	t.Helper()
	m, err := hlo.ParseModule(text)
	if err != nil {
		t.Fatal(err)
	}
	model, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// TestOffloadHoldsNoDeviceMemory: MoveToHost's result is a host buffer filled by
// a copy, MoveToDevice's a device buffer filled by a copy back; between them a
// holds no device memory. The same module with the moves as copies keeps a on
// the device: 4 buffers of 4 KiB live at c (x, a's copy, b, c), against 3
// offloaded (x, b, c: a's device buffer died at the copy to the host, d comes
// after c). The model's default kernels write nothing in place.
func TestOffloadHoldsNoDeviceMemory(t *testing.T) {
	const kib4 = 4096
	off := simulate(t, offloadModule)
	plain := simulate(t, strings.NewReplacer(
		`custom-call(a), custom_call_target="MoveToHost", custom_call_has_side_effect=true`, "copy(a)",
		`custom-call(h), custom_call_target="MoveToDevice"`, "copy(h)").Replace(offloadModule))
	if got, want := plain.Stats.LowerBoundBytes, int64(4*kib4); got != want {
		t.Errorf("on the device: lower bound %d B, want %d (x, h, b, c)\n%v", got, want, plain)
	}
	if got, want := off.Stats.LowerBoundBytes, int64(3*kib4); got != want {
		t.Errorf("offloaded: lower bound %d B, want %d (x, b, c)\n%v", got, want, off)
	}
	if off.Stats.PeakBytes != off.Stats.LowerBoundBytes {
		t.Errorf("offloaded: peak %d B above the lower bound %d", off.Stats.PeakBytes, off.Stats.LowerBoundBytes)
	}
	if off.Stats.HostBytes != kib4 || off.Stats.HostBuffers != 1 || plain.Stats.HostBytes != 0 {
		t.Errorf("host memory %d B in %d buffers (plain %d B), want one buffer of %d", off.Stats.HostBytes,
			off.Stats.HostBuffers, plain.Stats.HostBytes, kib4)
	}
	text := off.String()
	for _, want := range []string{"copy h ", "copy d ", `"h" block 0 [0, +4096) on the host`, "on the host", "host memory 4096 B (1 offloaded buffers)"} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}
}

// TestOffloadedRootStaysOnHost: a result in host memory is returned from there
// (Run reads it from the host buffers; it holds no device memory), and a move to
// where the value already is is no copy at all.
func TestOffloadedRootStaysOnHost(t *testing.T) {
	model := simulate(t, `HloModule m
ENTRY e {
  x = f32[16] parameter(0)
  a = f32[16] exponential(x)
  h = f32[16] custom-call(a), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  h2 = f32[16] custom-call(h), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  ROOT t = (f32[16], f32[16]) tuple(h2, a)
}`)
	root := model.Root.Leaves
	if !model.OnHost(root[0]) || model.OnHost(root[1]) {
		t.Fatalf("want output 0 on the host and output 1 on the device:\n%v", model)
	}
	copies := 0
	for _, st := range model.Main.Steps {
		if st.Kind == heapsim.StepCopy {
			copies++
		}
	}
	if copies != 1 || model.Stats.HostBuffers != 1 || model.Stats.OutputBytes != 64 {
		t.Fatalf("%d copies, %d host buffers, outputs %d B; want 1 (to the host), 1 and 64 B (a):\n%v",
			copies, model.Stats.HostBuffers, model.Stats.OutputBytes, model)
	}
}

// hostParam reads y only through MoveToDevice copies, x directly.
const hostParam = `HloModule m
ENTRY e {
  x = f32[1024] parameter(0)
  y = f32[1024] parameter(1)
  d = f32[1024] custom-call(y), custom_call_target="MoveToDevice"
  a = f32[1024] add(x, d)
  b = f32[1024] exponential(a)
  d2 = f32[1024] custom-call(y), custom_call_target="MoveToDevice"
  ROOT c = f32[1024] multiply(b, d2)
}`

// TestHostResidentParameter: a parameter only MoveToDevice copies read is in host
// memory (JAX's pinned_host argument): not in the device peak, each copy live
// from its move to its reader. Borrowed, it is the caller's device memory and
// the copies read it there.
func TestHostResidentParameter(t *testing.T) {
	const kib4 = 4096
	model := simulate(t, hostParam)
	if !model.OnHost(model.Params[1].Leaves[0]) || model.OnHost(model.Params[0].Leaves[0]) {
		t.Fatalf("want y on the host, x on the device:\n%v", model)
	}
	st := model.Stats
	if st.HostBytes != kib4 || st.ParameterBytes != kib4 || st.PeakBytes != 3*kib4 {
		t.Fatalf("%v; want host 4096 B (y), parameters 4096 B (x), peak 12288 B (x, d, a at a; b, d2, c at c)", st)
	}
	m, err := hlo.ParseModule(hostParam)
	if err != nil {
		t.Fatal(err)
	}
	borrowed, err := heapsim.Simulate(m, heapsim.Config{Borrow: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if borrowed.OnHost(borrowed.Params[1].Leaves[0]) || borrowed.Stats.HostBytes != 0 {
		t.Fatalf("a borrowed parameter is on the host:\n%v", borrowed)
	}
}
