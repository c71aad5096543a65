package hlo

import (
	"strings"
	"testing"
)

// The parser keeps a bitcast's layouts, from its operand's definition or the
// operand's annotation, and the printer writes them back; a bitcast that changes
// the byte size, or whose layout is not a permutation, is an error naming it.
func TestBitcastLayoutsText(t *testing.T) {
	m, err := ParseModule(`HloModule m
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  b = f32[3,2]{1,0} bitcast(p)
  c = f32[6]{0} bitcast(f32[2,3]{1,0} p)
  ROOT t = (f32[3,2], f32[6]) tuple(b, c)
}`)
	if err != nil {
		t.Fatal(err)
	}
	text := Print(m)
	for _, want := range []string{"%b = f32[3,2]{1,0} bitcast(f32[2,3]{0,1} %p)", "%c = f32[6]{0} bitcast(f32[2,3]{1,0} %p)"} {
		if !strings.Contains(text, want) {
			t.Errorf("printed text lacks %q:\n%s", want, text)
		}
	}
	again, err := ParseModule(text)
	if err != nil || Print(again) != text {
		t.Fatalf("round trip: %v\n%s", err, text)
	}
	for _, bad := range []struct{ text, want string }{
		{"f32[4]{0} bitcast(f32[2,3]{1,0} p)", "changes the byte size from 24 (f32[2,3]) to 16 (f32[4])"},
		{"f32[3,2]{1,1} bitcast(f32[2,3]{1,0} p)", "result layout"},
		{"f32[3,2]{1,0,2} bitcast(f32[2,3]{1,0} p)", "result layout {1,0,2} does not have one entry per dimension"},
		{"u8[24]{0} bitcast(f32[2,3]{1,0} p)", "of another width"},
	} {
		_, err := ParseModule(`HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT b = ` + bad.text + `
}`)
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "4:") {
			t.Errorf("%s: got %v, want an error at line 4 with %q", bad.text, err, bad.want)
		}
	}
}
