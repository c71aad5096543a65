package codegen

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// A sine inside a fused reduction's loop branches to its exact path instead of
// looping, so it adds nothing to lavapipe's loop budget: a 60000-element reduction
// of sin(x) inside a kernel computation stays within 65535 iterations.
func TestSinInsideLoopKeepsLoopBudget(t *testing.T) {
	b := newCB(t, "sin_reduce")
	x, init := b.param(s(hlo.F32, 60000)), b.param(s(hlo.F32))
	sum := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{0}}, []*hlo.Computation{scalarComp(t, hlo.OpAdd, hlo.F32)},
		b.simple(hlo.OpSin, x), init)
	c := b.build(b.simple(hlo.OpNegate, sum)) // the reduction is not the root: the elemental loop
	lowerFor(t, c, LavapipeTarget())
}
