package codegen

import "github.com/vkxla/vkxla/spirv"

// lowerDynamicUpdateSlice runs a dynamic-update-slice whose operand may be written
// in place (a parameter nothing else reads) as two dispatches: the operand copied
// to the output, then the update written into its window. When the runtime lets
// the output share the operand's buffer it skips the copy, so a step that updates
// a KV cache or a loop-carried buffer writes only its update. The window's start is
// clamped so that the update fits, as the elemental form (and XLA) does.
func (l *lowering) lowerDynamicUpdateSlice() error {
	root := l.c.Root
	x, u := root.Operands[0], root.Operands[1]
	l.p.InPlace = operandInPlace(l.c, 1)
	if err := l.copyOperands("dus_copy", root, 1); err != nil {
		return err
	}
	if u.Shape.NumElements() == 0 {
		return nil
	}
	k := l.newKernel("dus_window", defaultLocal)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	f := k.f
	groups := k.gridStride(u.Shape.NumElements(), func(i spirv.ID) {
		g.scoped(func() {
			uidx := k.delinearize(i, u.Shape.Dims)
			starts := g.startIndices(root.Operands[2:], x.Shape.Dims, u.Shape.Dims)
			oidx := make([]spirv.ID, len(uidx))
			for d := range uidx {
				oidx[d] = f.IAdd(starts[d], uidx[d])
			}
			k.store(out, k.linearize(oidx, x.Shape.Dims), g.emit(u, uidx), root.Shape.DType)
		})
	})
	return l.add(k, groups)
}
