package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Complex values (c64, c128) carry cotangents as floats do. The convention is
// JAX's: a cotangent c of a complex value w pairs with a change dw as
// dL = Re Σ c·dw, so that c = ∂L/∂u − i·∂L/∂v for w = u + iv. A rule is then the
// transpose of the op's linear map, not its adjoint (no conjugation), so the rule
// of a holomorphic op is its real formula unchanged (ct·f'(z)), and the
// conjugation lives in the rules of the ops that are not C-linear:
//
//	real(z)       ct ↦ complex(ct, 0)
//	imag(z)       ct ↦ complex(0, −ct)
//	complex(x, y) ct ↦ (real(ct), −imag(ct))
//	abs(z)        ct ↦ complex(ct, 0)·conj(sign(z))   (0 at z = 0)
//	sign(z)       ct ↦ i·Im(ct·s)·conj(s)/|z|, s = sign(z)   (0 at z = 0)
//	gather        the real rule on real(ct) and imag(ct), joined by complex
//	reduce-window add only: the real rule (max/min pooling has no complex form)
//	select-and-scatter  refused (max pooling's gradient; max has no complex form)
//	convert       real → complex: real(ct); c64 ↔ c128: ct converted back
//	fft           rules_fft.go (RFFT and IRFFT fold the conjugate half)
//
// A non-holomorphic w = f(z) has the rule ct ↦ ct·∂w/∂z + conj(ct·∂w/∂z̄) (from
// dw = ∂w/∂z·dz + ∂w/∂z̄·dz̄); the rows above are that formula worked out.
//
// With them the gradient of a real function of complex parameters is JAX's,
// ∂f/∂x − i·∂f/∂y, and through complex intermediates a real function of real
// parameters gets its true gradient. An op not listed here or in holomorphic
// that meets a complex value on the differentiated path is an error wrapping
// hlo.ErrUnsupported, never a silently wrong or zero gradient.

// differentiable reports the element types that carry cotangents.
func differentiable(dt hlo.DType) bool { return dt.IsFloat() || dt.IsComplex() }

// holomorphic are the ops whose real rules hold unchanged for complex operands:
// holomorphic functions (power in both operands: y·x^(y−1) and log(x)·x^y, with
// JAX's guards at y = 0 and x = 0), and C-linear ones whose rules only move,
// sum, select or transform the cotangent.
var holomorphic = map[hlo.Opcode]bool{
	hlo.OpNegate: true, hlo.OpExp: true, hlo.OpExpm1: true, hlo.OpLog: true, hlo.OpLog1p: true,
	hlo.OpSqrt: true, hlo.OpRsqrt: true, hlo.OpTanh: true, hlo.OpSin: true, hlo.OpCos: true, hlo.OpTan: true,
	hlo.OpAdd: true, hlo.OpSubtract: true, hlo.OpMultiply: true, hlo.OpDivide: true, hlo.OpPower: true,
	// Linear data movement, whatever the element type.
	hlo.OpReshape: true, hlo.OpTranspose: true, hlo.OpCopy: true, hlo.OpBroadcast: true, hlo.OpSlice: true,
	hlo.OpConcatenate: true, hlo.OpPad: true, hlo.OpReverse: true, hlo.OpDynamicSlice: true,
	hlo.OpDynamicUpdateSlice: true, hlo.OpSelect: true, hlo.OpTuple: true, hlo.OpGetTupleElement: true,
	// Its branches are differentiated op by op, by these same rules.
	hlo.OpConditional: true,
	// A complex reducer is add or multiply (compare orders no complex values):
	// both rules are holomorphic.
	hlo.OpReduce: true,
	// Scatter (add or replace: the rule gathers the cotangent, and masks it by
	// which update won) and sort (the cotangent permuted back by the permutation's
	// scatter) move or sum the cotangent, as on the reals; their other combiners
	// stay errors in the real rules.
	hlo.OpScatter: true, hlo.OpSort: true,
	// Dot and convolution are C-bilinear: each operand's rule (a contraction of
	// ct with the other operand, no conjugation) is the transpose of its linear
	// map, as on the reals.
	hlo.OpDot: true, hlo.OpConvolution: true,
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
	hlo.OpSign:             unary(vjpComplexSign),
	hlo.OpGather:           arrayVJP(vjpComplexGather),
	hlo.OpReduceWindow:     {vjp: vjpComplexReduceWindow},
	hlo.OpSelectAndScatter: {vjp: vjpComplexSelectAndScatter},
	hlo.OpConvert: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
		if !x.Shape.DType.IsComplex() {
			return e.b.Convert(e.b.Unary(hlo.OpReal, ct), x.Shape.DType)
		}
		return e.b.Convert(ct, x.Shape.DType)
	}),
}

