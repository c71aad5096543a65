package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The gradient of a dot or convolution with a wider result type (f32 operands,
// f64 result: preferred_element_type) is, bit for bit, the gradient of the
// upcast program convert→contract in f64, converted back to f32.
func TestWidenedContractionGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	lit := func(dims ...int64) *hlo.Literal {
		l := hlo.NewLiteral(hlo.MakeShape(hlo.F32, dims...))
		for i := range l.NumElements() {
			l.SetFloat64(i, rng.Float64()*2-1)
		}
		return l
	}
	dotDims := hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	convDims := hlo.ConvDims{InputBatch: 0, InputFeature: 2, InputSpatial: []int64{1}, KernelInput: 1, KernelOutput: 2,
		KernelSpatial: []int64{0}, OutputBatch: 0, OutputFeature: 2, OutputSpatial: []int64{1}}
	for _, c := range []struct {
		name   string
		shapes [][]int64
		build  func(b *hlo.Builder, x, y *hlo.Instruction, widened bool) *hlo.Instruction
	}{
		{"dot", [][]int64{{3, 4}, {4, 2}}, func(b *hlo.Builder, x, y *hlo.Instruction, widened bool) *hlo.Instruction {
			if widened {
				return b.DotAs(x, y, dotDims, hlo.F64)
			}
			return b.DotGeneral(b.Convert(x, hlo.F64), b.Convert(y, hlo.F64), dotDims)
		}},
		{"convolution", [][]int64{{2, 6, 3}, {2, 3, 4}}, func(b *hlo.Builder, x, y *hlo.Instruction, widened bool) *hlo.Instruction {
			win := []hlo.WindowDim{hlo.NewWindowDim(2)}
			if widened {
				return b.ConvAs(x, y, win, convDims, 1, 1, hlo.F64)
			}
			return b.Conv(b.Convert(x, hlo.F64), b.Convert(y, hlo.F64), win, convDims, 1, 1)
		}},
	} {
		inputs := []*hlo.Literal{lit(c.shapes[0]...), lit(c.shapes[1]...)}
		var grads [2]*hlo.Literal
		for i, widened := range []bool{true, false} {
			b := hlo.NewBuilder(c.name)
			x := b.Parameter(hlo.MakeShape(hlo.F32, c.shapes[0]...), "x")
			y := b.Parameter(hlo.MakeShape(hlo.F32, c.shapes[1]...), "y")
			r := c.build(b, x, y, widened)
			sq := b.Mul(r, b.Sin(r))
			all := hlo.Iota64(sq.Shape.Rank())
			m, err := b.Build(b.Reduce([]*hlo.Instruction{sq}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)}, b.Reducer(hlo.OpAdd, hlo.F64), all))
			if err != nil {
				t.Fatal(err)
			}
			g, err := Grad(m, []int{0, 1}, nil)
			if err != nil {
				t.Fatalf("%s widened=%v: %v", c.name, widened, err)
			}
			if grads[i], err = cpuref.Eval(g, inputs...); err != nil {
				t.Fatal(err)
			}
		}
		for k := range 2 {
			if err := hlo.LiteralsEqual(grads[0].Elems()[k], grads[1].Elems()[k]); err != nil {
				t.Errorf("%s gradient %d: %v", c.name, k, err)
			}
		}
	}
}
