package hlo

import (
	"fmt"
)

// decomposeCollective lowers the collectives of a one-device program: a replica
// group of one member makes all-reduce, all-gather, reduce-scatter, all-to-all and
// collective-broadcast the identity on their operands (the -start forms a tuple (operands, results), the
// -done forms the result); collective-permute is the identity when a pair sends
// replica 0 to itself and zeros otherwise, as XLA defines; replica-id and
// partition-id are the constant 0. Groups spanning more replicas are an error
// wrapping ErrUnsupported that names the instruction.
func decomposeCollective(in *Instruction) (*Computation, error) {
	if err := SingleReplica(in.Attrs.ReplicaGroups); err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	b, args := operandParams(in)
	root, err := collectiveValue(b, in, args)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	return b.BuildComputation(root)
}

func collectiveValue(b *Builder, in *Instruction, args []*Instruction) (*Instruction, error) {
	identity := func() *Instruction {
		if len(args) == 1 {
			return args[0]
		}
		return b.Tuple(args...)
	}
	switch in.Op {
	case OpReplicaID, OpPartitionID:
		return b.ScalarConstant(U32, 0), nil
	case OpAllGatherStart:
		return b.Tuple(identity(), identity()), nil
	case OpAllGatherDone, OpCollectivePermuteDone:
		return b.GetTupleElement(args[0], 1), nil
	case OpCollectivePermute, OpCollectivePermuteStart:
		y, err := permuteValue(b, in, args[0])
		if err != nil || in.Op == OpCollectivePermute {
			return y, err
		}
		elems := []*Instruction{args[0], y}
		for len(elems) < len(in.Shape.Elems) { // XLA's older form's u32[] contexts
			elems = append(elems, b.ScalarConstant(U32, 0))
		}
		return b.Tuple(elems...), nil
	}
	return identity(), nil // all-reduce(-start, -done), all-gather, reduce-scatter, all-to-all
}

func permuteValue(b *Builder, in *Instruction, x *Instruction) (*Instruction, error) {
	targeted, err := PermuteTargetsReplica(in.Attrs.SourceTargetPairs)
	if err != nil || targeted {
		return x, err
	}
	return b.BroadcastScalar(b.ScalarConstant(x.Shape.DType, 0), x.Shape.Dims...), nil
}
