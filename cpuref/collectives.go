package cpuref

import (
	"context"
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
)

// The collectives evaluate through internal/collective, which defines their
// multi-device semantics: on a one-device run (Eval) every group has one member,
// so each op returns its operands, a collective-permute with no pair targeting
// the device yields zeros, and replica-id and partition-id are 0; groups naming
// other devices wrap hlo.ErrUnsupported. EvalReplicas runs one evaluator per
// device, meeting at each collective.

func evalCollective(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return ev.dev.Eval(ev.ctx, in, ops)
}

// evalAsyncDone is an async -done: all-reduce-done returns its operand, the others
// element 1 of their -start's tuple.
func evalAsyncDone(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if in.Op == hlo.OpAllReduceDone {
		return ops[0].Clone(), nil
	}
	return evalGetTupleElement(ev, &hlo.Instruction{Attrs: hlo.Attributes{TupleIndex: 1}}, ops)
}

// Reducer compiles a collective's to_apply (two scalars to one) into a function
// of element bits with cpuref's numerics: the runtime's host steps reduce with it.
// The function is for one goroutine at a time.
func Reducer(c *hlo.Computation) (func(a, b uint64) (uint64, error), error) {
	if c == nil {
		return nil, fmt.Errorf("cpuref: %w: nil computation", ErrInvalidInput)
	}
	return newEvaluator(context.Background(), Limits{}).reducer(c)
}

// reducer compiles a collective's to_apply for internal/collective.
func (ev *evaluator) reducer(c *hlo.Computation) (collective.BinaryFunc, error) {
	f, err := ev.scalarFunc(c)
	if err != nil {
		return nil, err
	}
	if err := f.expect(2, 1); err != nil {
		return nil, err
	}
	args, res := make([]uint64, 2), make([]uint64, 1)
	return func(a, b uint64) (uint64, error) {
		args[0], args[1] = a, b
		err := f.call(args, res)
		return res[0], err
	}, nil
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
