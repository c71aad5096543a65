package hlo

import (
	"fmt"
	"math"
)

// The expansions of triangular-solve and cholesky: one canonical loop each, the
// other variants reduced to it by transposes and reversals.

func decomposeTriangularSolve(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	a, rhs := args[0], args[1]
	r := a.Shape.Rank()
	at := in.Attrs
	transposed, lower := at.TransposeA != NoTranspose, at.Lower
	if !at.LeftSide { // x·op(a) = b  ⇔  op(a)ᵀ·xᵀ = bᵀ
		transposed, rhs = !transposed, swapLast(b, rhs)
	}
	if transposed { // aᵀ's read triangle is the other one
		a, lower = swapLast(b, a), !lower
	}
	if !lower { // reversing rows and columns makes an upper triangle lower
		a, rhs = b.Reverse(a, int64(r-2), int64(r-1)), b.Reverse(rhs, int64(r-2))
	}
	x := forwardSubstitution(b, in.Name, a, rhs, at.UnitDiagonal)
	if !lower {
		x = b.Reverse(x, int64(r-2))
	}
	if !at.LeftSide {
		x = swapLast(b, x)
	}
	return buildNamed(b, in, x)
}

// forwardSubstitution solves a·x = rhs for lower-triangular a ([..., m, m]) and
// rhs [..., m, n], row by row: x_i = (rhs_i − Σ_{k<i} a_ik·x_k) / a_ii, the
// strictly lower part of a masked once, outside the loop, so that the other
// triangle is never read.
func forwardSubstitution(b *Builder, name string, a, rhs *Instruction, unit bool) *Instruction {
	r := a.Shape.Rank()
	m, n := a.Shape.Dims[r-1], rhs.Shape.Dims[r-1]
	batch := a.Shape.Dims[:r-2]
	strict := b.Select(b.Compare(matrixIota(b, a.Shape, r-2), matrixIota(b, a.Shape, r-1), CmpGT), a, zerosLike(b, a.Shape))
	state := []*Instruction{zerosLike(b, rhs.Shape), strict, a, rhs}
	out := countedLoop(b, name, m, state, func(lb *Builder, i *Instruction, s []*Instruction) []*Instruction {
		x, strict, a, rhs := s[0], s[1], s[2], s[3]
		row := lb.DynamicSlice(strict, rowStart(lb, r, i, nil), append(cloneInts(batch), 1, m))
		dims := DotDims{LhsBatch: Iota64(r - 2), RhsBatch: Iota64(r - 2),
			LhsContracting: []int64{int64(r - 1)}, RhsContracting: []int64{int64(r - 2)}}
		xi := lb.Sub(lb.DynamicSlice(rhs, rowStart(lb, r, i, nil), append(cloneInts(batch), 1, n)), lb.DotGeneral(row, x, dims))
		if !unit {
			d := lb.Reshape(lb.DynamicSlice(a, rowStart(lb, r, i, i), append(cloneInts(batch), 1, 1)), batch...)
			xi = lb.Div(xi, lb.Broadcast(d, xi.Shape.Dims, Iota64(r-2)))
		}
		return []*Instruction{lb.DynamicUpdateSlice(x, xi, rowStart(lb, r, i, nil)), strict, a, rhs}
	})
	return out[0]
}

func decomposeCholesky(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	a := args[0]
	if !in.Attrs.Lower { // a = uᵀ·u reads the upper triangle: that of aᵀ is lower
		a = swapLast(b, a)
	}
	l := choleskyLower(b, in.Name, a)
	if !in.Attrs.Lower {
		l = swapLast(b, l)
	}
	return buildNamed(b, in, l)
}

