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

// TestComplexPlanning: GPU planning takes c64 and c128 in the ops codegen has
// kernels for (and dots, which a pass rewrites into real ones), and refuses a
// complex op without a kernel, and c128 (an fft of
// c128 too) on a target without 64-bit floats, with an ErrUnsupported naming the
// instruction, before any pass runs; code generation called directly refuses
// them too.
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
	c128Copy := "HloModule m\nENTRY e {\n  x = c128[4] parameter(0)\n  ROOT n = c128[4] copy(x)\n}"
	c64Window := "HloModule m\nadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\nENTRY e {\n  x = c64[4] parameter(0)\n  z = c64[] constant((0, 0))\n  ROOT n = c64[2] reduce-window(x, z), window={size=3}, to_apply=add\n}"
	c128FFT := "HloModule m\nENTRY e {\n  x = c128[12] parameter(0)\n  ROOT f = c128[12] fft(x), fft_type=FFT, fft_length={12}\n}"
	c64Dot := "HloModule m\nENTRY e {\n  x = c64[2,3] parameter(0)\n  y = c64[3,4] parameter(1)\n  ROOT d = c64[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}"
	c128Dot := "HloModule m\nENTRY e {\n  x = c128[5,3] parameter(0)\n  y = c128[5,3] parameter(1)\n  ROOT d = c128[5] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}"
	for _, text := range []string{
		"HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  c = c64[4] complex(x, x)\n  p = c64[4] multiply(c, c)\n  ROOT r = f32[4] imag(p)\n}",
		"HloModule m\nENTRY e {\n  x = f64[4] parameter(0)\n  c = c128[4] complex(x, x)\n  p = c128[4] multiply(c, c)\n  ROOT r = f64[4] imag(p)\n}",
		c128Copy, c128FFT, c64Window, c64Dot, c128Dot,
	} {
		if _, err := plan.Build(parse(text), d.Plan(), plan.Options{}); err != nil {
			t.Fatalf("Build of a complex module with kernels: %v\n%s", err, text)
		}
	}
	noF64 := d.Plan()
	noF64.Codegen.Float64 = false
	for _, tc := range []struct {
		text, want string
		target     plan.Target
	}{
		{c128Copy, "%x (parameter): uses c128, which has f64 parts and needs 64-bit floats", noF64},
		{"HloModule m\nadd {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ROOT s = c64[] add(a, b)\n}\nge {\n  a = c64[] parameter(0)\n  b = c64[] parameter(1)\n  ra = f32[] real(a)\n  rb = f32[] real(b)\n  ROOT g = pred[] compare(ra, rb), direction=GE\n}\nENTRY e {\n  x = c64[6] parameter(0)\n  s = c64[2] parameter(1)\n  z = c64[] constant((0, 0))\n  ROOT n = c64[6] select-and-scatter(x, s, z), window={size=3 stride=3}, select=ge, scatter=add\n}", "%n (select-and-scatter): uses c64, and GPU code generation has no complex kernel for select-and-scatter", d.Plan()},
		{c128FFT, "%x (parameter): uses c128, which has f64 parts", noF64},
		{c128Dot, "%x (parameter): uses c128, which has f64 parts", noF64},
	} {
		m := parse(tc.text)
		_, err = plan.Build(m, tc.target, plan.Options{})
		if !errors.Is(err, hlo.ErrUnsupported) {
			t.Fatalf("Build: %v, want ErrUnsupported", err)
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Build: %q does not say %q", err, tc.want)
		}
		if _, err = codegen.Lower(m.Entry, tc.target.Codegen); !errors.Is(err, hlo.ErrUnsupported) {
			t.Errorf("codegen.Lower of %s: %v, want ErrUnsupported", tc.want, err)
		}
	}
}

// TestComplexDotReachesCodegenAsRealDots: the plan takes a complex dot (the
// complex-dot-expander rewrites it), while code generation, which never sees one
// after the passes, still refuses a complex dot handed to it directly.
func TestComplexDotReachesCodegenAsRealDots(t *testing.T) {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	m, err := hlo.ParseModule("HloModule m\nENTRY e {\n  x = c64[2,3] parameter(0)\n  y = c64[3,4] parameter(1)\n  ROOT d = c64[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codegen.Lower(m.Entry, d.Plan().Codegen); !errors.Is(err, hlo.ErrUnsupported) ||
		!strings.Contains(err.Error(), "no complex kernel for dot") {
		t.Fatalf("codegen.Lower of a complex dot: %v, want ErrUnsupported naming dot", err)
	}
	if _, err := plan.Build(m, d.Plan(), plan.Options{}); err != nil {
		t.Fatalf("Build of a complex dot: %v", err)
	}
}
