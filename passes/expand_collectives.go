package passes

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// ExpandCollectives lowers the collectives of a one-device program: a replica
// group of one member makes all-reduce, all-gather, reduce-scatter and all-to-all
// the identity on their operands (the -start forms a tuple (operands, results), the
// -done forms the result); collective-permute is the identity when a pair sends
// replica 0 to itself and zeros otherwise, as XLA defines; replica-id and
// partition-id are the constant 0. Groups spanning more replicas are an error
// wrapping hlo.ErrUnsupported that names the instruction.
func ExpandCollectives(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, func(in *hlo.Instruction) bool { return in.Info().ExpandedBy == hlo.CollectiveExpander },
		expandCollective)
}

func expandCollective(in *hlo.Instruction) (*hlo.Computation, error) {
	if err := hlo.SingleReplica(in.Attrs.ReplicaGroups); err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	b, args := operandParams(in)
	root, err := collectiveResult(b, in, args)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	return b.BuildComputation(root)
}

func collectiveResult(b *hlo.Builder, in *hlo.Instruction, args []*hlo.Instruction) (*hlo.Instruction, error) {
	identity := func() *hlo.Instruction {
		if len(args) == 1 {
			return args[0]
		}
		return b.Tuple(args...)
	}
	switch in.Op {
	case hlo.OpReplicaID, hlo.OpPartitionID:
		return b.ScalarConstant(hlo.U32, 0), nil
	case hlo.OpAllGatherStart:
		return b.Tuple(identity(), identity()), nil
	case hlo.OpAllGatherDone, hlo.OpCollectivePermuteDone:
		return b.GetTupleElement(args[0], 1), nil
	case hlo.OpCollectivePermute, hlo.OpCollectivePermuteStart:
		y, err := permuteResult(b, in, args[0])
		if err != nil || in.Op == hlo.OpCollectivePermute {
			return y, err
		}
		elems := []*hlo.Instruction{args[0], y}
		for len(elems) < len(in.Shape.Elems) { // XLA's older form's u32[] contexts
			elems = append(elems, b.ScalarConstant(hlo.U32, 0))
		}
		return b.Tuple(elems...), nil
	}
	return identity(), nil // all-reduce(-start, -done), all-gather, reduce-scatter, all-to-all
}

func permuteResult(b *hlo.Builder, in *hlo.Instruction, x *hlo.Instruction) (*hlo.Instruction, error) {
	targeted, err := hlo.PermuteTargetsReplica(in.Attrs.SourceTargetPairs)
	if err != nil || targeted {
		return x, err
	}
	return b.BroadcastScalar(b.ScalarConstant(x.Shape.DType, 0), x.Shape.Dims...), nil
}
