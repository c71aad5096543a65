package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// The collectives on one device, by definition: a replica group of one member
// reduces, gathers, scatters or exchanges one operand, so each op returns its
// operands (the -start forms their (operand, result) tuples); a collective-permute
// with no pair targeting the replica yields zeros; replica-id and partition-id are
// 0. Groups with more than one replica wrap hlo.ErrUnsupported.

func singleReplica(in *hlo.Instruction) error {
	if err := hlo.SingleReplica(in.Attrs.ReplicaGroups); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// collectiveIdentity returns the operands: one array, or a tuple of several.
func collectiveIdentity(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if err := singleReplica(in); err != nil {
		return nil, err
	}
	return identityResult(ops), nil
}

func identityResult(ops []*hlo.Literal) *hlo.Literal {
	if len(ops) == 1 {
		return ops[0].Clone()
	}
	return hlo.TupleLiteral(ops...).Clone()
}

func evalAllGatherStart(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if err := singleReplica(in); err != nil {
		return nil, err
	}
	return hlo.TupleLiteral(identityResult(ops), identityResult(ops)), nil
}

func evalAsyncDone(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if in.Op == hlo.OpAllReduceDone {
		return ops[0].Clone(), nil
	}
	return evalGetTupleElement(ev, &hlo.Instruction{Attrs: hlo.Attributes{TupleIndex: 1}}, ops)
}

func permuted(in *hlo.Instruction, x *hlo.Literal) (*hlo.Literal, error) {
	targeted, err := hlo.PermuteTargetsReplica(in.Attrs.SourceTargetPairs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	if targeted {
		return x.Clone(), nil
	}
	return hlo.NewLiteral(x.Shape()), nil // zeros
}

func evalCollectivePermute(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return permuted(in, ops[0])
}

func evalCollectivePermuteStart(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	y, err := permuted(in, ops[0])
	if err != nil {
		return nil, err
	}
	elems := []*hlo.Literal{ops[0].Clone(), y}
	for len(elems) < len(in.Shape.Elems) { // the u32[] contexts of XLA's older form
		elems = append(elems, hlo.NewLiteral(hlo.Scalar(hlo.U32)))
	}
	return hlo.TupleLiteral(elems...), nil
}

func evalDeviceID(_ *evaluator, _ *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.NewLiteral(hlo.Scalar(hlo.U32)), nil
}

// evalCustomCall evaluates the call's registered decomposition: the registry
// defines what a target computes.
func evalCustomCall(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if t, ok := hlo.KernelTarget(in); ok && t.Reference != nil {
		return kernelReference(t, in, ops)
	}
	c, err := hlo.ExpandCustomCall(in)
	if err != nil {
		return nil, err
	}
	return ev.callComputation(c, ops...)
}

// kernelReference is a kernel target's Go definition, its result checked against
// the call's shape.
func kernelReference(t hlo.CustomCallTarget, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	out, err := t.Reference(in, ops)
	if err != nil {
		return nil, fmt.Errorf("custom-call %s (target %q): reference: %w", in.Name, t.Name, err)
	}
	if out == nil || !out.Shape().Equal(in.Shape) {
		got := "nil"
		if out != nil {
			got = out.Shape().String()
		}
		return nil, fmt.Errorf("custom-call %s (target %q): the reference returned %s, the call declares %v", in.Name, t.Name, got, in.Shape)
	}
	return out, nil
}
