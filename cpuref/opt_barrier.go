package cpuref

import "github.com/vkxla/vkxla/hlo"

// evalOptBarrier is the identity: a barrier fences passes, not values.
func evalOptBarrier(_ *evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return ops[0], nil
}
