package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// evalTuple groups its operands (shared, not copied: values are immutable).
func evalTuple(_ *evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.TupleLiteral(ops...), nil
}

func evalGetTupleElement(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	t, i := ops[0], in.Attrs.TupleIndex
	if !t.Shape().IsTuple() || i < 0 || int(i) >= len(t.Elems()) {
		return nil, fmt.Errorf("no element %d in %v", i, t.Shape())
	}
	return t.Elems()[i], nil
}

// evalWhile runs body while condition holds, starting from the operand. There is no
// iteration limit: a loop that never ends runs until the evaluation's context is
// done, which every iteration checks.
func evalWhile(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	cond, err := called(in, 0)
	if err != nil {
		return nil, err
	}
	body, err := called(in, 1)
	if err != nil {
		return nil, err
	}
	state := ops[0]
	for iteration := 0; ; iteration++ {
		if err := ev.cancelled(); err != nil {
			return nil, fmt.Errorf("iteration %d: %w", iteration, err)
		}
		c, err := ev.callComputation(cond, state)
		if err != nil {
			return nil, fmt.Errorf("condition: %w", err)
		}
		if !c.Shape().Equal(hlo.Scalar(hlo.Pred)) {
			return nil, fmt.Errorf("condition returned %v, not pred[]", c.Shape())
		}
		if !c.Bool(0) {
			return state, nil
		}
		if state, err = ev.callComputation(body, state); err != nil {
			return nil, fmt.Errorf("body: %w", err)
		}
	}
}

// evalConditional runs one branch on its operand. A pred selector picks branch 0
// (true_computation) when true and branch 1 (false_computation) when false; an
// integer index outside [0, N) picks the last branch, as XLA.
func evalConditional(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) < 1 || len(in.Called) == 0 || len(ops) != len(in.Called)+1 {
		return nil, fmt.Errorf("conditional has %d operands for %d branches", len(ops), len(in.Called))
	}
	sel := ops[0]
	if !sel.Shape().IsScalar() {
		return nil, fmt.Errorf("branch selector is %v, not a scalar", sel.Shape())
	}
	var b int64
	switch {
	case sel.DType() == hlo.Pred:
		if len(in.Called) != 2 {
			return nil, fmt.Errorf("a pred selector needs 2 branches, got %d", len(in.Called))
		}
		if !sel.Bool(0) {
			b = 1
		}
	case sel.DType().IsInteger():
		b = indexValue(sel, 0)
		if b < 0 || b >= int64(len(in.Called)) {
			b = int64(len(in.Called)) - 1
		}
	default:
		return nil, fmt.Errorf("branch selector is %v", sel.Shape())
	}
	branch, err := called(in, int(b))
	if err != nil {
		return nil, err
	}
	return ev.callComputation(branch, ops[1+b])
}

func evalCall(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	c, err := called(in, 0)
	if err != nil {
		return nil, err
	}
	return ev.callComputation(c, ops...)
}