// choleskyLower factors a = l·lᵀ column by column: v = a_:j − l·l_jᵀ, l_jj = √v_j,
// l_ij = v_i / l_jj below the diagonal and 0 above (where a is not read). A NaN on
// the diagonal (a not positive definite) makes the whole matrix NaN.
func choleskyLower(b *Builder, name string, a *Instruction) *Instruction {
	s := a.Shape
	r := s.Rank()
	n, batch := s.Dims[r-1], s.Dims[:r-2]
	rows, cols := matrixIota(b, s, r-2), matrixIota(b, s, r-1)
	colShape := MakeShape(s.DType, append(cloneInts(batch), n, 1)...)
	out := countedLoop(b, name, n, []*Instruction{zerosLike(b, s), a}, func(lb *Builder, j *Instruction, st []*Instruction) []*Instruction {
		l, a := st[0], st[1]
		lj := lb.DynamicSlice(l, rowStart(lb, r, j, nil), append(cloneInts(batch), 1, n))
		dims := DotDims{LhsBatch: Iota64(r - 2), RhsBatch: Iota64(r - 2),
			LhsContracting: []int64{int64(r - 1)}, RhsContracting: []int64{int64(r - 1)}}
		zero := lb.ScalarConstant(S32, 0)
		starts := append(rowStart(lb, r, zero, nil)[:r-1], j)
		v := lb.Sub(lb.DynamicSlice(a, starts, colShape.Dims), lb.DotGeneral(l, lj, dims))
		d := lb.Sqrt(lb.Reshape(lb.DynamicSlice(v, rowStart(lb, r, j, zero), append(cloneInts(batch), 1, 1)), batch...))
		diag := lb.Broadcast(d, colShape.Dims, Iota64(r-2))
		i := matrixIota(lb, colShape, r-2)
		jb := lb.BroadcastScalar(j, colShape.Dims...)
		col := lb.Select(lb.Compare(i, jb, CmpGT), lb.Div(v, diag),
			lb.Select(lb.Compare(i, jb, CmpEQ), diag, zerosLike(lb, colShape)))
		return []*Instruction{lb.DynamicUpdateSlice(l, col, starts), a}
	})
	l := out[0]
	nanDiag := b.And(b.Compare(rows, cols, CmpEQ), b.Compare(l, l, CmpNE))
	bad := b.Reduce([]*Instruction{nanDiag}, []*Instruction{b.Constant(ScalarLiteral(false))},
		b.Reducer(OpOr, Pred), []int64{int64(r - 2), int64(r - 1)})
	nan := b.BroadcastScalar(b.ScalarConstant(s.DType, math.NaN()), s.Dims...)
	return b.Select(b.Broadcast(bad, s.Dims, Iota64(r-2)), nan, l)
}

// countedLoop runs step for i = 0, …, n-1 over the state (a while over the tuple
// (i, state…)), and returns the final state. step builds into the body's builder
// from the body's counter and state.
func countedLoop(b *Builder, name string, n int64, state []*Instruction,
	step func(lb *Builder, i *Instruction, s []*Instruction) []*Instruction) []*Instruction {
	shapes := []Shape{Scalar(S32)}
	for _, s := range state {
		shapes = append(shapes, s.Shape)
	}
	tuple := MakeTuple(shapes...)
	cb := NewBuilder(name + ".condition")
	ct := cb.Parameter(tuple, "state")
	cond := b.keep(cb.BuildComputation(cb.Compare(cb.GetTupleElement(ct, 0), cb.ScalarConstant(S32, float64(n)), CmpLT)))
	lb := NewBuilder(name + ".body")
	bt := lb.Parameter(tuple, "state")
	i := lb.GetTupleElement(bt, 0)
	cur := make([]*Instruction, len(state))
	for k := range state {
		cur[k] = lb.GetTupleElement(bt, int64(k+1))
	}
	next := append([]*Instruction{lb.Add(i, lb.ScalarConstant(S32, 1))}, step(lb, i, cur)...)
	body := b.keep(lb.BuildComputation(lb.Tuple(next...)))
	w := b.While(cond, body, b.Tuple(append([]*Instruction{b.ScalarConstant(S32, 0)}, state...)...))
	out := make([]*Instruction, len(state))
	for k := range state {
		out[k] = b.GetTupleElement(w, int64(k+1))
	}
	return out
}

// rowStart is the start indices (0, …, 0, row, col) of a rank-r dynamic-slice;
// a nil col is 0.
func rowStart(b *Builder, r int, row, col *Instruction) []*Instruction {
	starts := make([]*Instruction, r)
	for k := range starts {
		starts[k] = b.ScalarConstant(S32, 0)
	}
	starts[r-2] = row
	if col != nil {
		starts[r-1] = col
	}
	return starts
}

// swapLast transposes the last two dimensions.
func swapLast(b *Builder, x *Instruction) *Instruction {
	r := x.Shape.Rank()
	perm := Iota64(r)
	perm[r-2], perm[r-1] = perm[r-1], perm[r-2]
	return b.Transpose(x, perm...)
}

// matrixIota counts along dimension d of s's dimensions, in s32.
func matrixIota(b *Builder, s Shape, d int) *Instruction {
	return b.Iota(MakeShape(S32, s.Dims...), int64(d))
}

func zerosLike(b *Builder, s Shape) *Instruction {
	return b.BroadcastScalar(b.ScalarConstant(s.DType, 0), s.Dims...)
}

// buildNamed builds the computation, naming the instruction in a failure.
func buildNamed(b *Builder, in *Instruction, root *Instruction) (*Computation, error) {
	c, err := b.BuildComputation(root)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	return c, nil
}
