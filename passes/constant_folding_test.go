package passes

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestFoldConstants(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "instructions of constants become constants (the reduction's computation then goes dead); a broadcast, a pad and parameters' users stay",
		disabled: []string{"cse", "fusion", "sibling-fusion", "schedule", "simplify"},
		before: `HloModule m
ENTRY %e (x: f32[4]) -> (f32[4], f32[8], s32[], f32[2,2], f32[4]) {
  %x = f32[4] parameter(0)
  %a = f32[4] constant({1, 2, 3, 4})
  %b = f32[4] constant({0.5, 0.5, 2, -1})
  %prod = f32[4] multiply(%a, %b)
  %scaled = f32[4] add(%x, %prod)
  %zero = f32[] constant(0)
  %padded = f32[8] pad(%a, %zero), padding=0_4
  %i = s32[4] constant({3, -7, 10, 2})
  %izero = s32[] constant(0)
  %sum = s32[] reduce(%i, %izero), dimensions={0}, to_apply=%add_s32
  %t = f32[2,2] reshape(%b)
  %tt = f32[2,2] transpose(%t), dimensions={1,0}
  %half = f32[] constant(0.5)
  %bh = f32[4] broadcast(%half), dimensions={}
  ROOT %out = (f32[4], f32[8], s32[], f32[2,2], f32[4]) tuple(%scaled, %padded, %sum, %tt, %bh)
}

%add_s32 (p: s32[], q: s32[]) -> s32[] {
  %p = s32[] parameter(0)
  %q = s32[] parameter(1)
  ROOT %r = s32[] add(%p, %q)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4]) -> (f32[4], f32[8], s32[], f32[2,2], f32[4]) {
  %x = f32[4] parameter(0)
  %a = f32[4] constant({1, 2, 3, 4})
  %prod = f32[4] constant({0.5, 1, 6, -4})
  %scaled = f32[4] add(%x, %prod)
  %zero = f32[] constant(0)
  %padded = f32[8] pad(%a, %zero), padding=0_4
  %sum = s32[] constant(8)
  %tt = f32[2,2] constant({ { 0.5, 2 }, { 0.5, -1 } })
  %half = f32[] constant(0.5)
  %bh = f32[4] broadcast(%half), dimensions={}
  ROOT %out = (f32[4], f32[8], s32[], f32[2,2], f32[4]) tuple(%scaled, %padded, %sum, %tt, %bh)
}
`,
	}})
}

// TestFoldConstantsBound: a result over maxFoldBytes (an outer product of two
// 600-element constants: 1.44 MB) stays an instruction; the same product of
// 500-element ones (1 MB) is folded.
func TestFoldConstantsBound(t *testing.T) {
	module := func(n int) string {
		col := "{" + strings.TrimSuffix(strings.Repeat("{1}, ", n), ", ") + "}"
		row := "{{" + strings.TrimSuffix(strings.Repeat("2, ", n), ", ") + "}}"
		return fmt.Sprintf(`HloModule m
ENTRY %%e () -> f32[%[1]d,%[1]d] {
  %%a = f32[%[1]d,1] constant(%[2]s)
  %%b = f32[1,%[1]d] constant(%[3]s)
  ROOT %%d = f32[%[1]d,%[1]d] dot(%%a, %%b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`, n, col, row)
	}
	for n, folded := range map[int]bool{600: false, 500: true} {
		m, err := hlo.ParseModule(module(n))
		if err != nil {
			t.Fatal(err)
		}
		changed, err := FoldConstants(m, Config{})
		if err != nil {
			t.Fatal(err)
		}
		root := m.Entry.Root
		if changed != folded || (root.Op == hlo.OpConstant) != folded {
			t.Fatalf("%d×%d: changed %v, root %s; want folded %v", n, n, changed, root.Op, folded)
		}
		if folded && root.Attrs.Literal.Float64(n*n-1) != 2 {
			t.Errorf("%d×%d: last element %v, want 2", n, n, root.Attrs.Literal.Float64(n*n-1))
		}
	}
}
