package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandBatchNorm lowers batch-norm-training, -inference and -grad to arithmetic
// and reductions, as XLA's BatchNormExpander does (hlo.Decompose: the formulas are
// in hlo/decompose_batchnorm.go, shared with autodiff, which differentiates the
// same decomposition).
func ExpandBatchNorm(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpBatchNormTraining, hlo.OpBatchNormInference, hlo.OpBatchNormGrad), hlo.Decompose)
}
