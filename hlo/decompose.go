package hlo

import "fmt"

// Decompose returns the computation an instruction of an expanded op (its row's
// ExpandedBy is set) stands for, its parameters standing for the instruction's
// operands: custom-calls by their registered target, batch norm by its formulas,
// rng-bit-generator by integer ops, rng by its state and Philox bits, single-replica
// collectives by identities, opt-barrier by its operand, map by its computation's
// body over arrays, mulhi by wide or limb products, topk by a sort, triangular-solve
// and cholesky by loops. The
// expander passes splice it in before code generation, and autodiff differentiates
// it: one decomposition serves both.
func Decompose(in *Instruction) (*Computation, error) {
	switch in.Info().ExpandedBy {
	case CustomCallExpander:
		return ExpandCustomCall(in)
	case BatchNormExpander:
		return decomposeBatchNorm(in)
	case RngBitGeneratorExpander:
		return decomposeRngBitGenerator(in)
	case CollectiveExpander:
		return decomposeCollective(in)
	case ReducePrecisionExpander:
		return decomposeReducePrecision(in)
	case DimensionSizeExpander:
		b, _ := operandParams(in)
		x := in.Operands[0].Shape
		return b.BuildComputation(b.ScalarConstant(S32, float64(x.Dims[in.Attrs.Dimensions[0]])))
	case MapInliner:
		return decomposeMap(in)
	case MulHiExpander:
		return decomposeMulHi(in)
	case TopKDecomposer:
		return decomposeTopK(in)
	case TriangularSolveExpander:
		return decomposeTriangularSolve(in)
	case CholeskyExpander:
		return decomposeCholesky(in)
	case BitcastExpander:
		return decomposeBitcast(in)
	case AfterAllExpander:
		return decomposeAfterAll(in)
	case RngExpander:
		return decomposeRng(in)
	case RngStateExpander:
		return nil, fmt.Errorf("%s %s reads the RNG state the runtime keeps; the %s pass threads it through the entry computation",
			in.Op, in.Name, RngStateExpander)
	case OptBarrierExpander:
		b, args := operandParams(in)
		return b.BuildComputation(args[0]) // the identity: a barrier only orders passes
	}
	return nil, fmt.Errorf("%s %s: %v is not an expanded op", in.Op, in.Name, in.Op)
}

// operandParams starts a builder whose parameters have in's operand shapes.
func operandParams(in *Instruction) (*Builder, []*Instruction) {
	b := NewBuilder(in.Name + ".expanded")
	params := make([]*Instruction, len(in.Operands))
	for i, x := range in.Operands {
		params[i] = b.Parameter(x.Shape, in.Name+".arg")
	}
	return b, params
}
