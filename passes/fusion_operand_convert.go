package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Operand converts of mixed-precision dots. A dot whose result is wider than its
// operands (bf16×bf16→f32: XLA's preferred_element_type) reaches fusion with
// converts of its operands to f32 (UpcastOperands). A widening convert of f16 or
// bf16 to f32 joins the dot's kernel: the GEMM reads the 16-bit values with its
// vec4 loads and widens them in registers (exactly, as the convert would), so a
// mixed-precision dot is one kernel and its operands travel at half the bytes.
// The rules:
//   - the producer is a convert of f16 or bf16 to f32 with the dot as its only
//     user (it is never copied: a convert read elsewhere too stays a kernel);
//   - the kernel's readers of it are dots (a convolution's loads are not taught
//     to see through converts);
//   - nothing is fused into the convert's operand: the dot reads it from memory,
//     as it reads a plain operand (readByContraction).

// fusesOperandConverts says whether in, not otherwise a consumer, takes fused
// producers: a dot takes the widening converts of its operands.
func fusesOperandConverts(in *hlo.Instruction) bool { return in.Op == hlo.OpDot }

// readForContraction says whether p is read by a contraction of consumer's kernel
// (k, if it has one yet), directly or through a widening convert fused into it:
// such an operand takes no producer but a widening convert (canFuseOperandConvert).
func readForContraction(k *fusedKernel, consumer, p *hlo.Instruction) bool {
	if k == nil {
		return isContraction(consumer)
	}
	return readByContraction(k, p)
}

// canFuseOperandConvert says whether p, read by a contraction of consumer's
// kernel, may join it by the rules above.
func (f *fuser) canFuseOperandConvert(p, consumer *hlo.Instruction, operands map[*hlo.Instruction]bool, k *fusedKernel) bool {
	if p == f.c.Root || !isWideningFloatConvert(p) || f.users[p.ID].all != 1 || f.bindingsAfter(operands, p, k) > f.maxParams {
		return false
	}
	if k == nil {
		return consumer.Op == hlo.OpDot
	}
	j := slices.Index(k.fusion.Operands, p)
	return !slices.ContainsFunc(k.uses[k.fc.Params[j]], func(s operandSlot) bool { return s.in.Op != hlo.OpDot })
}

// isWideningFloatConvert: a convert of f16 or bf16 to f32, exact.
func isWideningFloatConvert(in *hlo.Instruction) bool {
	if in.Op != hlo.OpConvert || in.Shape.DType != hlo.F32 {
		return false
	}
	src := in.Operands[0].Shape.DType
	return src == hlo.F16 || src == hlo.BF16
}

// feedsContraction says whether in (an instruction of k's body) is a widening
// convert that a dot of k reads: its operand is then read for the contraction.
func (k *fusedKernel) feedsContraction(in *hlo.Instruction) bool {
	return isWideningFloatConvert(in) && slices.ContainsFunc(k.body, func(u *hlo.Instruction) bool {
		return u.Op == hlo.OpDot && slices.Contains(u.Operands, in)
	})
}
