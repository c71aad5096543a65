package hlo

import (
	"errors"
	"fmt"
)

// MaxTupleDepth bounds how deeply tuple shapes nest: an array has depth 0, a tuple
// one more than its deepest element. Protocol buffers, the other way XLA shapes
// travel, stop at the same depth (their default recursion limit). Every
// instruction's text repeats its operands' and its own shape, so a chain of tuples
// nested d deep prints as O(d²) text (and holds as many Shape values): the bound keeps
// that small and every recursion over a shape shallow, so no input can exhaust the
// goroutine stack.
const MaxTupleDepth = 100

// MaxShapeNodes bounds the shapes one shape is made of (itself, and each element of
// each tuple, counted where it occurs): a tuple of a tuple doubled n times has 2ⁿ
// leaves, and a shape is copied and walked in full. 65536 leaves room for the state
// of a while loop over tens of thousands of arrays.
const MaxShapeNodes = 1 << 16

// ErrTupleNesting is wrapped by the errors of shapes over MaxTupleDepth or
// MaxShapeNodes; the builder, the verifier and the parser reject them.
var ErrTupleNesting = errors.New("tuple shape nested too deeply or too large")

// checkNesting applies MaxTupleDepth and MaxShapeNodes to s, walking at most
// MaxShapeNodes shapes at most MaxTupleDepth deep.
func checkNesting(s Shape) error {
	nodes := 0
	var walk func(s Shape, depth int) error
	walk = func(s Shape, depth int) error {
		if nodes++; nodes > MaxShapeNodes {
			return fmt.Errorf("%w: more than %d shapes in one tuple shape", ErrTupleNesting, MaxShapeNodes)
		}
		if !s.IsTuple() {
			return nil
		}
		if depth == MaxTupleDepth {
			return fmt.Errorf("%w: tuples nested more than %d deep", ErrTupleNesting, MaxTupleDepth)
		}
		for _, e := range s.Elems {
			if err := walk(e, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(s, 0)
}

// checkArgsNesting applies checkNesting to a shape rule's operands and declared
// result, before the rule walks or copies them.
func checkArgsNesting(a *shapeArgs) error {
	for i, s := range a.operands {
		if err := checkNesting(s); err != nil {
			return fmt.Errorf("operand %d: %w", i, err)
		}
	}
	if a.declared != nil {
		if err := checkNesting(*a.declared); err != nil {
			return fmt.Errorf("declared shape: %w", err)
		}
	}
	return nil
}
