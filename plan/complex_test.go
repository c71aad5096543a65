package plan_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// TestComplexIsUnsupported: GPU planning refuses a module with a complex value
// with an ErrUnsupported naming the instruction, before any pass runs, and code
// generation refuses a complex kernel called directly.
func TestComplexIsUnsupported(t *testing.T) {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"HloModule m\nENTRY e {\n  x = c128[4] parameter(0)\n  ROOT n = c128[4] copy(x)\n}",
		// complex only inside: the result of a real operand.
		"HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = c64[4] convert(x)\n}",
	} {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		_, err = plan.Build(m, d.Plan(), plan.Options{})
		if !errors.Is(err, hlo.ErrUnsupported) {
			t.Fatalf("Build: %v, want ErrUnsupported", err)
		}
		if !strings.Contains(err.Error(), "complex") || !strings.Contains(err.Error(), "%") {
			t.Errorf("Build: %q does not name the complex instruction", err)
		}
		_, err = codegen.Lower(m.Entry, d.Plan().Codegen)
		if err == nil || !strings.Contains(err.Error(), "complex") {
			t.Errorf("codegen.Lower: %v, want an error about the complex type", err)
		}
	}
}
