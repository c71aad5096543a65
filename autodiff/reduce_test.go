package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func reduceCase(name string, op hlo.Opcode, init float64, x hlo.Shape, dims ...int64) fdCase {
	return fdCase{name: name, params: []hlo.Shape{x},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Reduce(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, init)}, b.Reducer(op, hlo.F64), dims)
		}}
}

func reduceCases(t *testing.T) []fdCase {
	return []fdCase{
		reduceCase("sum over several dims", hlo.OpAdd, 0, f64s(2, 3, 4), 0, 2),
		reduceCase("sum all", hlo.OpAdd, 1.5, f64s(3, 2), 0, 1),
		reduceCase("product over several dims", hlo.OpMultiply, 1, f64s(2, 3, 2), 2, 0),
		reduceCase("product with init", hlo.OpMultiply, 2, f64s(3, 4), 1),
		reduceCase("max", hlo.OpMaximum, -1e300, f64s(3, 4, 2), 1),
		reduceCase("min over several dims", hlo.OpMinimum, 1e300, f64s(3, 4, 2), 0, 2),
		{name: "sum with init parameter", params: []hlo.Shape{f64s(2, 3), f64s()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Reduce(ps[:1], ps[1:], b.Reducer(hlo.OpAdd, hlo.F64), []int64{1})
			}},
		// The init value wins where it exceeds its row (inputs are in [-2, 2]).
		{name: "max with init parameter", params: []hlo.Shape{f64s(4, 3), f64s()},
			gen: func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
				if i == 1 {
					return hlo.ScalarLiteral(0.3)
				}
				return nil
			},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Reduce(ps[:1], ps[1:], b.Reducer(hlo.OpMaximum, hlo.F64), []int64{1})
			}},
		{name: "product with init parameter", params: []hlo.Shape{f64s(2, 3), f64s()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Reduce(ps[:1], ps[1:], b.Reducer(hlo.OpMultiply, hlo.F64), []int64{0})
			}},
	}
}

func TestReduceVJP(t *testing.T) { runFD(t, reduceCases(t)) }

func dotCases(t *testing.T) []fdCase {
	return []fdCase{
		{name: "matmul", params: []hlo.Shape{f64s(2, 3), f64s(3, 4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Dot(ps[0], ps[1]) }},
		{name: "vector dot", params: []hlo.Shape{f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Dot(ps[0], ps[1]) }},
		// Batch dims not leading, two contracting dims in different orders, free dims
		// on both sides.
		{name: "general dimension numbers", params: []hlo.Shape{f64s(3, 2, 4, 5), f64s(5, 6, 2, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.DotGeneral(ps[0], ps[1], hlo.DotDims{
					LhsBatch: []int64{1}, RhsBatch: []int64{2},
					LhsContracting: []int64{3, 0}, RhsContracting: []int64{0, 3}})
			}},
		{name: "batch only", params: []hlo.Shape{f64s(2, 3), f64s(3, 2)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.DotGeneral(ps[0], ps[1], hlo.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{1, 0}})
			}},
	}
}

func TestDotVJP(t *testing.T) { runFD(t, dotCases(t)) }
