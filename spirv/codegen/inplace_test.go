package codegen

import (
	"slices"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestInPlaceInputs(t *testing.T) {
	cases := []struct {
		name, entry string
		want        []bool
	}{
		{"saxpy: the broadcast scalar is read everywhere, x and y at the output index", `
  %a = f32[] parameter(0)
  %x = f32[64] parameter(1)
  %y = f32[64] parameter(2)
  %ab = f32[64] broadcast(%a), dimensions={}
  %ax = f32[64] multiply(%ab, %x)
  ROOT %r = f32[64] add(%ax, %y)`, []bool{false, true, true}},
		{"reshape and convert keep the linear index", `
  %x = f32[4,6] parameter(0)
  %r = f32[24] reshape(%x)
  ROOT %c = s32[24] convert(%r)`, []bool{true}},
		{"a transpose reads elsewhere", `
  %x = f32[4,6] parameter(0)
  %t = f32[6,4] transpose(%x), dimensions={1,0}
  %y = f32[6,4] parameter(1)
  ROOT %s = f32[6,4] add(%t, %y)`, []bool{false, true}},
		{"one path through a slice spoils the other", `
  %x = f32[8] parameter(0)
  %s = f32[4] slice(%x), slice={[4:8]}
  %h = f32[4] slice(%x), slice={[0:4]}
  ROOT %a = f32[4] add(%s, %h)`, []bool{false}},
		{"clamp's scalar bounds are broadcast", `
  %lo = f32[] parameter(0)
  %x = f32[8] parameter(1)
  %hi = f32[] parameter(2)
  ROOT %c = f32[8] clamp(%lo, %x, %hi)`, []bool{false, true, false}},
		{"dynamic-update-slice reads its operand in place, its update elsewhere", `
  %x = f32[16] parameter(0)
  %u = f32[4] parameter(1)
  %i = s32[] parameter(2)
  ROOT %d = f32[16] dynamic-update-slice(%x, %u, %i)`, []bool{true, false, false}},
		{"multi-output root", `
  %x = f32[8] parameter(0)
  %y = f32[8] parameter(1)
  %r = f32[8] reverse(%y), dimensions={0}
  %n = f32[8] negate(%x)
  %s = f32[8] add(%x, %r)
  ROOT %t = (f32[8], f32[8]) tuple(%n, %s)`, []bool{true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule("HloModule m\nENTRY %e {" + tc.entry + "\n}\n")
			if err != nil {
				t.Fatal(err)
			}
			if got := inPlaceInputs(m.Entry, -1); !slices.Equal(got, tc.want) {
				t.Errorf("inPlaceInputs = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestInPlaceOnlyForElementalKernels: strategies with several dispatches or
// cross-invocation reads leave Program.InPlace nil.
func TestInPlaceOnlyForElementalKernels(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[64,4096]) -> f32[64] {
  %x = f32[64,4096] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[64] reduce(%x, %z), dimensions={1}, to_apply=%add
}
`)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Lower(m.Entry, LavapipeTarget())
	if err != nil {
		t.Fatal(err)
	}
	if p.InPlace != nil {
		t.Fatalf("tree reduction got InPlace %v, want nil", p.InPlace)
	}
}

// TestScatterInPlace: a scatter's single operand may share its output when nothing
// else reads it; not when the updates are the operand too, nor with two operands.
func TestScatterInPlace(t *testing.T) {
	add := `%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
`
	cases := []struct {
		name, entry string
		want        []bool
	}{
		{"operand, indices, updates", `
  %x = f32[8] parameter(0)
  %i = s32[2,1] parameter(1)
  %u = f32[2] parameter(2)
  ROOT %s = f32[8] scatter(%x, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add`,
			[]bool{true, false, false}},
		{"the updates are the operand", `
  %x = f32[2] parameter(0)
  %i = s32[2,1] parameter(1)
  ROOT %s = f32[2] scatter(%x, %i, %x), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add`,
			nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule("HloModule m\n" + add + "ENTRY %e {" + tc.entry + "\n}\n")
			if err != nil {
				t.Fatal(err)
			}
			p, err := Lower(m.Entry, LavapipeTarget())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.InPlace, tc.want) {
				t.Errorf("InPlace = %v, want %v", p.InPlace, tc.want)
			}
		})
	}
}

// TestDynamicUpdateSliceProgram: with an operand nothing else reads, a
// dynamic-update-slice is a copy the runtime may skip and a window write; with the
// operand read elsewhere too it stays one elemental kernel.
func TestDynamicUpdateSliceProgram(t *testing.T) {
	for _, tc := range []struct {
		name, entry string
		dispatches  int
		copies      bool
	}{
		{"in place", `
  %x = f32[16,4] parameter(0)
  %u = f32[2,4] parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  ROOT %d = f32[16,4] dynamic-update-slice(%x, %u, %i, %z)`, 2, true},
		{"operand also read by the update", `
  %x = f32[16,4] parameter(0)
  %i = s32[] parameter(1)
  %z = s32[] constant(0)
  %u = f32[2,4] slice(%x), slice={[0:2], [0:4]}
  ROOT %d = f32[16,4] dynamic-update-slice(%x, %u, %i, %z)`, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule("HloModule m\nENTRY %e {" + tc.entry + "\n}\n")
			if err != nil {
				t.Fatal(err)
			}
			p := lowerOK(t, m.Entry)
			if len(p.Dispatches) != tc.dispatches || p.Dispatches[0].CopiesInPlaceInput != tc.copies {
				t.Fatalf("%d dispatches, first copies the operand: %v; want %d, %v", len(p.Dispatches), p.Dispatches[0].CopiesInPlaceInput, tc.dispatches, tc.copies)
			}
		})
	}
}
