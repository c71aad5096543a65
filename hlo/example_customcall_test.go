package hlo_test

import (
	"fmt"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// A custom-call target registered from Go: a vendor's fused SiLU, y = x·σ(x),
// lowered to HLO the compiler has. The custom-call expander pass splices this
// decomposition in place of every call; cpuref evaluates the same decomposition.
func ExampleRegisterCustomCall() {
	err := hlo.RegisterCustomCall(hlo.CustomCallTarget{
		Name:    "example.silu",
		Summary: "x * logistic(x)",
		Expand: func(b *hlo.Builder, call *hlo.Instruction, xs []*hlo.Instruction) (*hlo.Instruction, error) {
			if len(xs) != 1 || !xs[0].Shape.Equal(call.Shape) || !xs[0].Shape.DType.IsFloat() {
				return nil, fmt.Errorf("example.silu takes one float operand of the result's shape")
			}
			return b.Mul(xs[0], b.Logistic(xs[0])), nil
		},
	})
	if err != nil {
		panic(err)
	}
	m, err := hlo.ParseModule(`HloModule silu
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[3] custom-call(x), custom_call_target="example.silu"
}`)
	if err != nil {
		panic(err)
	}
	out, err := cpuref.Eval(m, hlo.MustFromSlice([]int64{3}, []float32{-1, 0, 2}))
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output: f32[3] {-0.26894143, 0, 1.7615942}
}
