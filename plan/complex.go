package plan

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// rejectUnsupported refuses a module that uses an op GPU code generation lacks
// (the op table's NoGPU) or a complex value it has no kernel for on t (c64 or
// c128 in an op outside codegen.ComplexOps: tanh, tan, power, …; c128 on a target
// without 64-bit floats and integers). It runs before any pass, as the passes
// must not meet what the back end cannot lower (and the simplifier's rules were
// written for real numbers; they leave complex values alone, but their users
// should not rely on it). The error wraps ErrUnsupported and names the first such
// instruction; cpuref evaluates these modules.
func rejectUnsupported(m *hlo.Module, t codegen.Target) error {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			why := in.Info().NoGPU
			if why == "" {
				why = codegen.ComplexTargetSupport(in, t)
			}
			if why != "" {
				return fmt.Errorf("%w: computation %q: %%%s (%v): %s", ErrUnsupported, c.Name, in.Name, in.Op, why)
			}
		}
	}
	return nil
}
