package hlo

import (
	"fmt"
	"slices"
)

// triangular-solve(a, b), left_side=, lower=, unit_diagonal=, transpose_a= solves
// op(a)·x = b (left_side) or x·op(a) = b for x, per batch index, where a is
// [..., m, m], b is [..., m, n] (left) or [..., n, m] (right), op(a) is a, aᵀ
// (TRANSPOSE) or its adjoint (ADJOINT, aᵀ for real types). Only the triangle lower
// names is read; with unit_diagonal the diagonal is taken as ones and not read.
//
// cholesky(a), lower= is the factor l with a = l·lᵀ (lower) or a = uᵀ·u (upper),
// per batch index, reading only that triangle of a; the other triangle of the
// result is zero. A matrix that is not positive definite gives a NaN on the
// factor's diagonal; the whole matrix is then NaN, as XLA returns.
//
// Their expanders loop over rows (columns) in a while whose body reads one row
// with dynamic-slice, forms the dot with what is solved so far and writes the new
// row with dynamic-update-slice (XLA's TriangularSolveExpander and
// CholeskyExpander, unblocked).

// TransposeKind is triangular-solve's transpose_a.
type TransposeKind uint8

// The transpose kinds; ADJOINT is TRANSPOSE for vkxla's real types.
const (
	NoTranspose TransposeKind = iota
	TransposeA
	Adjoint
)

var transposeKindNames = [...]string{"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}

func (t TransposeKind) String() string {
	if int(t) < len(transposeKindNames) {
		return transposeKindNames[t]
	}
	return fmt.Sprintf("transpose(%d)", uint8(t))
}

// ParseTransposeKind maps NO_TRANSPOSE, TRANSPOSE and ADJOINT to a kind.
func ParseTransposeKind(s string) (TransposeKind, error) {
	if i := slices.Index(transposeKindNames[:], s); i >= 0 {
		return TransposeKind(i), nil
	}
	return 0, fmt.Errorf("unknown transpose_a %q (want NO_TRANSPOSE, TRANSPOSE or ADJOINT)", s)
}

func init() {
	shapeRules[OpTriangularSolve] = inferTriangularSolve
	shapeRules[OpCholesky] = inferCholesky
	attrCodecs["left_side"] = boolCodec(func(a *Attributes) *bool { return &a.LeftSide })
	attrCodecs["lower"] = boolCodec(func(a *Attributes) *bool { return &a.Lower })
	attrCodecs["unit_diagonal"] = boolCodec(func(a *Attributes) *bool { return &a.UnitDiagonal })
	attrCodecs["transpose_a"] = attrCodec{
		print: func(in *Instruction) (string, bool) { return in.Attrs.TransposeA.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.TransposeA, err = ParseTransposeKind(s); return })
		},
	}
	opAttrs[OpTriangularSolve] = []attrUse{opt("left_side"), opt("lower"), opt("unit_diagonal"), opt("transpose_a")}
	opAttrs[OpCholesky] = []attrUse{opt("lower")}
}

// squareBatch checks that a is a float array of rank >= 2 whose last two
// dimensions are equal, and returns that size.
func squareBatch(what string, a Shape) (int64, error) {
	r := a.Rank()
	if !a.DType.IsFloat() || r < 2 || a.Dims[r-1] != a.Dims[r-2] {
		return 0, fmt.Errorf("%s %v is not a floating-point array of square matrices [..., m, m]", what, a)
	}
	return a.Dims[r-1], nil
}

func inferTriangularSolve(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, y := a.operands[0], a.operands[1]
	m, err := squareBatch("a", x)
	if err != nil {
		return Shape{}, err
	}
	r := x.Rank()
	if y.DType != x.DType || y.Rank() != r || !slices.Equal(y.Dims[:r-2], x.Dims[:r-2]) {
		return Shape{}, fmt.Errorf("b %v must have a's type and batch dimensions %v", y, x)
	}
	side, d := "right", y.Dims[r-1]
	if a.attrs.LeftSide {
		side, d = "left", y.Dims[r-2]
	}
	if d != m {
		return Shape{}, fmt.Errorf("b %v does not match a %v on the %s side", y, x, side)
	}
	if a.attrs.TransposeA > Adjoint {
		return Shape{}, fmt.Errorf("transpose_a=%v is not valid", a.attrs.TransposeA)
	}
	return y.Clone(), nil
}

func inferCholesky(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	if _, err := squareBatch("operand", a.operands[0]); err != nil {
		return Shape{}, err
	}
	return a.operands[0].Clone(), nil
}

// TriangularSolve adds triangular-solve(a, b) with the given options.
func (b *Builder) TriangularSolve(a, rhs *Instruction, leftSide, lower, unitDiagonal bool, t TransposeKind) *Instruction {
	return b.emit(opSpec{op: OpTriangularSolve, operands: ins(a, rhs),
		attrs: Attributes{LeftSide: leftSide, Lower: lower, UnitDiagonal: unitDiagonal, TransposeA: t}})
}

// Cholesky adds cholesky(a), lower=lower.
func (b *Builder) Cholesky(a *Instruction, lower bool) *Instruction {
	return b.emit(opSpec{op: OpCholesky, operands: ins(a), attrs: Attributes{Lower: lower}})
}
