package autodiff

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// TestGradOfGrad differentiates the gradient module of scalar functions again and
// checks the second derivative against central differences of the first (same
// tolerances as the harness; step 1e-5, since the first derivative is itself an
// exact evaluation). The functions route x through the rules' own ops: pow, the
// max/min tie masks, reduce-product's exclusive products, dot, sort, pooling,
// the fft rules' transforms and conjugates, complex sign's, power's and gather's.
func TestGradOfGrad(t *testing.T) {
	type fn = func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction
	c := func(b *hlo.Builder, v float64) *hlo.Instruction { return b.ScalarConstant(hlo.F64, v) }
	cases := []struct {
		name string
		f    fn
		xs   []float64
	}{
		{"sin x·x³", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Mul(b.Sin(x), b.Pow(x, c(b, 3)))
		}, []float64{-1.3, 0.4, 2}},
		{"x^x", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return b.Pow(x, x) }, []float64{0.7, 1.9}},
		{"exp(tanh x)/(1+x²)", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Div(b.Exp(b.Tanh(x)), b.Add(c(b, 1), b.Mul(x, x)))
		}, []float64{-0.5, 1.2}},
		{"logistic, log1p, expm1, cbrt", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Add(b.Mul(b.Logistic(x), b.Log1p(b.Mul(x, x))), b.Mul(b.Expm1(x), b.Cbrt(b.Add(x, c(b, 3)))))
		}, []float64{-0.8, 0.6}},
		{"sqrt·log·rsqrt·atan2", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Add(b.Mul(b.Sqrt(x), b.Log(x)), b.Mul(b.Rsqrt(x), b.Atan2(x, c(b, 2))))
		}, []float64{0.3, 2.5}},
		{"max, min, abs, clamp", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			m := b.Max(b.Mul(x, x), b.Sin(x))
			return b.Add(b.Mul(m, b.Min(x, b.Cos(x))), b.Mul(b.Abs(x), b.Clamp(c(b, -1), b.Mul(x, x), c(b, 2))))
		}, []float64{-0.9, 0.3, 1.1}},
		{"reduce product and max", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			v := b.Concatenate(0, b.Reshape(x, 1), b.Reshape(b.Sin(x), 1), b.Reshape(b.Add(x, c(b, 1)), 1))
			p := b.Reduce([]*hlo.Instruction{v}, []*hlo.Instruction{c(b, 1)}, b.Reducer(hlo.OpMultiply, hlo.F64), []int64{0})
			m := b.Reduce([]*hlo.Instruction{v}, []*hlo.Instruction{c(b, -1e300)}, b.Reducer(hlo.OpMaximum, hlo.F64), []int64{0})
			return b.Mul(p, m)
		}, []float64{-0.4, 0.8}},
		{"dot of broadcasts", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			a := b.Mul(b.BroadcastScalar(x, 2, 3), b.Iota(f64s(2, 3), 1))
			d := b.DotGeneral(a, b.Sin(a), hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}})
			return sumOf(b, d)
		}, []float64{0.5, 1.5}},
		{"sort and max pool", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			v := b.Concatenate(0, b.Reshape(b.Sin(x), 1), b.Reshape(b.Mul(x, x), 1), b.Reshape(b.Negate(x), 1), b.Reshape(c(b, 0.25), 1))
			s := b.Sort([]*hlo.Instruction{v}, b.Comparator(hlo.CmpLT, hlo.F64), 0, true)
			w := b.Mul(s, b.Iota(f64s(4), 0))
			pool := b.ReduceWindow([]*hlo.Instruction{b.Mul(v, v)}, []*hlo.Instruction{c(b, -1e300)},
				b.Reducer(hlo.OpMaximum, hlo.F64), hlo.MakeWindow([]int64{2}, []int64{2}))
			return b.Add(sumOf(b, w), sumOf(b, pool))
		}, []float64{0.3, 1.7}},
		{"conditional and call", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			pb := hlo.NewBuilder("pos")
			a := pb.Parameter(f64s(), "a")
			pos, err := pb.BuildComputation(pb.Mul(pb.Sin(a), pb.Mul(a, a)))
			require.NoError(t, err)
			nb := hlo.NewBuilder("neg")
			z := nb.Parameter(f64s(), "z")
			neg, err := nb.BuildComputation(nb.Exp(nb.Call(pos, z)))
			require.NoError(t, err)
			return b.Conditional(b.Compare(x, c(b, 0), hlo.CmpGT), []*hlo.Computation{pos, neg}, []*hlo.Instruction{x, x})
		}, []float64{-0.7, 0.9}},
		{"sum pool and gather", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			v := b.Mul(b.BroadcastScalar(x, 5), b.Iota(f64s(5), 0))
			pool := b.ReduceWindow([]*hlo.Instruction{b.Sin(v)}, []*hlo.Instruction{c(b, 0)},
				b.Reducer(hlo.OpAdd, hlo.F64), hlo.MakeWindow([]int64{3}, []int64{2}))
			idx := b.Constant(hlo.MustFromSlice([]int64{2, 1}, []int32{1, 0}))
			g := b.Gather(pool, idx, hlo.GatherDims{CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1})
			return sumOf(b, b.Mul(g, g))
		}, []float64{0.2, 0.9}},
		{"rfft, complex weight, irfft", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			v := b.Sin(b.Mul(b.BroadcastScalar(x, 3, 5), b.Iota(f64s(3, 5), 1)))
			w := b.Complex(b.Cos(b.Iota(f64s(3, 3), 0)), b.BroadcastScalar(x, 3, 3))
			y := spectralConv(b, b.Reshape(v, 1, 3, 5), w)
			return sumOf(b, b.Mul(y, y))
		}, []float64{0.4, 1.3}},
		{"complex sign, power and gather", func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			z := b.Complex(b.Cos(x), b.Mul(x, x))
			p := b.Pow(z, b.Complex(x, c(b, 0.5)))
			v := b.Concatenate(0, b.Reshape(z, 1), b.Reshape(p, 1))
			idx := b.Constant(hlo.MustFromSlice([]int64{3, 1}, []int32{1, 0, 1}))
			g := b.Gather(b.Mul(v, v), idx, hlo.GatherDims{CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1})
			sum := b.Reduce([]*hlo.Instruction{g}, []*hlo.Instruction{b.ScalarConstant(hlo.C128, 0)}, b.Reducer(hlo.OpAdd, hlo.C128), []int64{0})
			return b.Add(b.Unary(hlo.OpImag, b.Mul(b.Sign(z), sum)), b.Unary(hlo.OpReal, p))
		}, []float64{0.3, 0.9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := build(t, []hlo.Shape{f64s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return tc.f(b, ps[0])
			})
			checkGradOfGrad(t, m, tc.xs)
		})
	}
}

// checkGradOfGrad compares Grad(Grad(m)) of a scalar function at each x with a
// central difference of Grad(m).
func checkGradOfGrad(t *testing.T, m *hlo.Module, xs []float64) {
	t.Helper()
	g, err := Grad(m, []int{0}, nil)
	require.NoError(t, err)
	gg, err := Grad(g, []int{0}, nil)
	require.NoError(t, err)
	at := func(v float64) float64 {
		out, err := cpuref.Eval(g, hlo.ScalarLiteral(v))
		require.NoError(t, err)
		return out.Float64(0)
	}
	for _, x := range xs {
		const h = 1e-5
		fd := (at(x+h) - at(x-h)) / (2 * h)
		out, err := cpuref.Eval(gg, hlo.ScalarLiteral(x))
		require.NoError(t, err)
		require.InDelta(t, fd, out.Float64(0), fdAtol+fdRtol*math.Abs(fd), "f'' at %g", x)
	}
}
