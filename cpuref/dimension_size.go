package cpuref

import "github.com/vkxla/vkxla/hlo"

// evalGetDimensionSize is the size of the operand's dimension, an s32[].
func evalGetDimensionSize(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.ScalarLiteral(int32(ops[0].Shape().Dims[in.Attrs.Dimensions[0]])), nil
}
