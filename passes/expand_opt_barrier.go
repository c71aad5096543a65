package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandOptBarriers replaces every opt-barrier by its operand: the get-tuple-elements
// of a barrier become get-tuple-elements of the tuple it held. It is the last pass
// of the pipeline, so every pass before it sees the barrier (CSE never merges one,
// fusion never fuses across one, remat never recomputes one) and code generation
// never does.
func ExpandOptBarriers(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpOptBarrier), hlo.Decompose)
}
