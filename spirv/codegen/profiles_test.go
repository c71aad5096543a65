package codegen_test

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// TestEveryOpUnderEveryBuiltinTarget lowers every op's sample for each built-in
// device profile (NVIDIA, AMD and Intel from published reports, lavapipe) and
// validates every kernel with SPIRV-Tools. Ops whose types the device lacks
// (Intel's f64) must be refused, never emitted. Code generation relies on no fixed
// subgroup size (subgroup reductions read NumSubgroups and SubgroupId), so the
// profiles' subgroup-size ranges (AMD 32..64, Intel 8..32) change nothing here but
// workgroup sizes and shared memory, which these limits set.
func TestEveryOpUnderEveryBuiltinTarget(t *testing.T) {
	for _, name := range targets.Builtins() {
		d, err := targets.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		target := d.Codegen()
		t.Run(name, func(t *testing.T) {
			lowered := 0
			for _, op := range hlo.AllOpcodes() {
				c := codegen.OpSample(t, op)
				if c == nil {
					continue
				}
				p, err := codegen.Lower(c, target)
				if err != nil {
					if usesF64(c) && !target.Float64 {
						continue // refused: the device has no f64
					}
					t.Fatalf("%s: %v", op, err)
				}
				codegen.ValidateProgram(t, p)
				lowered++
			}
			t.Logf("%d ops lowered and validated", lowered)
			if lowered < 50 {
				t.Errorf("only %d ops lowered", lowered)
			}
		})
	}
}

// TestIntelProfileRefusesF64: the Arc A770 report has no shaderFloat64, so an f64
// kernel is refused with an error, not emitted.
func TestIntelProfileRefusesF64(t *testing.T) {
	d, err := targets.Builtin("intel-arc-a770")
	if err != nil {
		t.Fatal(err)
	}
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  a = f64[4] parameter(0)
  b = f64[4] parameter(1)
  ROOT s = f64[4] add(a, b)
}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := codegen.Lower(m.Entry, d.Codegen()); err == nil {
		t.Error("f64 add lowered for a device without shaderFloat64")
	}
	if _, err := codegen.Lower(m.Entry, mustTarget(t, "nvidia-rtx2070")); err != nil {
		t.Errorf("f64 add refused for a device with shaderFloat64: %v", err)
	}
}

func mustTarget(t *testing.T, name string) codegen.Target {
	d, err := targets.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	return d.Codegen()
}

// usesF64 reports whether any instruction of c is f64.
func usesF64(c *hlo.Computation) bool {
	for _, in := range c.Instructions {
		if in.Shape.DType == hlo.F64 {
			return true
		}
	}
	return false
}
