package hlo_test

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestCloneComputation(t *testing.T) {
	m, err := hlo.ParseModule(canonicalA)
	if err != nil {
		t.Fatal(err)
	}
	c := hlo.CloneComputation(m.Entry, func(s string) string { return s + ".copy" })
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
  ROOT %r.copy = f32[] reduce(f32[4]{0} %x.copy, f32[] %z.copy), dimensions={0}, to_apply=%sum
}
`
	if got := c.String(); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Errorf("copy prints\n%s\nwant\n%s", got, want)
	}
}
