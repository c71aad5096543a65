package hlo

import (
	"strings"
	"testing"
)

func TestCloneComputation(t *testing.T) {
	m, err := ParseModule(`HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4]) -> f32[] {
  %x = f32[4] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%add
}
`)
	if err != nil {
		t.Fatal(err)
	}
	c := CloneComputation(m.Entry, func(s string) string { return s + ".copy" })
	if c == m.Entry || c.Root == m.Entry.Root || c.Params[0] == m.Entry.Params[0] {
		t.Fatal("the copy shares instructions with the original")
	}
	if c.Root.Called[0] != m.Entry.Root.Called[0] {
		t.Error("the reducer should be shared")
	}
	if c.Root.Operands[0] != c.Params[0] {
		t.Error("the copy's operands should be the copy's instructions")
	}
	c.Root.Attrs.Dimensions[0] = 7 // attributes are deep-copied
	if m.Entry.Root.Attrs.Dimensions[0] != 0 {
		t.Error("changing the copy's attributes changed the original's")
	}
	c.Root.Attrs.Dimensions[0] = 0
	want := `%e.copy (x.copy: f32[4]) -> f32[] {
  %x.copy = f32[4]{0} parameter(0)
  %z.copy = f32[] constant(0)
  ROOT %r.copy = f32[] reduce(f32[4]{0} %x.copy, f32[] %z.copy), dimensions={0}, to_apply=%add
}
`
	if got := c.String(); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("copy prints\n%s\nwant\n%s", got, want)
	}
}
