package cpuref

import (
	"fmt"
	"sort"

	"github.com/vkxla/vkxla/hlo"
)

// evalSortWide is sort over operands of which some have c128 elements: evalSort's
// stable sort along dimensions[0], the comparator called on scalar literals
// (lhs_0, rhs_0, lhs_1, rhs_1, …). Complex values have no order of their own; the
// comparator gives one (e.g. real part, then imaginary part).
func evalSortWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	n := len(ops)
	if err := checkSortOperands(ops); err != nil {
		return nil, err
	}
	cmp, err := newLiteralFn(ev, in, 0, 1)
	if err != nil {
		return nil, err
	}
	dims, rank := ops[0].Shape().Dims, ops[0].Shape().Rank()
	if len(in.Attrs.Dimensions) != 1 || checkDimList("sort", in.Attrs.Dimensions, rank) != nil {
		return nil, fmt.Errorf("sort needs one dimension of the rank-%d operands, got %v", rank, in.Attrs.Dimensions)
	}
	dim := in.Attrs.Dimensions[0]
	strides := ops[0].Shape().Strides()
	out := make([][]*hlo.Literal, ops[0].NumElements())
	rowDims := append([]int64(nil), dims...)
	rowDims[dim] = 1
	err = forEachIndexErr(rowDims, func(idx []int64) error {
		return sortRowWide(cmp, ops, out, linearIndex(strides, idx), strides[dim], dims[dim])
	})
	if err != nil {
		return nil, err
	}
	return gatherResults(in.Shape, out, n)
}

// sortRowWide sorts the row of length n starting at base with the given stride,
// storing at each destination the scalars of every operand it receives.
func sortRowWide(cmp *literalFn, ops []*hlo.Literal, out [][]*hlo.Literal, base, stride, n int64) error {
	pos := make([]int64, n)
	for i := range pos {
		pos[i] = base + int64(i)*stride
	}
	var err error
	sort.SliceStable(pos, func(a, b int) bool {
		if err != nil {
			return false
		}
		args := make([]*hlo.Literal, 0, 2*len(ops))
		for _, op := range ops {
			args = append(args, scalarElement(op, int(pos[a])), scalarElement(op, int(pos[b])))
		}
		var less bool
		less, err = cmp.predicate(args...)
		return less
	})
	if err != nil {
		return err
	}
	for i, p := range pos {
		out[base+int64(i)*stride] = elementsAt(ops, int(p))
	}
	return nil
}
