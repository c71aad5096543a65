package autodiff_test

import (
	"fmt"
	"log"

	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The gradient of f(x, y) = Σ x·x·y with respect to x (2·x·y) and y (x·x), as a
// module that compiles like any other; here it runs on cpuref.
func ExampleValueAndGrad() {
	b := hlo.NewBuilder("f")
	x := b.Parameter(hlo.MakeShape(hlo.F64, 3), "x")
	y := b.Parameter(hlo.MakeShape(hlo.F64, 3), "y")
	sum := b.Reduce([]*hlo.Instruction{b.Mul(b.Mul(x, x), y)}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)},
		b.Reducer(hlo.OpAdd, hlo.F64), []int64{0})
	m, err := b.Build(sum)
	if err != nil {
		log.Fatal(err)
	}
	g, err := autodiff.ValueAndGrad(m, []int{0, 1}, nil)
	if err != nil {
		log.Fatal(err)
	}
	out, err := cpuref.Eval(g, hlo.MustFromSlice([]int64{3}, []float64{1, 2, 3}),
		hlo.MustFromSlice([]int64{3}, []float64{1, 0.5, -1}))
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range out.Elems() {
		fmt.Println(v)
	}
	// Output:
	// f64[] -6
	// f64[3] {2, 2, -6}
	// f64[3] {1, 4, 9}
}
