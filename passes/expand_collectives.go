package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandCollectives lowers the collectives of a one-device program: a replica
// group of one member makes all-reduce, all-gather, reduce-scatter and all-to-all
// the identity on their operands (the -start forms a tuple (operands, results), the
// -done forms the result); collective-permute is the identity when a pair sends
// replica 0 to itself and zeros otherwise, as XLA defines; replica-id and
// partition-id are the constant 0. Groups spanning more replicas are an error
// wrapping hlo.ErrUnsupported that names the instruction. A program for several
// devices (Config.Devices) keeps its collectives: the planner makes them host
// steps.
func ExpandCollectives(m *hlo.Module, cfg Config) (bool, error) {
	if cfg.Devices > 1 {
		return false, nil
	}
	return expandEach(m, func(in *hlo.Instruction) bool { return in.Info().ExpandedBy == hlo.CollectiveExpander },
		hlo.Decompose)
}
