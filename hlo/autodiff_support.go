package hlo

import (
	"errors"
	"fmt"
)

// Reemit adds an instruction like in (its opcode, a copy of its attributes and its
// called computations) over new operands from this builder, inferring the result
// shape; for the opcodes whose result is declared (ResultIsDeclared) in.Shape is
// the declaration. It lets a transformation that rebuilds a computation (the
// autodiff package replays the forward pass this way) copy any instruction without
// a case per opcode. Parameters are refused: add them with Parameter, which numbers
// them.
func (b *Builder) Reemit(in *Instruction, operands []*Instruction) *Instruction {
	if in == nil {
		return b.fail(OpInvalid, operands, errors.New("Reemit of a nil instruction"))
	}
	if in.Op == OpParameter {
		return b.fail(in.Op, operands, errors.New("Reemit cannot add a parameter; use Parameter"))
	}
	spec := opSpec{op: in.Op, operands: append([]*Instruction(nil), operands...),
		attrs: cloneAttributes(in.Attrs), called: append([]*Computation(nil), in.Called...)}
	if ResultIsDeclared(in.Op) || in.Op == OpDot || in.Op == OpConvolution { // a widened contraction declares its type
		declared := in.Shape.Clone()
		spec.result = func([]Shape) Shape { return declared }
	}
	return b.emit(spec)
}

// Inline adds c's instructions to this builder over args (standing for c's
// parameters, in order) with Reemit and returns the copy of c's root: a call
// spliced in place, for transformations that build one flat computation (a
// training step around its gradient, a checkpointed region's expansion).
func (b *Builder) Inline(c *Computation, args []*Instruction) *Instruction {
	if c == nil || len(args) != len(c.Params) {
		n := -1
		if c != nil {
			n = len(c.Params)
		}
		return b.fail(OpCall, args, fmt.Errorf("Inline of a computation with %d parameters over %d arguments", n, len(args)))
	}
	root, _ := b.inlineWith(c, args, func(in *Instruction, ops []*Instruction) (*Instruction, error) {
		return b.Reemit(in, ops), nil
	})
	return root
}

// inlineWith walks c's instructions in order over args (standing for c's
// parameters), each copied by emit from its operands' copies, and returns the copy
// of c's root, or emit's first error.
func (b *Builder) inlineWith(c *Computation, args []*Instruction, emit func(in *Instruction, ops []*Instruction) (*Instruction, error)) (*Instruction, error) {
	vals := make(map[*Instruction]*Instruction, len(c.Instructions))
	for i, p := range c.Params {
		vals[p] = args[i]
	}
	for _, in := range c.Instructions {
		if in.Op == OpParameter {
			continue
		}
		ops := make([]*Instruction, len(in.Operands))
		for i, o := range in.Operands {
			ops[i] = vals[o]
		}
		v, err := emit(in, ops)
		if err != nil {
			return nil, err
		}
		vals[in] = v
	}
	return vals[c.Root], nil
}
