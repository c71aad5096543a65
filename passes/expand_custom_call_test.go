package passes

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestExpandCustomCalls(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "identity annotations pass their operand through; host offload stays for the planner",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %sh = f32[4] custom-call(%x), custom_call_target="Sharding", sharding={replicated}
  %pl = f32[4] custom-call(%sh), custom_call_target="annotate_device_placement"
  %host = f32[4] custom-call(%pl), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  %dev = f32[4] custom-call(%host), custom_call_target="MoveToDevice"
  ROOT %n = f32[4] negate(%dev)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %host = f32[4] custom-call(%x), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  %dev = f32[4] custom-call(%host), custom_call_target="MoveToDevice"
  ROOT %n = f32[4] negate(%dev)
}
`,
	}, {
		name:     "TopK sorts values with their indices and slices k",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (x: f32[5]) -> (f32[2], s32[2]) {
  %x = f32[5] parameter(0)
  ROOT %tk = (f32[2], s32[2]) custom-call(%x), custom_call_target="TopK", backend_config={k = 2 : i64, largest = true}
}
`,
		after: `HloModule m
%compare_GT_f32 (lhs.0: f32[], rhs.0: f32[], lhs.1: s32[], rhs.1: s32[]) -> pred[] {
  %lhs.0 = f32[] parameter(0)
  %rhs.0 = f32[] parameter(1)
  %lhs.1 = s32[] parameter(2)
  %rhs.1 = s32[] parameter(3)
  ROOT %compare.5 = pred[] compare(%lhs.0, %rhs.0), direction=GT, type=TOTALORDER
}
ENTRY %e (x: f32[5]) -> (f32[2], s32[2]) {
  %x = f32[5] parameter(0)
  %tk.iota = s32[5] iota(), iota_dimension=0
  %tk.sort = (f32[5], s32[5]) sort(%x, %tk.iota), dimensions={0}, is_stable=true, to_apply=%compare_GT_f32
  %tk.get-tuple-element = f32[5] get-tuple-element(%tk.sort), index=0
  %tk.slice = f32[2] slice(%tk.get-tuple-element), slice={[0:2]}
  %tk.get-tuple-element.1 = s32[5] get-tuple-element(%tk.sort), index=1
  %tk.slice.1 = s32[2] slice(%tk.get-tuple-element.1), slice={[0:2]}
  ROOT %tk.tuple = (f32[2], s32[2]) tuple(%tk.slice, %tk.slice.1)
}
`,
	}})
}

// An unregistered target fails the parse at the instruction's line, naming the
// target and the instruction; a module built in Go meets the same error in the
// expander.
func TestUnknownCustomCallTarget(t *testing.T) {
	_, err := hlo.ParseModule(`HloModule m
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %v = f32[4] custom-call(%x), custom_call_target="acme.fused_thing"
}
`)
	if !errors.Is(err, hlo.ErrUnknownCustomCall) {
		t.Fatalf("got %v, want hlo.ErrUnknownCustomCall", err)
	}
	for _, want := range []string{"4:", `"acme.fused_thing"`, "custom-call v", "-identity-target acme.fused_thing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	b := hlo.NewBuilder("m")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 4), "x")
	m, err := b.Build(b.CustomCall("acme.other", []*hlo.Instruction{x}, x.Shape, nil))
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Config{})
	if !errors.Is(err, hlo.ErrUnknownCustomCall) || !strings.Contains(err.Error(), `"acme.other"`) ||
		!strings.Contains(err.Error(), "custom-call.") {
		t.Fatalf("got %v, want hlo.ErrUnknownCustomCall naming the target and the instruction", err)
	}
}

// registerSquarePlusOne registers the test's user target once per process (the
// registry is global; go test -count=N reruns the test).
var registerSquarePlusOne = sync.OnceValue(func() error {
	return hlo.RegisterCustomCall(hlo.CustomCallTarget{Name: "test.square_plus_one",
		Expand: func(b *hlo.Builder, _ *hlo.Instruction, xs []*hlo.Instruction) (*hlo.Instruction, error) {
			one := b.BroadcastScalar(b.ScalarConstant(xs[0].Shape.DType, 1), xs[0].Shape.Dims...)
			return b.Add(b.Mul(xs[0], xs[0]), one), nil
		}})
})

// A user target: registered from Go, expanded by the pass like a built-in one.
func TestUserCustomCallTarget(t *testing.T) {
	if err := registerSquarePlusOne(); err != nil {
		t.Fatal(err)
	}
	if err := hlo.RegisterCustomCall(hlo.CustomCallTarget{Name: "test.square_plus_one",
		Expand: func(*hlo.Builder, *hlo.Instruction, []*hlo.Instruction) (*hlo.Instruction, error) { return nil, nil }}); err == nil {
		t.Error("a second registration of a name should fail")
	}
	x := hlo.MustFromSlice([]int64{3}, []float32{-2, 0, 0.5})
	expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[3] custom-call(x), custom_call_target="test.square_plus_one"
}`, 0, x)
	// An expansion of the wrong shape is an error naming the call.
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT bad = f32[] custom-call(x), custom_call_target="test.square_plus_one"
}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(m, Config{}); err == nil || !strings.Contains(err.Error(), "custom-call bad") {
		t.Fatalf("got %v, want an error naming custom-call bad", err)
	}
}
