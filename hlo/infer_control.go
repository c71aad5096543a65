package hlo

import (
	"fmt"
)

// Shape rules of tuples and control flow.

func inferTuple(a *shapeArgs) (Shape, error) {
	t := MakeTuple(a.operands...)
	if err := checkNesting(t); err != nil {
		return Shape{}, err
	}
	return t.Clone(), nil
}

func inferGetTupleElement(a *shapeArgs) (Shape, error) {
	t, i := a.operands[0], a.attrs.TupleIndex
	if !t.IsTuple() {
		return Shape{}, fmt.Errorf("operand %v is not a tuple", t)
	}
	if i < 0 || i >= int64(len(t.Elems)) {
		return Shape{}, fmt.Errorf("index %d out of range for %v", i, t)
	}
	return t.Elems[i].Clone(), nil
}

// inferWhile: condition is state -> pred[], body is state -> state, and the state is
// the operand's shape.
func inferWhile(a *shapeArgs) (Shape, error) {
	state := a.operands[0]
	if err := checkSignature("condition", a.called[0], []Shape{state}, Scalar(Pred)); err != nil {
		return Shape{}, err
	}
	if err := checkSignature("body", a.called[1], []Shape{state}, state); err != nil {
		return Shape{}, err
	}
	return state.Clone(), nil
}

// inferConditional: the first operand is a pred[] (two branches: true, then false)
// or an s32[] branch index (one or more branches; out-of-range runs the last); each
// further operand is the argument of one branch, and all branches return one shape.
func inferConditional(a *shapeArgs) (Shape, error) {
	if len(a.operands) == 0 {
		return Shape{}, fmt.Errorf("needs a branch selector")
	}
	sel, args, branches := a.operands[0], a.operands[1:], a.called
	switch {
	case sel.Equal(Scalar(Pred)):
		if len(branches) != 2 {
			return Shape{}, fmt.Errorf("a pred selector needs 2 branches, got %d", len(branches))
		}
	case !sel.Equal(Scalar(S32)):
		return Shape{}, fmt.Errorf("branch selector %v must be pred[] or s32[]", sel)
	}
	if len(args) != len(branches) {
		return Shape{}, fmt.Errorf("%d branches need %d branch operands, got %d", len(branches), len(branches), len(args))
	}
	_, result, err := signature("branch 0", branches[0])
	if err != nil {
		return Shape{}, err
	}
	for i, c := range branches {
		role := fmt.Sprintf("branch %d", i)
		if err := checkSignature(role, c, []Shape{args[i]}, result); err != nil {
			return Shape{}, err
		}
	}
	return result.Clone(), nil
}

// inferCall: the operands are the computation's arguments.
func inferCall(a *shapeArgs) (Shape, error) {
	_, result, err := signature("to_apply", a.called[0])
	if err != nil {
		return Shape{}, err
	}
	if err := checkSignature("to_apply", a.called[0], a.operands, result); err != nil {
		return Shape{}, err
	}
	return result.Clone(), nil
}

// inferFusion: like call, the operands are the fused computation's arguments, one per
// parameter with its shape, and the result is the computation's root shape; the kind
// must be one of the four fusion kinds.
func inferFusion(a *shapeArgs) (Shape, error) {
	if !a.attrs.FusionKind.IsValid() {
		return Shape{}, fmt.Errorf("unknown fusion kind %v", a.attrs.FusionKind)
	}
	c := a.called[0]
	params, result, err := signature("calls", c)
	if err != nil {
		return Shape{}, err
	}
	if len(params) != len(a.operands) {
		return Shape{}, fmt.Errorf("fused computation %q takes %d parameters, got %d operands",
			c.Name, len(params), len(a.operands))
	}
	for i, p := range params {
		if !a.operands[i].Equal(p) {
			return Shape{}, fmt.Errorf("operand %d has shape %v, but parameter %d (%s) of fused computation %q is %v",
				i, a.operands[i], i, c.Params[i].Name, c.Name, p)
		}
	}
	return result.Clone(), nil
}
