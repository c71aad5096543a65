package bench

import (
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// Chain adds a chain of n elementwise ops over f32[size] to b and returns its end:
// parameters x and y, then negate, add y, multiply by y, repeated. Fusion splits it
// into kernels of passes.DefaultMaxFusedInstructions ops; it measures how compile
// time grows with program length.
func Chain(b *hlo.Builder, n, size int) *hlo.Instruction {
	s := hlo.MakeShape(hlo.F32, int64(size))
	v := b.Parameter(s, "x")
	y := b.Parameter(s, "y")
	for i := range n {
		switch i % 3 {
		case 0:
			v = b.Negate(v)
		case 1:
			v = b.Add(v, y)
		default:
			v = b.Mul(v, y)
		}
	}
	return v
}

// Wide adds n independent reductions of x: f32[size] scaled by constants (0…6,
// repeating) to b, summed in a chain, and returns the sum: every reduction is ready
// at once, which is what the list schedule and fresh names met as quadratic.
func Wide(b *hlo.Builder, n, size int) *hlo.Instruction {
	x := b.Parameter(hlo.MakeShape(hlo.F32, int64(size)), "x")
	add := b.Reducer(hlo.OpAdd, hlo.F32)
	zero := b.ScalarConstant(hlo.F32, 0)
	var sum *hlo.Instruction
	for i := range n {
		scaled := b.Mul(x, b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(i%7)), int64(size)))
		r := b.Reduce([]*hlo.Instruction{scaled}, []*hlo.Instruction{zero}, add, []int64{0})
		if sum == nil {
			sum = r
		} else {
			sum = b.Add(sum, r)
		}
	}
	return sum
}

// NestedTuple adds tuple(tuple(…tuple(x)…)) of the given depth over x: f32[size] to
// b and returns the outermost tuple: it measures how the cost of a shape grows with
// its nesting. Beyond hlo.MaxTupleDepth the builder refuses it.
func NestedTuple(b *hlo.Builder, depth, size int) *hlo.Instruction {
	v := b.Parameter(hlo.MakeShape(hlo.F32, int64(size)), "x")
	for range depth {
		v = b.Tuple(v)
	}
	return v
}

// NestedTupleText is an HLO module whose entry takes and returns one parameter of
// a tuple shape nested depth deep around f32[4]: the nesting as the parser meets it.
func NestedTupleText(depth int) string {
	shape := strings.Repeat("(", depth) + "f32[4]" + strings.Repeat(")", depth)
	return "HloModule nested\nENTRY %nested (x: " + shape + ") -> " + shape + " {\n  ROOT %x = " + shape + " parameter(0)\n}\n"
}
