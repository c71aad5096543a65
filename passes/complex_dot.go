package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandComplexDots rewrites each dot of complex operands (c64, c128) as four real
// dots of their parts, with the same dimension numbers:
//
//	re = dot(ar, br) − dot(ai, bi),  im = dot(ar, bi) + dot(ai, br),
//
// joined by complex. Code generation has real dots only; the textbook product
// per term is what XLA's complex dot computes (no 3-multiplication Gauss trick,
// which loses accuracy when the parts differ in scale).
func ExpandComplexDots(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isComplexDot, complexDotParts)
}

func isComplexDot(in *hlo.Instruction) bool {
	return in.Op == hlo.OpDot && in.Shape.IsArray() && in.Shape.DType.IsComplex()
}

// complexDotParts builds the four-dot computation of a complex dot.
func complexDotParts(in *hlo.Instruction) (*hlo.Computation, error) {
	b := hlo.NewBuilder(in.Name + ".parts")
	a := b.Parameter(in.Operands[0].Shape, in.Name+".lhs")
	c := b.Parameter(in.Operands[1].Shape, in.Name+".rhs")
	dims := hlo.DotDims{}
	if in.Attrs.Dot != nil {
		dims = *in.Attrs.Dot
	}
	dot := func(x, y *hlo.Instruction) *hlo.Instruction { return b.DotGeneral(x, y, dims) }
	ar, ai, cr, ci := b.Real(a), b.Imag(a), b.Real(c), b.Imag(c)
	re := b.Sub(dot(ar, cr), dot(ai, ci))
	im := b.Add(dot(ar, ci), dot(ai, cr))
	return b.BuildComputation(b.Complex(re, im))
}
