package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Differential cases of get-dimension-size: each dimension's size, used in
// arithmetic as shape-polymorphic programs do (a sum divided by a size).
func init() { opCases[hlo.OpGetDimensionSize] = dimensionSizeCases }

func dimensionSizeCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for d := range int64(3) {
		cb := newCase(g, "get-dimension-size")
		x := cb.param(hlo.MakeShape(hlo.F32, 2, 5, 3), unitDomain)
		n := cb.GetDimensionSize(x, d)
		sum := cb.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{cb.ScalarConstant(hlo.F32, 0)},
			cb.Reducer(hlo.OpAdd, hlo.F32), []int64{0, 1, 2})
		root := cb.Tuple(n, cb.Div(sum, cb.Convert(n, hlo.F32)))
		out = append(out, cb.done(t, fmt.Sprintf("d=%d", d), root, vkxla.Tolerance(hlo.OpReduce, hlo.F32)))
	}
	return out
}