// vjpComplexSign: s = z/|z| = z^½·z̄^−½ has ∂s/∂z = 1/(2|z|) and
// ∂s/∂z̄ = −s²/(2|z|), so ct ↦ (ct − conj(ct·s²))/(2|z|) = i·Im(ct·s)·conj(s)/|z|:
// only the part of a change across the ray turns s. That is
// complex(r·imag(s), r·real(s)) with r = imag(ct·s)/|z|; at z = 0 (s = 0) the
// numerator is 0 and |z| is taken as 1, so the gradient is 0, as abs's. (JAX
// defines sign's derivative as zero everywhere, complex included; on the plane
// that is wrong, so this row gives the true one.)
func vjpComplexSign(e *engine, z, s, ct *hlo.Instruction) *hlo.Instruction {
	abs := e.b.Abs(z)
	safeAbs := e.b.Select(e.b.Compare(abs, e.like(abs, 0), hlo.CmpEQ), e.like(abs, 1), abs)
	r := e.b.Div(e.b.Unary(hlo.OpImag, e.b.Mul(ct, s)), safeAbs)
	return e.b.Complex(e.b.Mul(r, e.b.Unary(hlo.OpImag, s)), e.b.Mul(r, e.b.Unary(hlo.OpReal, s)))
}

// vjpComplexGather: gather moves both parts alike, so its transpose is the real
// rule's scatter-add run on each part's plane, real(ct) and imag(ct), joined
// again; the scatters then add f32 or f64, which cpuref runs for c128 too.
func vjpComplexGather(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	re, err := vjpGather(e, n, e.b.Unary(hlo.OpReal, ct))
	if err != nil {
		return nil, err
	}
	im, err := vjpGather(e, n, e.b.Unary(hlo.OpImag, ct))
	if err != nil {
		return nil, err
	}
	return []*hlo.Instruction{e.b.Complex(re[0], im[0]), nil}, nil
}

// vjpComplexReduceWindow: a windowed sum is C-linear, so the real rule (the
// cotangent padded and summed over windows) holds; max and min pooling are not
// defined on complex values, which have no order.
func vjpComplexReduceWindow(e *engine, n *node, ct *cot) ([]*cot, error) {
	if op, ok := reducerOp(n.orig.Called[0]); !ok || op != hlo.OpAdd {
		return nil, fmt.Errorf("autodiff: %s: reduce-window on complex values has a VJP only with an add reducer, not %q: %w",
			n.orig.Name, n.orig.Called[0].Name, hlo.ErrUnsupported)
	}
	return vjpReduceWindow(e, n, ct)
}

// vjpComplexSelectAndScatter refuses: select-and-scatter is max pooling's
// gradient, and max is not defined on complex values (JAX defines no such rule).
func vjpComplexSelectAndScatter(_ *engine, n *node, _ *cot) ([]*cot, error) {
	return nil, fmt.Errorf("autodiff: %s: select-and-scatter on complex values has no VJP (max pooling is not defined on complex numbers): %w",
		n.orig.Name, hlo.ErrUnsupported)
}

// complexRow is the rule for the VJP of complex(x, y).
var complexRow = arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	return []*hlo.Instruction{e.b.Unary(hlo.OpReal, ct), e.b.Negate(e.b.Unary(hlo.OpImag, ct))}, nil
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
	// (compare): sign, piecewise constant on the reals, has a complex row.
	r := table[op]
	if holomorphic[op] || r.zero == zeroNonFloat || r.leaf {
		return r, nil
	}
	return row{}, fmt.Errorf("autodiff: %s (%v) on complex values: its VJP is not implemented for complex numbers: %w",
		n.orig.Name, op, hlo.ErrUnsupported)
}
