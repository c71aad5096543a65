package plan

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// rejectComplex refuses a module that holds a complex value anywhere (c64, c128):
// GPU code generation has no complex kernels yet, and the passes (algebraic
// simplification, constant folding, fusion) were written for real numbers, so the
// module is refused before any of them runs. The error wraps ErrUnsupported and
// names the first such instruction; cpuref evaluates these modules.
func rejectComplex(m *hlo.Module) error {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if dt, ok := complexIn(in); ok {
				return fmt.Errorf("%w: computation %q: %%%s (%v) is %v: complex numbers are not supported by GPU code generation yet (cpuref evaluates them)",
					ErrUnsupported, c.Name, in.Name, in.Op, dt)
			}
		}
	}
	return nil
}

// complexIn returns the complex element type of in's result or of one of its
// operands, if any.
func complexIn(in *hlo.Instruction) (hlo.DType, bool) {
	shapes := []hlo.Shape{in.Shape}
	for _, o := range in.Operands {
		if o != nil {
			shapes = append(shapes, o.Shape)
		}
	}
	for _, s := range shapes {
		for _, leaf := range s.Leaves() {
			if leaf.DType.IsComplex() {
				return leaf.DType, true
			}
		}
	}
	return hlo.Invalid, false
}
