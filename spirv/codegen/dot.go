package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// emitDot is the per-output-element dot general: the output index is the batch
// dims, then lhs free dims, then rhs free dims; the contracting dims are summed in
// row-major order of the lhs contracting list. f16 and bf16 accumulate in f32 and
// round once at the end (as XLA and its evaluator do); integers wrap.
func emitDot(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	l, r := in.Operands[0], in.Operands[1]
	d := in.Attrs.Dot
	if d == nil {
		d = &hlo.DotDims{}
	}
	nb := len(d.LhsBatch)
	lFree := hlo.Complement(l.Shape.Rank(), d.LhsBatch, d.LhsContracting)
	rFree := hlo.Complement(r.Shape.Rank(), d.RhsBatch, d.RhsContracting)
	var sizes []int64
	for _, c := range d.LhsContracting {
		sizes = append(sizes, l.Shape.Dims[c])
	}
	li := make([]spirv.ID, l.Shape.Rank())
	ri := make([]spirv.ID, r.Shape.Rank())
	for i := range nb {
		li[d.LhsBatch[i]] = idx[i]
		ri[d.RhsBatch[i]] = idx[i]
	}
	for i, fd := range lFree {
		li[fd] = idx[nb+i]
	}
	for i, fd := range rFree {
		ri[fd] = idx[nb+len(lFree)+i]
	}
	dt := in.Shape.DType
	acc := k.variable(k.regType(dt), k.zero(dt), "dot_acc")
	g.loop(product(sizes), func(j spirv.ID) {
		c := k.delinearize(j, sizes)
		for i := range c {
			li[d.LhsContracting[i]] = c[i]
			ri[d.RhsContracting[i]] = c[i]
		}
		a, b := g.emit(l, slices.Clone(li)), g.emit(r, slices.Clone(ri))
		f.Store(acc, k.mulAdd(f.Load(acc), a, b))
	})
	return k.round(k.sumFromZero(f.Load(acc), dt), dt)
}

// sumFromZero is a float sum that started at +0 (dot, convolution) with the sign
// of a zero result made +: under round-to-nearest such a sum is never -0 (+0 + -0
// = +0, and an exact cancellation gives +0), cpuref's included, but a driver may
// fold the first +0 + x into x and keep the -0 of x (lavapipe does, even under
// SignedZeroInfNanPreserve). The test is on the encoding, which no float rule
// folds. Integer sums are returned unchanged.
func (k *kernel) sumFromZero(v spirv.ID, dt hlo.DType) spirv.ID {
	if !dt.IsFloat() {
		return v
	}
	f := k.f
	return f.Select(f.Equal(k.absBits(v), k.absBits(k.fc(v, 0))), k.fc(v, 0), v)
}

// mulAdd is acc + a·b on register values (integer arithmetic wraps).
func (k *kernel) mulAdd(acc, a, b spirv.ID) spirv.ID {
	return k.f.Add(acc, k.f.Mul(a, b))
}
