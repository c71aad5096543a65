package passes

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// TransposeFolding folds a transpose that feeds a dot into the dot's dimension
// numbers, as XLA's TransposeFolding does: dot(transpose(a), b) reads a directly,
// with its contracting and batch dimensions renumbered through the permutation. The
// transposed copy is neither computed nor stored (the GEMM reads the original
// layout as fast: docs/codegen.md), and a transpose left without users goes at the
// next DCE. A fold is made only when it leaves the dot's result unchanged: the
// operand's free dimensions must keep their relative order (the result lists them
// in operand order).
func TransposeFolding(m *hlo.Module, _ Config) (bool, error) {
	changed := false
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op != hlo.OpDot || in.Attrs.Dot == nil {
				continue
			}
			for side := range 2 {
				if foldTranspose(in, side) {
					changed = true
				}
			}
		}
	}
	return changed, nil
}

// foldTranspose folds operand side (0: lhs, 1: rhs) of dot if it is a transpose.
func foldTranspose(dot *hlo.Instruction, side int) bool {
	t := dot.Operands[side]
	if t.Op != hlo.OpTranspose {
		return false
	}
	perm := t.Attrs.Dimensions
	d := *dot.Attrs.Dot
	batch, contracting := &d.LhsBatch, &d.LhsContracting
	if side == 1 {
		batch, contracting = &d.RhsBatch, &d.RhsContracting
	}
	free := hlo.Complement(t.Shape.Rank(), *batch, *contracting)
	for i := 1; i < len(free); i++ {
		if perm[free[i]] < perm[free[i-1]] {
			return false // the result would list the free dimensions in another order
		}
	}
	*batch, *contracting = permuted(*batch, perm), permuted(*contracting, perm)
	dot.Attrs.Dot = &d
	dot.Operands[side] = t.Operands[0]
	return true
}

// permuted maps dimensions of a transpose's result to its operand's.
func permuted(dims, perm []int64) []int64 {
	out := slices.Clone(dims)
	for i, x := range dims {
		out[i] = perm[x]
	}
	return out
}
