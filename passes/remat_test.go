package passes

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/randgraph"
)

// ckptModule is testdata/programs/checkpoint.hlo: a 16 KiB product a kept from the
// start to the end while three more products are made.
var ckptModule = readProgram("checkpoint")

func TestRematerialize(t *testing.T) {
	runPassCases(t, []passCase{
		{
			// Model peak 64 KiB (v, a, b, c while c runs). Recomputing a from x
			// and w (4 KiB kept alive instead of 16 KiB) before the add: 52 KiB.
			name:     "recompute a long-lived product before its last reader",
			disabled: []string{"fusion"},
			cfg:      Config{MemoryBudget: 53 << 10},
			before:   ckptModule,
			after: `HloModule checkpoint
ENTRY %checkpoint (x: f32[64,8], w: f32[8,64], v: f32[64,64]) -> f32[64,64] {
  %x = f32[64,8] parameter(0)
  %w = f32[8,64] parameter(1)
  %v = f32[64,64] parameter(2)
  %a = f32[64,64] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b = f32[64,64] dot(%a, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = f32[64,64] dot(%b, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d = f32[64,64] dot(%c, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a.remat = f32[64,64] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r = f32[64,64] add(%d, %a.remat)
}
`,
		},
		{
			name:     "within the budget nothing changes",
			disabled: []string{"fusion"},
			cfg:      Config{MemoryBudget: 64 << 10},
			before:   ckptModule,
			after:    ckptModule,
		},
	})
}

// TestRematerializePeaks checks the model's peaks by hand: before, 64 KiB (v and
// three products while c or d runs); after one recomputation, 52 KiB (x, w, v and
// two products while b, c or d runs); a budget below that cannot be met (every
// buffer live at b's peak is read there or a parameter) and the pass stops.
func TestRematerializePeaks(t *testing.T) {
	for _, tc := range []struct {
		budget, want int64
	}{{64 << 10, 64 << 10}, {53 << 10, 52 << 10}, {40 << 10, 52 << 10}} {
		m, err := hlo.ParseModule(ckptModule)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Rematerialize(m, Config{MemoryBudget: tc.budget}); err != nil {
			t.Fatal(err)
		}
		if err := hlo.Verify(m); err != nil {
			t.Fatal(err)
		}
		if got := testModelPeak(t, m, Config{}); got != tc.want {
			t.Errorf("budget %d: model peak %d, want %d\n%s", tc.budget, got, tc.want, hlo.Print(m))
		}
	}
}

// TestRematerializeFusion: a fusion recomputed gets a fused computation of its own
// (fresh names), and the module computes what it did.
func TestRematerializeFusion(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule f
%fused (p: f32[64]) -> f32[64,64] {
  %p = f32[64] parameter(0)
  %b = f32[64,64] broadcast(%p), dimensions={1}
  ROOT %n = f32[64,64] negate(%b)
}
ENTRY %f (x: f32[64], v: f32[64,64]) -> f32[64,64] {
  %x = f32[64] parameter(0)
  %v = f32[64,64] parameter(1)
  %a = f32[64,64] fusion(%x), kind=kLoop, calls=%fused
  %b = f32[64,64] dot(%a, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %c = f32[64,64] dot(%b, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d = f32[64,64] dot(%c, %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r = f32[64,64] add(%d, %a)
}
`)
	if err != nil {
		t.Fatal(err)
	}
	orig := m.Clone()
	// The peak is v, a, b and c while c runs (64 KiB and x); recomputing a from
	// x (256 B) frees 16 KiB.
	if _, err := Rematerialize(m, Config{MemoryBudget: 60 << 10}); err != nil {
		t.Fatal(err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	var fusions []*hlo.Instruction
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpFusion {
			fusions = append(fusions, in)
		}
	}
	if len(fusions) != 2 || fusions[1].Name != "a.remat" || fusions[0].Called[0] == fusions[1].Called[0] {
		t.Fatalf("want a and a.remat calling computations of their own:\n%s", hlo.Print(m))
	}
	if m.Entry.Root.Operands[1] != fusions[1] {
		t.Fatalf("the add should read the recomputed value:\n%s", hlo.Print(m))
	}
	checkSameResults(t, orig, m)
}

// checkSameResults evaluates both modules with cpuref on the same small exact
// inputs and wants bit-identical results.
func checkSameResults(t *testing.T, before, after *hlo.Module) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var in []*hlo.Literal
	for _, p := range before.Entry.Params {
		in = append(in, randgraph.Input(rng, p.Shape))
	}
	want, err := cpuref.Eval(before, in...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cpuref.Eval(after, in...)
	if err != nil {
		t.Fatal(err)
	}
	if err := literalBitsEqual(got, want); err != nil {
		t.Fatal(err)
	}
}

// TestRematerializeNothingToDo: parameters alone over the budget, or no candidate
// at the peak, end the pass without a change (the runtime then reports the budget
// it cannot meet).
func TestRematerializeNothingToDo(t *testing.T) {
	for _, text := range []string{
		"HloModule p\nENTRY %e (x: f32[64]) -> f32[64] {\n  ROOT %x = f32[64] parameter(0)\n}\n",
		"HloModule n\nENTRY %e (x: f32[64]) -> f32[64] {\n  %x = f32[64] parameter(0)\n  ROOT %n = f32[64] negate(%x)\n}\n",
	} {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		changed, err := Rematerialize(m, Config{MemoryBudget: 1})
		if err != nil || changed {
			t.Errorf("%s: changed %v, err %v; want no change", m.Name, changed, err)
		}
	}
}
