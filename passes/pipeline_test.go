package passes

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// passCase is a before/after HLO text test: the module before, the passes to
// skip, and the module expected after the pipeline (compared as printed text, so
// names, order and attributes all count); an empty after means unchanged.
type passCase struct {
	name     string
	before   string
	disabled []string
	cfg      Config
	after    string
}

func runPassCases(t *testing.T, cases []passCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := hlo.ParseModule(tc.before)
			if err != nil {
				t.Fatalf("before: %v", err)
			}
			after := tc.after
			if after == "" {
				after = tc.before
			}
			want, err := hlo.ParseModule(after)
			if err != nil {
				t.Fatalf("after: %v", err)
			}
			cfg := tc.cfg
			cfg.Disabled = tc.disabled
			if err := Run(m, cfg); err != nil {
				t.Fatal(err)
			}
			if got, exp := hlo.Print(m), hlo.Print(want); got != exp {
				t.Errorf("after the pipeline:\n%s\nwant:\n%s", got, exp)
			}
		})
	}
}

func TestRunRejectsUnknownPass(t *testing.T) {
	m, err := hlo.ParseModule("HloModule m\nENTRY %e (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Config{Disabled: []string{"fuson"}})
	if err == nil || !strings.Contains(err.Error(), `unknown pass "fuson"`) || !strings.Contains(err.Error(), "fusion") {
		t.Fatalf("got %v, want an error naming the unknown pass and listing the real ones", err)
	}
}

func TestRunVerifiesInput(t *testing.T) {
	m, err := hlo.ParseModule("HloModule m\nENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%x)\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	m.Entry.Root.Shape = hlo.MakeShape(hlo.F32, 3) // a broken builder would do this
	if err := Run(m, Config{}); err == nil || !strings.Contains(err.Error(), "input module") {
		t.Fatalf("got %v, want the verifier's error on the input module", err)
	}
}

func TestAfterPassSeesChangedModules(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
ENTRY %e (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %dead = f32[4] exponential(%x)
  %n = f32[4] negate(%x)
  ROOT %a = f32[4] abs(%n)
}
`)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	err = Run(m, Config{AfterPass: func(i int, name string, _ *hlo.Module) { seen = append(seen, name) }})
	if err != nil {
		t.Fatal(err)
	}
	// dce removes %dead, fusion fuses %n into %a; nothing is left for the second dce.
	if got := strings.Join(seen, ","); got != "dce,fusion" {
		t.Fatalf("AfterPass saw %q, want dce,fusion", got)
	}
}
