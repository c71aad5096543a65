package autodiff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func reduceWindowCase(name string, op hlo.Opcode, init float64, x hlo.Shape, w []hlo.WindowDim) fdCase {
	return fdCase{name: name, params: []hlo.Shape{x},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.ReduceWindow(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, init)}, b.Reducer(op, hlo.F64), w)
		}}
}

func reduceWindowCases(t *testing.T) []fdCase {
	return []fdCase{
		reduceWindowCase("sum pool strided", hlo.OpAdd, 0, f64s(2, 7, 6),
			[]hlo.WindowDim{win(1, 1, 0, 0, 1, 1), win(3, 2, 0, 0, 1, 1), win(2, 2, 0, 0, 1, 1)}),
		reduceWindowCase("sum padded dilated", hlo.OpAdd, 0.5, f64s(5, 4),
			[]hlo.WindowDim{win(2, 1, 1, 2, 2, 1), win(3, 2, 2, 1, 1, 2)}),
		reduceWindowCase("sum negative padding", hlo.OpAdd, 0, f64s(8),
			[]hlo.WindowDim{win(2, 2, -1, -1, 1, 1)}),
		reduceWindowCase("max pool overlapping", hlo.OpMaximum, -1e300, f64s(2, 6, 5),
			[]hlo.WindowDim{win(1, 1, 0, 0, 1, 1), win(3, 2, 0, 0, 1, 1), win(2, 1, 0, 0, 1, 1)}),
		reduceWindowCase("max pool padded", hlo.OpMaximum, -1e300, f64s(5, 5),
			[]hlo.WindowDim{win(3, 2, 1, 1, 1, 1), win(2, 2, 1, 0, 1, 1)}),
		reduceWindowCase("max pool base-dilated", hlo.OpMaximum, -3, f64s(4, 3),
			[]hlo.WindowDim{win(3, 2, 1, 1, 1, 2), win(2, 1, 0, 1, 1, 3)}),
		reduceWindowCase("max pool window-dilated", hlo.OpMaximum, -3, f64s(7, 4),
			[]hlo.WindowDim{win(3, 2, 1, 0, 2, 1), win(2, 1, 0, 1, 2, 2)}),
		reduceWindowCase("min pool window-dilated", hlo.OpMinimum, 3, f64s(6),
			[]hlo.WindowDim{win(2, 1, 1, 1, 3, 1)}),
		// The init value wins in some windows (inputs are in [-2, 2]): those outputs
		// do not depend on the operand.
		reduceWindowCase("max pool with a winning init", hlo.OpMaximum, 0.5, f64s(6, 5),
			[]hlo.WindowDim{win(2, 2, 0, 0, 1, 1), win(2, 1, 0, 0, 1, 1)}),
		reduceWindowCase("max pool with a winning init, base-dilated", hlo.OpMaximum, 0.5, f64s(5, 4),
			[]hlo.WindowDim{win(2, 2, 1, 0, 1, 2), win(2, 1, 0, 0, 1, 1)}),
		reduceWindowCase("max pool with a winning init, window-dilated", hlo.OpMaximum, 0.5, f64s(6, 5),
			[]hlo.WindowDim{win(2, 1, 1, 0, 2, 1), win(2, 1, 0, 0, 1, 1)}),
		{name: "min pool init parameter", params: []hlo.Shape{f64s(6, 4), f64s()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.ReduceWindow(ps[:1], ps[1:], b.Reducer(hlo.OpMinimum, hlo.F64),
					[]hlo.WindowDim{win(2, 2, 1, 0, 1, 1), win(3, 1, 0, 1, 2, 1)})
			}},
		reduceWindowCase("min pool", hlo.OpMinimum, 1e300, f64s(6, 4),
			[]hlo.WindowDim{win(2, 2, 0, 0, 1, 1), win(3, 1, 0, 0, 1, 1)}),
		{name: "select-and-scatter (max pool gradient)", params: []hlo.Shape{f64s(6, 5), f64s(3, 4), f64s()},
			wrt: []int{1, 2},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				sel, err := selector(hlo.CmpGE, hlo.F64)
				require.NoError(t, err)
				return b.SelectAndScatter(ps[0], ps[1], ps[2], sel, b.Reducer(hlo.OpAdd, hlo.F64),
					[]hlo.WindowDim{win(3, 2, 1, 0, 1, 1), win(2, 1, 0, 0, 1, 1)})
			}},
	}
}

func TestReduceWindowVJP(t *testing.T) { runFD(t, reduceWindowCases(t)) }

func sortCases(t *testing.T) []fdCase {
	return []fdCase{
		{name: "sort one operand", params: []hlo.Shape{f64s(3, 5)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Sort(ps, b.Comparator(hlo.CmpLT, hlo.F64), 1, false)
			}},
		{name: "sort keys and values along dim 0", params: []hlo.Shape{f64s(4, 3), f64s(4, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Sort(ps, b.Comparator(hlo.CmpGT, hlo.F64, hlo.F64), 0, true)
			}},
	}
}

func TestSortVJP(t *testing.T) { runFD(t, sortCases(t)) }
