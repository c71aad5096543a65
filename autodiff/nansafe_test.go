package autodiff

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// gradAt evaluates Grad(f, wrt) at the inputs; the expected values below come from
// the derivatives' definitions, worked by hand.
func gradAt(t *testing.T, m *hlo.Module, wrt []int, in ...*hlo.Literal) *hlo.Literal {
	t.Helper()
	g, err := Grad(m, wrt, nil)
	require.NoError(t, err)
	out, err := cpuref.Eval(g, in...)
	require.NoError(t, err)
	return out
}

func sumOf(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
	return b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(x.Shape.DType, 0)},
		b.Reducer(hlo.OpAdd, x.Shape.DType), hlo.Iota64(x.Shape.Rank()))
}

func TestPowAtZeroIsNaNSafe(t *testing.T) {
	m := build(t, []hlo.Shape{f64s(3), f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.Pow(ps[0], ps[1]))
	})
	// x = (0, 0, 2), y = (0, 2, 3): ∂x = y·x^(y-1) = (0 [y = 0], 0, 12);
	// ∂y = log(x)·x^y, 0 where x = 0: (0, 0, 8·log 2).
	out := gradAt(t, m, []int{0, 1}, vec64(0, 0, 2), vec64(0, 2, 3))
	assert.Equal(t, []float64{0, 0, 12}, values(t, out.Elems()[0]))
	assert.InDeltaSlice(t, []float64{0, 0, 8 * math.Log(2)}, values(t, out.Elems()[1]), 1e-15)
}

func TestSqrtAtZero(t *testing.T) {
	// As JAX: d sqrt(x)/dx = 1/(2 sqrt x) is +Inf at 0, d rsqrt is -Inf; not NaN.
	for op, want := range map[hlo.Opcode]float64{hlo.OpSqrt: math.Inf(1), hlo.OpRsqrt: math.Inf(-1)} {
		m := build(t, []hlo.Shape{f64s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Unary(op, ps[0])
		})
		out := gradAt(t, m, []int{0}, hlo.ScalarLiteral(0.0))
		assert.Equal(t, want, values(t, out)[0], "%v", op)
	}
}

func TestReduceProductWithZeros(t *testing.T) {
	m := build(t, []hlo.Shape{f64s(2, 3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.Reduce(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 1)},
			b.Reducer(hlo.OpMultiply, hlo.F64), []int64{1}))
	})
	// Row (0, 2, 3): ∂ = (6, 0, 0); row (0, 0, 5): ∂ = (0, 0, 0). No division.
	x := hlo.MustFromSlice([]int64{2, 3}, []float64{0, 2, 3, 0, 0, 5})
	assert.Equal(t, []float64{6, 0, 0, 0, 0, 0}, values(t, gradAt(t, m, []int{0}, x)))

	// Five elements (three scan steps), one zero: only the zero's derivative is
	// nonzero, the product of the others.
	m = build(t, []hlo.Shape{f64s(5)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Reduce(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 1)}, b.Reducer(hlo.OpMultiply, hlo.F64), []int64{0})
	})
	assert.Equal(t, []float64{0, 24, 0, 0, 0}, values(t, gradAt(t, m, []int{0}, vec64(2, 0, 3, 1, 4))))
	assert.Equal(t, []float64{12, 24, 8, 24, 6}, values(t, gradAt(t, m, []int{0}, vec64(2, 1, 3, 1, 4))))
}

func TestMaxTiesSplitEqually(t *testing.T) {
	m := build(t, []hlo.Shape{f64s(4)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Reduce(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, math.Inf(-1))},
			b.Reducer(hlo.OpMaximum, hlo.F64), []int64{0})
	})
	assert.Equal(t, []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, values(t, gradAt(t, m, []int{0}, vec64(1, 3, 3, 3))))

	// An init value equal to the maximum takes its share: max(init 3; 1, 3) splits
	// between the 3 and the init.
	m = build(t, []hlo.Shape{f64s(2), f64s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Reduce(ps[:1], ps[1:], b.Reducer(hlo.OpMaximum, hlo.F64), []int64{0})
	})
	out := gradAt(t, m, []int{0, 1}, vec64(1, 3), hlo.ScalarLiteral(3.0))
	assert.Equal(t, []float64{0, 0.5}, values(t, out.Elems()[0]))
	assert.Equal(t, []float64{0.5}, values(t, out.Elems()[1]))

	// maximum(x, y) at x = y: each gets half.
	m = build(t, []hlo.Shape{f64s(2), f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.Max(ps[0], ps[1]))
	})
	out = gradAt(t, m, []int{0, 1}, vec64(1, 2), vec64(1, 5))
	assert.Equal(t, []float64{0.5, 0}, values(t, out.Elems()[0]))
	assert.Equal(t, []float64{0.5, 1}, values(t, out.Elems()[1]))
}

func TestMaxPoolTieGoesToFirst(t *testing.T) {
	// Window 2, stride 2 over (3, 3, 1, 4): the first 3 gets the whole cotangent.
	m := build(t, []hlo.Shape{f64s(4)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.ReduceWindow(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, math.Inf(-1))},
			b.Reducer(hlo.OpMaximum, hlo.F64), hlo.MakeWindow([]int64{2}, []int64{2})))
	})
	assert.Equal(t, []float64{1, 0, 0, 1}, values(t, gradAt(t, m, []int{0}, vec64(3, 3, 1, 4))))

	// The same with window dilation 2 (windows {x0, x2} and {x1, x3}): the first 3.
	m = build(t, []hlo.Shape{f64s(4)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.ReduceWindow(ps, []*hlo.Instruction{b.ScalarConstant(hlo.F64, math.Inf(-1))},
			b.Reducer(hlo.OpMaximum, hlo.F64), []hlo.WindowDim{win(2, 1, 0, 0, 2, 1)}))
	})
	assert.Equal(t, []float64{1, 1, 0, 0}, values(t, gradAt(t, m, []int{0}, vec64(3, 5, 3, 1))))
}
