package hlo

import (
	"fmt"
	"slices"
)

// after-all(t0, …, tn) is a token ordered after its operand tokens (XLA's
// AfterAll; after-all() makes a fresh one). Tokens are token[] values of no bytes:
// they order side effects, and vkxla's one device runs a program's side effects
// in order anyway, so every token is the same empty value. AfterAllExpander
// replaces after-all by a token constant; the plan gives tokens no bytes.

func init() {
	shapeRules[OpAfterAll] = func(a *shapeArgs) (Shape, error) {
		for i, s := range a.operands {
			if !s.Equal(Scalar(Token)) {
				return Shape{}, fmt.Errorf("operand %d is %v, not token[]", i, s)
			}
		}
		return Scalar(Token), nil
	}
}

// AfterAll adds after-all(tokens…).
func (b *Builder) AfterAll(tokens ...*Instruction) *Instruction {
	return b.emit(opSpec{op: OpAfterAll, operands: ins(tokens...)})
}

// takesTokens lists the ops a token may flow into: those that move values as
// they are (parameters aside, which have no operands).
var takesTokens = []Opcode{OpTuple, OpGetTupleElement, OpWhile, OpConditional, OpCall, OpAfterAll,
	OpOptBarrier, OpCustomCall}

// checkTokenOperands refuses a token operand (or a tuple holding one) to every op
// but those of takesTokens: a token has no elements to compute with.
func checkTokenOperands(a *shapeArgs) error {
	if slices.Contains(takesTokens, a.op) {
		return nil
	}
	for i, s := range a.operands {
		if holdsToken(s) {
			return fmt.Errorf("operand %d %v is or holds a token, which %v cannot take", i, s, a.op)
		}
	}
	return nil
}

func holdsToken(s Shape) bool {
	if s.IsTuple() {
		return slices.ContainsFunc(s.Elems, holdsToken)
	}
	return s.DType == Token
}

func decomposeAfterAll(in *Instruction) (*Computation, error) {
	b, _ := operandParams(in)
	return b.BuildComputation(b.Constant(NewLiteral(Scalar(Token))))
}
