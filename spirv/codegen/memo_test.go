package codegen

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// TestMemo: two kernel computations that differ only in names lower once and
// share the Program; a different one lowers again.
func TestMemo(t *testing.T) {
	parse := func(text string) *hlo.Computation {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		return m.Entry
	}
	a := parse("HloModule a\nENTRY %a (x: f32[64]) -> f32[64] {\n  %x = f32[64] parameter(0)\n  ROOT %t = f32[64] tanh(%x)\n}\n")
	b := parse("HloModule b\nENTRY %b (y: f32[64]) -> f32[64] {\n  %y = f32[64] parameter(0)\n  ROOT %u = f32[64] tanh(%y)\n}\n")
	c := parse("HloModule c\nENTRY %c (y: f32[64]) -> f32[64] {\n  %y = f32[64] parameter(0)\n  ROOT %u = f32[64] negate(%y)\n}\n")
	m := NewMemo(LavapipeTarget())
	pa, err := m.Lower(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := m.Lower(b)
	if err != nil {
		t.Fatal(err)
	}
	if pa != pb || m.Len() != 1 {
		t.Errorf("renamed computation lowered again (same program %v, %d lowered)", pa == pb, m.Len())
	}
	pc, err := m.Lower(c)
	if err != nil {
		t.Fatal(err)
	}
	if pc == pa || m.Len() != 2 {
		t.Errorf("a different computation shares a program (%d lowered)", m.Len())
	}
}
