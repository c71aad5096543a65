package vkxla_test

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// Differential cases of opt-barrier: its expander runs after every other pass, so
// the kernels on either side of it are compiled apart; the values pass unchanged.
func init() { opCases[hlo.OpOptBarrier] = optBarrierCases }

func optBarrierCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, dims := range [][]int64{{7}, {3, 5}} {
		cb := newCase(g, "opt-barrier")
		x := cb.param(hlo.MakeShape(hlo.F32, dims...), unitDomain)
		i := cb.param(hlo.MakeShape(hlo.S32, 4), unitDomain)
		neg := cb.Negate(x)
		b := cb.OptBarrier(cb.Tuple(neg, i, x))
		after := cb.Negate(cb.GetTupleElement(b, 0)) // negate∘negate: fusion must not see through
		root := cb.Tuple(after, cb.GetTupleElement(b, 1), b)
		out = append(out, cb.done(t, fmt.Sprintf("%v", dims), root, exact()))
	}
	return out
}
