package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Complex values (c64, c128) carry cotangents as floats do. The convention is
// JAX's: a rule is the transpose of the op's linear map, not its adjoint (no
// conjugation), so the rule of a holomorphic op is its real formula unchanged
// (ct·f'(z)), and the conjugation lives in the rules of real, imag and complex:
//
//	real(z)       ct ↦ complex(ct, 0)
//	imag(z)       ct ↦ complex(0, −ct)
//	complex(x, y) ct ↦ (real(ct), −imag(ct))
//	abs(z)        ct ↦ complex(ct, 0)·conj(sign(z))   (0 at z = 0)
//	convert       real → complex: real(ct); c64 ↔ c128: ct converted back
//	fft FFT/IFFT  ct ↦ the same transform of ct (the DFT matrix is symmetric)
//
// With them the gradient of a real function of complex parameters is JAX's,
// ∂f/∂x − i·∂f/∂y, and through complex intermediates a real function of real
// parameters gets its true gradient. An op not listed here or in holomorphic
// that meets a complex value on the differentiated path is an error wrapping
// hlo.ErrUnsupported, never a silently wrong or zero gradient.

// differentiable reports the element types that carry cotangents.
func differentiable(dt hlo.DType) bool { return dt.IsFloat() || dt.IsComplex() }

// holomorphic are the ops whose real rules hold unchanged for complex operands.
var holomorphic = map[hlo.Opcode]bool{
	hlo.OpNegate: true, hlo.OpExp: true, hlo.OpExpm1: true, hlo.OpLog: true, hlo.OpLog1p: true,
	hlo.OpSqrt: true, hlo.OpRsqrt: true, hlo.OpTanh: true, hlo.OpSin: true, hlo.OpCos: true, hlo.OpTan: true,
	hlo.OpAdd: true, hlo.OpSubtract: true, hlo.OpMultiply: true, hlo.OpDivide: true,
	// Linear data movement, whatever the element type.
	hlo.OpReshape: true, hlo.OpTranspose: true, hlo.OpCopy: true,
	// complex and fft rows serve real and complex alike (complexRows' ops).
	hlo.OpComplex: true, hlo.OpFft: true,
}

// complexRows are the rules of ops on complex operands that differ from their
// real rows.
var complexRows = map[hlo.Opcode]row{
	hlo.OpReal: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
		return e.b.Complex(ct, e.like(ct, 0))
	}),
	hlo.OpImag: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
		return e.b.Complex(e.like(ct, 0), e.b.Negate(ct))
	}),
	hlo.OpAbs: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
		return e.b.Mul(e.b.Complex(ct, e.like(ct, 0)), conjugate(e, e.b.Sign(x)))
	}),
	hlo.OpConvert: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
		if !x.Shape.DType.IsComplex() {
			return e.b.Convert(e.b.Unary(hlo.OpReal, ct), x.Shape.DType)
		}
		return e.b.Convert(ct, x.Shape.DType)
	}),
}

// complexRow is the rule for the VJP of complex(x, y).
var complexRow = arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	return []*hlo.Instruction{e.b.Unary(hlo.OpReal, ct), e.b.Negate(e.b.Unary(hlo.OpImag, ct))}, nil
})

// fftRow transposes FFT and IFFT; RFFT and IRFFT, whose transposes fold the
// conjugate half of the spectrum, are not implemented.
var fftRow = arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	a := n.orig.Attrs
	if a.FftType != hlo.FFT && a.FftType != hlo.IFFT {
		return nil, fmt.Errorf("the VJP of %v is not implemented: %w", a.FftType, hlo.ErrUnsupported)
	}
	return []*hlo.Instruction{e.b.Fft(ct, a.FftType, a.FftLength...)}, nil
})

func conjugate(e *engine, z *hlo.Instruction) *hlo.Instruction {
	return e.b.Complex(e.b.Unary(hlo.OpReal, z), e.b.Negate(e.b.Unary(hlo.OpImag, z)))
}

// touchesComplex reports whether n's result or an operand holds complex values.
func touchesComplex(n *node) bool {
	for _, x := range append([]*hlo.Instruction{n.out}, n.args...) {
		if x != nil && hasComplexLeaf(x.Shape) {
			return true
		}
	}
	return false
}

func hasComplexLeaf(s hlo.Shape) bool {
	for _, leaf := range s.Leaves() {
		if leaf.DType.IsComplex() {
			return true
		}
	}
	return false
}

// rowFor is the rule of n: its op's row, or on complex values the complex row or
// an error where there is none.
func rowFor(n *node) (row, error) {
	op := n.orig.Op
	if n.vjp != nil || !touchesComplex(n) {
		return table[op], nil
	}
	if r, ok := complexRows[op]; ok {
		return r, nil
	}
	// A zero row is right for complex only where the result carries no gradient
	// (compare); sign is piecewise constant on the reals but not on the plane.
	r := table[op]
	if holomorphic[op] || r.zero == zeroNonFloat || r.leaf {
		return r, nil
	}
	return row{}, fmt.Errorf("autodiff: %s (%v) on complex values: its VJP is not implemented for complex numbers: %w",
		n.orig.Name, op, hlo.ErrUnsupported)
}
