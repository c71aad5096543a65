package hlo

import (
	"strings"
	"testing"
)

// Tokens pass through tuples, loops, calls, opt-barriers and custom-calls and are
// made by after-all; any other op refuses one, naming it.
func TestTokenOperands(t *testing.T) {
	for _, bad := range []struct{ line, want string }{
		{"ROOT c = token[] copy(t)", "operand 0 token[] is or holds a token, which copy cannot take"},
		{"ROOT c = token[] negate(t)", "token"},
		{"ROOT c = token[] after-all(t, x)", "operand 1 is f32[2], not token[]"},
		{"ROOT c = (token[], f32[2]) sort(t, x), dimensions={0}, to_apply=lt", "token"},
	} {
		_, err := ParseModule(`HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  t = token[] parameter(0)
  x = f32[2] parameter(1)
  ` + bad.line + `
}`)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: got %v, want an error with %q", bad.line, err, bad.want)
		}
	}
	m, err := ParseModule(`HloModule m
ENTRY e {
  t = token[] parameter(0)
  a = token[] after-all()
  j = token[] after-all(t, a)
  tu = (token[], token[]) tuple(j, t)
  o = (token[], token[]) opt-barrier(tu)
  ROOT g = token[] get-tuple-element(o), index=0
}`)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Entry.Root.Shape; !s.Equal(Scalar(Token)) || s.ByteSize() != 0 {
		t.Errorf("root is %v of %d bytes, want token[] of none", s, s.ByteSize())
	}
}
