package passes

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// A custom-call with custom_call_has_side_effect=true is neither removed by DCE
// when unused nor merged by CSE with an identical call; one without is both.
const sideEffectModule = `HloModule m
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %io.1 = f32[4] custom-call(%x), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  %io.2 = f32[4] custom-call(%x), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  %pure.1 = f32[4] custom-call(%x), custom_call_target="Sharding"
  %pure.2 = f32[4] custom-call(%x), custom_call_target="Sharding"
  %unused = f32[4] custom-call(%x), custom_call_target="Sharding"
  ROOT %s = f32[4] add(%pure.1, %pure.2)
}
`

func names(c *hlo.Computation) string {
	var ns []string
	for _, in := range c.Instructions {
		ns = append(ns, in.Name)
	}
	return strings.Join(ns, " ")
}

func TestDCEKeepsSideEffects(t *testing.T) {
	m, err := hlo.ParseModule(sideEffectModule)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DCE(m, Config{}); err != nil {
		t.Fatal(err)
	}
	if got, want := names(m.Entry), "x io.1 io.2 pure.1 pure.2 s"; got != want {
		t.Errorf("after DCE: %s, want %s (the side-effecting calls stay, the unused pure one goes)", got, want)
	}
}

func TestCSEKeepsSideEffects(t *testing.T) {
	m, err := hlo.ParseModule(sideEffectModule)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CSE(m, Config{}); err != nil {
		t.Fatal(err)
	}
	if _, err := DCE(m, Config{}); err != nil {
		t.Fatal(err)
	}
	if got, want := names(m.Entry), "x io.1 io.2 pure.1 s"; got != want {
		t.Errorf("after CSE and DCE: %s, want %s (pure.2 merges into pure.1; io.1 and io.2 stay apart)", got, want)
	}
	if s := m.Entry.Root; s.Operands[0] != s.Operands[1] {
		t.Error("the add should read the merged pure call twice")
	}
}

func TestExpandersCannotBeDisabled(t *testing.T) {
	m, err := hlo.ParseModule(sideEffectModule)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Config{Disabled: []string{hlo.CustomCallExpander}})
	if err == nil || !strings.Contains(err.Error(), "cannot be disabled") {
		t.Fatalf("got %v, want an error refusing to disable the custom-call expander", err)
	}
}
