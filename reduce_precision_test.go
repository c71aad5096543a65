package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// Differential cases of reduce-precision: every float type to bf16's, f16's and
// tiny formats; the expansion's integer ops must match cpuref bit for bit.
func init() { opCases[hlo.OpReducePrecision] = reducePrecisionCases }

func reducePrecisionCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dt := range g.dtypes {
		if !dt.IsFloat() {
			continue
		}
		for _, f := range [][2]int64{{8, 7}, {5, 10}, {3, 2}} {
			cb := newCase(g, "reduce-precision")
			x := cb.param(hlo.MakeShape(dt, 3, 37), domain{-300, 300})
			out = append(out, cb.done(t, fmt.Sprintf("%v/e%d_m%d", dt, f[0], f[1]), cb.ReducePrecision(x, f[0], f[1]), exact()))
		}
	}
	return out
}
