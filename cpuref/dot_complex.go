package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Complex dot and convolution (c64, c128), as one contraction (contract.go). Every term is the textbook product in float64
// (complexMul), the sum runs in complex128 in the contraction's term order, and
// each part of the result is rounded once to the element type: the c64 dot is
// thus the exact dot of its operands up to float64 rounding, not the f32
// product-per-term that c64 multiply is. A sum over many f32 terms would carry
// one rounding per term in f32; the reference holds the better value, and the GPU
// (four real dots, passes/complex_dot.go) is compared with it within the f32 dot
// bound. A part whose f32 products overflow but cancel is finite here.

// sameComplexType refuses a complex contraction whose operands and result are not
// all one complex type.
func sameComplexType(in *hlo.Instruction, lhs, rhs *hlo.Literal) error {
	if lhs.DType() != in.Shape.DType || rhs.DType() != in.Shape.DType {
		return fmt.Errorf("complex %v of %v and %v into %v: operands and result must be one complex type: %w",
			in.Op, lhs.Shape(), rhs.Shape(), in.Shape, ErrInvalidInput)
	}
	return nil
}

// evalComplexDot evaluates the contraction c of complex lhs and rhs into out.
func evalComplexDot(c *contraction, lhs, rhs, out *hlo.Literal) {
	l, r := decodeComplex(lhs), decodeComplex(rhs)
	rows := c.groups * c.rows
	parallelFor(rows, c.depth*c.cols, func(lo, hi int) {
		var ls []int64
		var ks []int32
		for gr := lo; gr < hi; gr++ {
			g, row := gr/c.rows, gr%c.rows
			ls, ks = c.terms(g, row, ls[:0], ks[:0])
			for n := range c.cols {
				var acc complex128
				for t, li := range ls {
					acc += complexMul(l[li], r[c.rhsIndex(g, int(ks[t]), n)])
				}
				out.SetComplex128(c.outIndex(g, row, n), acc)
			}
		}
	})
}

// decodeComplex reads every element of a complex literal as complex128 (exact).
func decodeComplex(l *hlo.Literal) []complex128 {
	v := make([]complex128, l.NumElements())
	for i := range v {
		v[i] = l.Complex128(i)
	}
	return v
}
