package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandComplexDots rewrites each dot or convolution of complex operands (c64,
// c128) as four real ones of their parts, with the same attributes (dimension
// numbers; window and group counts):
//
//	re = op(ar, br) − op(ai, bi),  im = op(ar, bi) + op(ai, br),
//
// joined by complex. Code generation has real contractions only; the textbook
// product per term is what XLA's complex dot computes (no 3-multiplication Gauss
// trick, which loses accuracy when the parts differ in scale).
func ExpandComplexDots(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isComplexContraction, complexContractionParts)
}

func isComplexContraction(in *hlo.Instruction) bool {
	return (in.Op == hlo.OpDot || in.Op == hlo.OpConvolution) && in.Shape.IsArray() && in.Shape.DType.IsComplex()
}

// complexContractionParts builds the four-contraction computation of in.
func complexContractionParts(in *hlo.Instruction) (*hlo.Computation, error) {
	b := hlo.NewBuilder(in.Name + ".parts")
	a := b.Parameter(in.Operands[0].Shape, in.Name+".lhs")
	c := b.Parameter(in.Operands[1].Shape, in.Name+".rhs")
	op := realContraction(b, in)
	ar, ai, cr, ci := b.Real(a), b.Imag(a), b.Real(c), b.Imag(c)
	re := b.Sub(op(ar, cr), op(ai, ci))
	im := b.Add(op(ar, ci), op(ai, cr))
	return b.BuildComputation(b.Complex(re, im))
}

// realContraction is in's contraction with its attributes, on real operands.
func realContraction(b *hlo.Builder, in *hlo.Instruction) func(x, y *hlo.Instruction) *hlo.Instruction {
	if in.Op == hlo.OpConvolution {
		at := in.Attrs
		return func(x, y *hlo.Instruction) *hlo.Instruction {
			return b.Conv(x, y, at.Window, *at.Conv, at.FeatureGroupCount, at.BatchGroupCount)
		}
	}
	dims := hlo.DotDims{}
	if in.Attrs.Dot != nil {
		dims = *in.Attrs.Dot
	}
	return func(x, y *hlo.Instruction) *hlo.Instruction { return b.DotGeneral(x, y, dims) }
}
