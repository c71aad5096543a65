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

// TestComplexPlanning: GPU planning takes c64 in the ops codegen has kernels for,
// and refuses c128 (an fft of c128 too) and a c64 op without a kernel with an
// ErrUnsupported
// naming the instruction, before any pass runs; code generation called directly
// refuses them too.
func TestComplexPlanning(t *testing.T) {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(text string) *hlo.Module {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ok := parse("HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  c = c64[4] complex(x, x)\n  p = c64[4] multiply(c, c)\n  ROOT r = f32[4] imag(p)\n}")
	if _, err := plan.Build(ok, d.Plan(), plan.Options{}); err != nil {
		t.Fatalf("Build of a c64 module with kernels: %v", err)
	}
	for _, tc := range []struct{ text, want string }{
		{"HloModule m\nENTRY e {\n  x = c128[4] parameter(0)\n  ROOT n = c128[4] copy(x)\n}", "%x (parameter): uses c128"},
		{"HloModule m\nadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\nENTRY e {\n  x = c64[4] parameter(0)\n  z = c64[] constant((0, 0))\n  ROOT n = c64[2] reduce-window(x, z), window={size=3}, to_apply=add\n}", "%n (reduce-window): uses c64, and GPU code generation has no complex kernel for reduce-window"},
		{"HloModule m\nENTRY e {\n  x = c128[12] parameter(0)\n  ROOT f = c128[12] fft(x), fft_type=FFT, fft_length={12}\n}", "%x (parameter): uses c128"},
	} {
		m := parse(tc.text)
		_, err = plan.Build(m, d.Plan(), plan.Options{})
		if !errors.Is(err, hlo.ErrUnsupported) {
			t.Fatalf("Build: %v, want ErrUnsupported", err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build: %q does not say %q", err, tc.want)
		}
		if _, err = codegen.Lower(m.Entry, d.Plan().Codegen); err == nil {
			t.Errorf("codegen.Lower of %s: no error", tc.want)
		}
	}
}
