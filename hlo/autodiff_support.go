package hlo

import "errors"

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
