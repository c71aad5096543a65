package hlo

// opt-barrier (XLA's optimization barrier): the identity on its operand, most often
// a tuple, that no pass may look through. It keeps a value from being recomputed or
// merged across the point where the program put it (remat in JAX's checkpointing,
// scheduling hints); vkxla's expander replaces it by its operand after every other
// pass (OptBarrierExpander), so code generation never sees it.

func init() {
	shapeRules[OpOptBarrier] = func(a *shapeArgs) (Shape, error) {
		return a.operands[0].Clone(), nil
	}
}

// OptBarrier adds opt-barrier(x): x's value, of x's shape, that passes treat as
// opaque.
func (b *Builder) OptBarrier(x *Instruction) *Instruction {
	return b.emit(opSpec{op: OpOptBarrier, operands: ins(x)})
}
