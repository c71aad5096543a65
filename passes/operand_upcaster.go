package passes

import "github.com/vkxla/vkxla/hlo"

// UpcastOperands gives each dot and convolution whose result type is wider than
// its operands' (XLA's preferred_element_type: s8×s8→s32, bf16×bf16→f32,
// f32×f32→f64, …) converts of its operands to the result type (XLA's
// OperandUpcaster). The widening is exact, so every product is formed exactly in
// the result type, as cpuref computes it; code generation then sees operands of
// the result's type, and fusion folds the converts into the contraction's loads.
func UpcastOperands(m *hlo.Module, _ Config) (bool, error) {
	names := moduleNames(m)
	changed := false
	for _, c := range m.Computations {
		var out []*hlo.Instruction
		for _, in := range c.Instructions {
			if isWidenedContraction(in) {
				for i, x := range in.Operands {
					cv := &hlo.Instruction{Name: names.fresh(in.Name + ".convert"), Op: hlo.OpConvert,
						Shape: x.Shape.WithDType(in.Shape.DType), Operands: []*hlo.Instruction{x}}
					out = append(out, cv)
					in.Operands[i] = cv
				}
				changed = true
			}
			out = append(out, in)
		}
		c.Instructions = out
		c.Renumber()
	}
	return changed, nil
}

func isWidenedContraction(in *hlo.Instruction) bool {
	return (in.Op == hlo.OpDot || in.Op == hlo.OpConvolution) && in.Operands[0].Shape.DType != in.Shape.DType
}
