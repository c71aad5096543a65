package cpuref

import (
	"fmt"
	"sort"

	"github.com/vkxla/vkxla/hlo"
)

// evalSort sorts N operands of equal dimensions together along dimensions[0]. The
// comparator takes 2N scalars (lhs_0, rhs_0, lhs_1, rhs_1, …) and returns true when
// lhs must come before rhs. The sort is always stable (is_stable=false permits any
// order of equivalent elements, and stable is one of them). A comparator that is not
// a strict weak order (e.g. LT with NaNs) gives an order that depends on the
// algorithm, as in XLA.
func evalSort(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	n := len(ops)
	if err := checkSortOperands(ops); err != nil {
		return nil, err
	}
	shapes, err := resultShapes(in.Shape, n)
	if err != nil {
		return nil, err
	}
	cmp, err := reducer(ev, in, 0, 2*n, 1)
	if err != nil {
		return nil, err
	}
	dims, rank := ops[0].Shape().Dims, ops[0].Shape().Rank()
	if len(in.Attrs.Dimensions) != 1 || checkDimList("sort", in.Attrs.Dimensions, rank) != nil {
		return nil, fmt.Errorf("sort needs one dimension of the rank-%d operands, got %v", rank, in.Attrs.Dimensions)
	}
	dim := in.Attrs.Dimensions[0]
	out := make([][]uint64, n)
	for k := range out {
		out[k] = make([]uint64, ops[k].NumElements())
	}
	strides := ops[0].Shape().Strides()
	// Every index with the sort dimension fixed at 0 starts one row to sort.
	rowDims := append([]int64(nil), dims...)
	rowDims[dim] = 1
	s := &rowSorter{cmp: cmp, ops: ops, args: make([]uint64, 2*n), res: make([]uint64, 1)}
	err = forEachIndexErr(rowDims, func(idx []int64) error {
		return s.sortRow(out, linearIndex(strides, idx), strides[dim], dims[dim])
	})
	if err != nil {
		return nil, err
	}
	return literalsFromBits(in.Shape, shapes, out), nil
}

// rowSorter sorts one row at a time with the comparator.
type rowSorter struct {
	cmp       *scalarFn
	ops       []*hlo.Literal
	args, res []uint64
	err       error
}

// sortRow sorts the row of length n starting at base with the given stride, writing
// every operand's permuted elements into out.
func (s *rowSorter) sortRow(out [][]uint64, base, stride, n int64) error {
	pos := make([]int64, n)
	for i := range pos {
		pos[i] = base + int64(i)*stride
	}
	sort.SliceStable(pos, func(a, b int) bool { return s.less(pos[a], pos[b]) })
	if s.err != nil {
		return s.err
	}
	for i, p := range pos {
		dst := base + int64(i)*stride
		for k, op := range s.ops {
			out[k][dst] = op.Bits(int(p))
		}
	}
	return nil
}

func (s *rowSorter) less(a, b int64) bool {
	if s.err != nil {
		return false
	}
	for k, op := range s.ops {
		s.args[2*k], s.args[2*k+1] = op.Bits(int(a)), op.Bits(int(b))
	}
	if err := s.cmp.call(s.args, s.res); err != nil {
		s.err = err
		return false
	}
	return s.res[0] != 0
}

// checkSortOperands requires at least one operand, all of one shape's dimensions.
func checkSortOperands(ops []*hlo.Literal) error {
	if len(ops) == 0 {
		return fmt.Errorf("sort needs at least one operand")
	}
	for k, op := range ops {
		if !op.Shape().SameDims(ops[0].Shape()) {
			return fmt.Errorf("sort operand %d is %v, operand 0 is %v", k, op.Shape(), ops[0].Shape())
		}
	}
	return nil
}
