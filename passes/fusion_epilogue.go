package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Dot and convolution epilogues (XLA's kOutput fusion): a dot, or a float
// convolution without groups or depthwise (convEpilogueCandidate), joins the elementwise kernel that
// reads its product at each element's own index — a bias add, a scale, an
// activation (relu, clamp, gelu, tanh, logistic), a residual add, a convert — so
// that the code generator's GEMM applies them in its output stage and the product
// never goes to memory (spirv/codegen/epilogue.go). The rules:
//   - the dot has one user (it is computed once);
//   - the kernel's root is an array of the dot's dims, and every instruction in
//     the kernel that reads the dot, or a value computed from it, is elementwise
//     with the dot's dims (so each element of the product is read at its own
//     index only, by the element being stored);
//   - the kernel holds one dot and no reduction (a GEMM or a row kernel, not both);
//   - the dot keeps plain operands: no producer is fused into the dot's operands,
//     which its GEMM reads best as vec4 loads from memory (readByContraction),
//     but a widening convert (fusion_operand_convert.go).

// canFuseContraction says whether the dot or convolution p may join the kernel of
// consumer (k, if it has one yet) by the rules above.
func (f *fuser) canFuseContraction(p, consumer *hlo.Instruction, k *fusedKernel) bool {
	if f.users[p.ID].all != 1 || !p.Shape.IsArray() {
		return false
	}
	if k == nil { // the consumer, the kernel's root-to-be, is p's only reader
		return elementwiseOf(consumer, p)
	}
	// A kernel with extra outputs (multi-output fusion) is refused too: a GEMM's
	// output stage writes one array, so code generation would compute the
	// contraction element by element instead.
	if !k.fc.Root.Shape.IsArray() || !k.fc.Root.Shape.SameDims(p.Shape) || len(k.outputs) > 0 || k.holds(hlo.OpDot, hlo.OpConvolution, hlo.OpReduce) {
		return false
	}
	return readAtOwnIndex(k.fc.Params[slices.Index(k.fusion.Operands, p)], kernelReaders(k), p.Shape)
}

// isContraction: a dot, or a convolution (an epilogue's producer).
func isContraction(in *hlo.Instruction) bool { return in.Op == hlo.OpDot || in.Op == hlo.OpConvolution }

// convEpilogueCandidate: a float convolution whose output stage takes the
// epilogue in code generation: one without feature or batch groups (an implicit
// GEMM when large enough), or a depthwise one (feature groups = input features =
// output features, MobileNet's), which has its own kernel with the same output
// hook (spirv/codegen/depthwise.go); other grouped ones are never fused. Its
// terms per output element are bounded too (a layer's forward and input
// gradient, not a filter gradient, which sums over the batch's pixels): a fused
// convolution too small for those kernels is computed element by element, which
// must stay within the device's loop bound that the split strategies of long
// contractions exist for.
func convEpilogueCandidate(in *hlo.Instruction) bool {
	cd := in.Attrs.Conv
	if cd == nil || max(in.Attrs.BatchGroupCount, 1) != 1 || (max(in.Attrs.FeatureGroupCount, 1) != 1 && !isDepthwise(in)) {
		return false
	}
	terms := in.Operands[1].Shape.Dims[cd.KernelInput]
	for _, d := range cd.KernelSpatial {
		terms *= in.Operands[1].Shape.Dims[d]
	}
	if terms > maxEpilogueConvTerms {
		return false
	}
	for _, x := range []*hlo.Instruction{in, in.Operands[0], in.Operands[1]} {
		if dt := x.Shape.DType; dt != hlo.F32 && dt != hlo.F16 && dt != hlo.BF16 {
			return false
		}
	}
	return true
}

// isDepthwise: a convolution with one feature group per input feature and one
// output feature per group.
func isDepthwise(in *hlo.Instruction) bool {
	cd, g := in.Attrs.Conv, in.Attrs.FeatureGroupCount
	return in.Operands[0].Shape.Dims[cd.InputFeature] == g && in.Operands[1].Shape.Dims[cd.KernelOutput] == g
}

// maxEpilogueConvTerms bounds a fused convolution's terms per output element.
const maxEpilogueConvTerms = 1 << 14

// holds says whether k's body has an instruction of one of the opcodes.
func (k *fusedKernel) holds(ops ...hlo.Opcode) bool {
	return slices.ContainsFunc(k.body, func(in *hlo.Instruction) bool { return slices.Contains(ops, in.Op) })
}

// elementwiseOf says whether u is elementwise with v's dims (so it reads v at its
// own index).
func elementwiseOf(u, v *hlo.Instruction) bool {
	switch u.Info().Kind {
	case hlo.KindUnary, hlo.KindBinary, hlo.KindElementwise:
		return u.Shape.IsArray() && u.Shape.SameDims(v.Shape)
	}
	return false
}

// readAtOwnIndex says whether every reader of v in the kernel, and of what they
// compute, is elementwise with dims s.
func readAtOwnIndex(v *hlo.Instruction, readers map[*hlo.Instruction][]*hlo.Instruction, s hlo.Shape) bool {
	for _, u := range readers[v] {
		if !u.Shape.IsArray() || !u.Shape.SameDims(s) || !elementwiseOf(u, v) || !readAtOwnIndex(u, readers, s) {
			return false
		}
	}
	return true
}

// readByContraction says whether a dot or convolution in k reads p (a fusion
// operand of k), directly or through a fused widening convert
// (fusion_operand_convert.go): fusing p would hand it a computed operand.
func readByContraction(k *fusedKernel, p *hlo.Instruction) bool {
	if k == nil {
		return false
	}
	j := slices.Index(k.fusion.Operands, p)
	return j >= 0 && slices.ContainsFunc(k.uses[k.fc.Params[j]], func(s operandSlot) bool { return isContraction(s.in) || k.feedsContraction(s.in) })
}
