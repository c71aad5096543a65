package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Dequantising operands of dots. A dot whose result is wider than its operands
// (bf16×bf16→f32, s4 weights into f32: XLA's preferred_element_type) reaches
// fusion with converts of its operands (UpcastOperands), and a quantised linear
// layer's weight is dequantised before the dot: dot(x, multiply(convert(w),
// broadcast(scale))). Both join the dot's kernel, so that the GEMM and the GEMV
// read the weight at its stored width (16, 8 or 4 bits) and widen (and scale) it
// in registers, exactly as the separate kernels would have, and the weight is
// read once. The rules, for a producer p read by a dot of the consumer's kernel,
// directly or through what joined it by these rules (the dot's operand chain):
//   - p has the chain as its only user (it is never copied: a value read
//     elsewhere too stays a kernel of its own) and is not the computation's root;
//   - read by the dot: p is a dequantising convert (isDequantConvert) or a
//     scale multiply (isScaleMultiply); read by a widening convert in the chain
//     (of an f16 product for an f32 dot, or of an f16 scale), either, or a
//     scale operand;
//   - read by a scale multiply: p is a dequantising convert or a scale operand
//     (isScaleOperand: a broadcast, reshape or widening float convert);
//   - read by a scale operand: p is a scale operand (a per-group scale [N, K/g]
//     is a broadcast to [N, K/g, g] and a reshape to [N, K]);
//   - a convolution (one without batch groups: a layer's forward, not a filter
//     gradient) takes these into its filter (operand 1) only, read by its
//     kernels through the emitter or as packed words (spirv/codegen/convquant.go);
//     its input keeps its own kernel, read with vec4 loads;
//   - nothing else joins a chain, so that an operand the GEMM reads best with
//     vec4 loads from memory stays in memory (readByContraction).

// fusesOperandConverts says whether in, not otherwise a consumer, takes fused
// producers: a dot takes its operands' dequantising chains, a convolution its
// filter's.
func fusesOperandConverts(in *hlo.Instruction) bool {
	return in.Op == hlo.OpDot || takesFilterChain(in)
}

// takesFilterChain: a convolution without batch groups, whose filter may be a
// dequantising chain.
func takesFilterChain(in *hlo.Instruction) bool {
	return in.Op == hlo.OpConvolution && in.Attrs.Conv != nil && max(in.Attrs.BatchGroupCount, 1) == 1
}

// readForContraction says whether p is read by a contraction of consumer's kernel
// (k, if it has one yet), directly or through its operand chain: such an operand
// takes no producer but by the rules above (canFuseOperandConvert).
func readForContraction(k *fusedKernel, consumer, p *hlo.Instruction) bool {
	if k == nil {
		return isContraction(consumer)
	}
	return readByContraction(k, p)
}

// canFuseOperandConvert says whether p, read by a contraction of consumer's
// kernel or its operand chain, may join it by the rules above.
func (f *fuser) canFuseOperandConvert(p, consumer *hlo.Instruction, operands map[*hlo.Instruction]bool, k *fusedKernel) bool {
	if p == f.c.Root || f.users[p.ID].all != 1 || f.bindingsAfter(operands, p, k) > f.maxParams {
		return false
	}
	if k == nil {
		slot := slices.Index(consumer.Operands, p)
		return slot >= 0 && chainTakes(consumer, slot, p)
	}
	j := slices.Index(k.fusion.Operands, p)
	return !slices.ContainsFunc(k.uses[k.fc.Params[j]], func(s operandSlot) bool { return !chainTakes(s.in, s.k, p) })
}

// chainTakes says whether reader, a contraction or a member of a contraction's
// operand chain, may read p fused as its operand slot.
func chainTakes(reader *hlo.Instruction, slot int, p *hlo.Instruction) bool {
	switch {
	case reader.Op == hlo.OpDot:
		return isDequantConvert(p) || isScaleMultiply(p)
	case reader.Op == hlo.OpConvolution:
		return slot == 1 && reader.Operands[0] != p && takesFilterChain(reader) && (isDequantConvert(p) || isScaleMultiply(p))
	case reader.Op == hlo.OpConvert: // a widening convert of the product, or of the scale
		return isDequantConvert(p) || isScaleMultiply(p) || isScaleOperand(p)
	case reader.Op == hlo.OpMultiply:
		return isDequantConvert(p) || isScaleOperand(p)
	case reader.Op == hlo.OpBroadcast, reader.Op == hlo.OpReshape:
		return isScaleOperand(p)
	}
	return false
}

// isDequantConvert: an exact widening convert that a contraction's loads perform
// in registers: f16 or bf16 to f32; an 8- or 4-bit integer (s8, u8, s4, u4), an
// 8-bit float or f4e2m1fn to f32; and the same to f16 where f16 holds every value
// (the integers, and the 8-bit floats but f8e8m0fnu, whose range is f32's).
func isDequantConvert(in *hlo.Instruction) bool {
	if in.Op != hlo.OpConvert {
		return false
	}
	src, dst := in.Operands[0].Shape.DType, in.Shape.DType
	switch dst {
	case hlo.F32:
		return src == hlo.F16 || src == hlo.BF16 || isQuantType(src)
	case hlo.F16:
		return isQuantType(src) && src != hlo.F8E8M0FNU
	}
	return false
}

// isQuantType: the stored types of quantised weights that a dot's kernel
// dequantises in registers.
func isQuantType(dt hlo.DType) bool {
	switch dt {
	case hlo.S8, hlo.U8, hlo.S4, hlo.U4, hlo.F4E2M1FN:
		return true
	}
	return dt.IsFloat() && dt.Bits() == 8
}

// isScaleMultiply: a float multiply of a dequantising convert (an operand of the
// multiply outside the kernel: a weight) by something else (its scale).
func isScaleMultiply(in *hlo.Instruction) bool {
	return in.Op == hlo.OpMultiply && in.Shape.DType.IsFloat() &&
		slices.ContainsFunc(in.Operands, func(x *hlo.Instruction) bool {
			return isDequantConvert(x) && x.Operands[0].Shape.DType != hlo.F16 && x.Operands[0].Shape.DType != hlo.BF16
		})
}

// isScaleOperand: what a scale passes through on its way to the multiply: a
// broadcast or reshape of floats, or a widening convert of f16 or bf16 to f32.
func isScaleOperand(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpBroadcast, hlo.OpReshape:
		return in.Shape.DType.IsFloat()
	case hlo.OpConvert:
		src := in.Operands[0].Shape.DType
		return in.Shape.DType == hlo.F32 && (src == hlo.F16 || src == hlo.BF16)
	}
	return false
}

// feedsContraction says whether in (an instruction of k's body) is in the
// operand chain of a dot of k (or of a convolution's filter): what it reads is
// then read for the contraction.
func (k *fusedKernel) feedsContraction(in *hlo.Instruction) bool {
	for _, u := range k.body {
		switch {
		case u.Op == hlo.OpDot && inChain(u, in):
			return true
		case u.Op == hlo.OpConvolution: // its filter's chain only
			if w := u.Operands[1]; w == in || (w.Op != hlo.OpParameter && inChain(w, in)) {
				return true
			}
		}
	}
	return false
}

// inChain says whether in is an operand of x, or in the operand chain of one.
func inChain(x, in *hlo.Instruction) bool {
	for _, op := range x.Operands {
		if op == in || (op.Op != hlo.OpParameter && inChain(op, in)) {
			return true
		}
	}
	return false
}
