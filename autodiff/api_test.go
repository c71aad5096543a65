package autodiff

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// build makes a module from parameter shapes and a body.
func build(t *testing.T, params []hlo.Shape, body func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction) *hlo.Module {
	t.Helper()
	return buildModule(t, fdCase{name: t.Name(), params: params, build: body})
}

func vec64(vals ...float64) *hlo.Literal { return hlo.MustFromSlice([]int64{int64(len(vals))}, vals) }

func values(t *testing.T, l *hlo.Literal) []float64 {
	t.Helper()
	v, err := hlo.Values[float64](l)
	require.NoError(t, err)
	return v
}

// f(x, y) = Σ x·y + sin(x₀): ∂x = y + cos(x₀)e₀, ∂y = x.
func dotPlusSin(t *testing.T) *hlo.Module {
	return build(t, []hlo.Shape{f64s(3), f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		s := b.Dot(ps[0], ps[1])
		x0 := b.Reshape(b.Slice(ps[0], []int64{0}, []int64{1}, nil))
		return b.Add(s, b.Sin(x0))
	})
}

func TestGradAndValueAndGrad(t *testing.T) {
	m := dotPlusSin(t)
	x, y := vec64(0.5, -1, 2), vec64(3, 4, -5)
	wantX := []float64{3 + math.Cos(0.5), 4, -5}
	wantY := []float64{0.5, -1, 2}
	value := 0.5*3 - 4 - 10 + math.Sin(0.5)

	g, err := Grad(m, []int{0}, nil)
	require.NoError(t, err)
	out, err := cpuref.Eval(g, x, y)
	require.NoError(t, err)
	assert.InDeltaSlice(t, wantX, values(t, out), 1e-12, "Grad with one wrt returns the gradient array")

	g2, err := Grad(m, []int{1, 0}, nil)
	require.NoError(t, err)
	out, err = cpuref.Eval(g2, x, y)
	require.NoError(t, err)
	require.Len(t, out.Elems(), 2)
	assert.InDeltaSlice(t, wantY, values(t, out.Elems()[0]), 1e-12, "gradients come in wrt order")
	assert.InDeltaSlice(t, wantX, values(t, out.Elems()[1]), 1e-12)

	vg, err := ValueAndGrad(m, []int{0}, nil)
	require.NoError(t, err)
	out, err = cpuref.Eval(vg, x, y)
	require.NoError(t, err)
	require.Len(t, out.Elems(), 2)
	assert.InDelta(t, value, values(t, out.Elems()[0])[0], 1e-12)
	assert.InDeltaSlice(t, wantX, values(t, out.Elems()[1]), 1e-12)
}

func TestIntegerParameterGetsZeroGradient(t *testing.T) {
	// f(x, n) = Σ x · convert(n): n is s32, its gradient is zero (not an error).
	m := build(t, []hlo.Shape{f64s(3), s32s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Dot(ps[0], b.Convert(ps[1], hlo.F64))
	})
	g, err := Grad(m, []int{0, 1}, nil)
	require.NoError(t, err)
	n := hlo.MustFromSlice([]int64{3}, []int32{2, -1, 7})
	out, err := cpuref.Eval(g, vec64(1, 2, 3), n)
	require.NoError(t, err)
	assert.Equal(t, []float64{2, -1, 7}, values(t, out.Elems()[0]))
	ints, err := hlo.Values[int32](out.Elems()[1])
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 0, 0}, ints)
}

func TestUnusedParameterGetsZeroGradient(t *testing.T) {
	m := build(t, []hlo.Shape{f64s(2), f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Dot(ps[0], ps[0])
	})
	g, err := Grad(m, []int{1}, nil)
	require.NoError(t, err)
	out, err := cpuref.Eval(g, vec64(1, 2), vec64(3, 4))
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 0}, values(t, out))
}

func TestNonDifferentiableOpIsAnError(t *testing.T) {
	// bitcast-convert on the path: the error names the op.
	m := build(t, []hlo.Shape{f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		bits := b.BitcastConvert(ps[0], hlo.F32)
		return b.Convert(b.Reduce([]*hlo.Instruction{bits}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)},
			b.Reducer(hlo.OpAdd, hlo.F32), []int64{0, 1}), hlo.F64)
	})
	_, err := Grad(m, []int{0}, nil)
	require.ErrorIs(t, err, ErrNotDifferentiable)
	assert.Contains(t, err.Error(), "bitcast-convert")

	// The same op off the path (its result is unused by the output) is fine.
	m = build(t, []hlo.Shape{f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		b.BitcastConvert(ps[0], hlo.S64)
		return b.Dot(ps[0], ps[0])
	})
	_, err = Grad(m, []int{0}, nil)
	require.NoError(t, err)
}

// argmax builds a variadic (value, index) reduce over a vector.
func argmax(t *testing.T, b *hlo.Builder, x *hlo.Instruction, n int64) *hlo.Instruction {
	rb := hlo.NewBuilder("argmax")
	av, ai := rb.Parameter(hlo.Scalar(hlo.F64), "av"), rb.Parameter(hlo.Scalar(hlo.S32), "ai")
	bv, bi := rb.Parameter(hlo.Scalar(hlo.F64), "bv"), rb.Parameter(hlo.Scalar(hlo.S32), "bi")
	keep := rb.Compare(av, bv, hlo.CmpGE)
	comp, err := rb.BuildComputation(rb.Tuple(rb.Select(keep, av, bv), rb.Select(keep, ai, bi)))
	require.NoError(t, err)
	return b.Reduce([]*hlo.Instruction{x, b.Iota(hlo.MakeShape(hlo.S32, n), 0)},
		[]*hlo.Instruction{b.ScalarConstant(hlo.F64, math.Inf(-1)), b.ScalarConstant(hlo.S32, 0)}, comp, []int64{0})
}

func TestArgmaxIndexCarriesNoGradient(t *testing.T) {
	// f(x) = x[argmax x]·2 via a dynamic-slice at the index: the index is an integer
	// (no gradient), the slice is differentiable.
	m := build(t, []hlo.Shape{f64s(4)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		idx := b.GetTupleElement(argmax(t, b, ps[0], 4), 1)
		v := b.Reshape(b.DynamicSlice(ps[0], []*hlo.Instruction{idx}, []int64{1}))
		return b.Mul(v, b.ScalarConstant(hlo.F64, 2))
	})
	g, err := Grad(m, []int{0}, nil)
	require.NoError(t, err)
	out, err := cpuref.Eval(g, vec64(1, 5, -2, 3))
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 2, 0, 0}, values(t, out))

	// Using the reduce's value result is an error naming the reduce.
	m = build(t, []hlo.Shape{f64s(4)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.GetTupleElement(argmax(t, b, ps[0], 4), 0)
	})
	_, err = Grad(m, []int{0}, nil)
	require.ErrorIs(t, err, ErrNotDifferentiable)
	assert.Contains(t, err.Error(), "variadic reduce")
}

func TestBadArguments(t *testing.T) {
	m := dotPlusSin(t)
	for name, call := range map[string]func() error{
		"nil module":       func() error { _, err := Grad(nil, []int{0}, nil); return err },
		"no wrt":           func() error { _, err := Grad(m, nil, nil); return err },
		"wrt out of range": func() error { _, err := Grad(m, []int{2}, nil); return err },
		"wrt twice":        func() error { _, err := VJP(m, []int{0, 0}, nil); return err },
		"malformed module": func() error {
			// A parameter but no root.
			p := &hlo.Instruction{Name: "p", Op: hlo.OpParameter, Shape: f64s()}
			bad := &hlo.Module{Name: "bad", Entry: &hlo.Computation{Name: "main",
				Params: []*hlo.Instruction{p}, Instructions: []*hlo.Instruction{p}}}
			bad.Computations = []*hlo.Computation{bad.Entry}
			_, err := Grad(bad, []int{0}, nil)
			return err
		},
		"grad of a vector": func() error {
			v := build(t, []hlo.Shape{f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Sin(ps[0])
			})
			_, err := Grad(v, []int{0}, nil)
			return err
		},
	} {
		err := call()
		assert.ErrorIs(t, err, ErrInvalidArgument, name)
	}
}

func TestVJPSignature(t *testing.T) {
	// f(x) = (sin x, (x·x, convert(x) s32)): two float leaves take cotangents, the
	// s32 leaf none; the result is (leaves…, gradient).
	m := build(t, []hlo.Shape{f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Tuple(b.Sin(ps[0]), b.Tuple(b.Mul(ps[0], ps[0]), b.Convert(ps[0], hlo.S32)))
	})
	v, err := VJP(m, []int{0}, nil)
	require.NoError(t, err)
	require.Len(t, v.Entry.Params, 3)
	out, err := cpuref.Eval(v, vec64(0.5, 2), vec64(1, 10), vec64(100, 1000))
	require.NoError(t, err)
	require.Len(t, out.Elems(), 4)
	assert.InDeltaSlice(t, []float64{math.Sin(0.5), math.Sin(2)}, values(t, out.Elems()[0]), 1e-15)
	assert.InDeltaSlice(t, []float64{math.Cos(0.5) + 100, 10*math.Cos(2) + 4000}, values(t, out.Elems()[3]), 1e-12)
}

func TestFloat32AgreesWithFloat64(t *testing.T) {
	// The rules are type-generic: Grad of the same function in f32 matches f64 to
	// f32 precision.
	f := func(dt hlo.DType) *hlo.Module {
		return build(t, []hlo.Shape{hlo.MakeShape(dt, 2, 3), hlo.MakeShape(dt, 3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			h := b.Tanh(b.Dot(ps[0], ps[1]))
			return sumOf(b, b.Mul(h, b.Logistic(h)))
		})
	}
	x := []float64{0.1, -0.4, 0.7, 1.1, -0.2, 0.3}
	w := []float64{0.5, -1.5, 0.25}
	g64 := gradAt(t, f(hlo.F64), []int{0, 1}, hlo.MustFromSlice([]int64{2, 3}, x), vec64(w...))
	x32, w32 := make([]float32, len(x)), make([]float32, len(w))
	for i, v := range x {
		x32[i] = float32(v)
	}
	for i, v := range w {
		w32[i] = float32(v)
	}
	g32 := gradAt(t, f(hlo.F32), []int{0, 1}, hlo.MustFromSlice([]int64{2, 3}, x32), hlo.MustFromSlice([]int64{3}, w32))
	for k := range 2 {
		want := g64.Elems()[k]
		got := g32.Elems()[k]
		require.Equal(t, hlo.F32, got.DType())
		for i := range want.NumElements() {
			assert.InDelta(t, want.Float64(i), got.Float64(i), 1e-6+1e-5*math.Abs(want.Float64(i)))
		}
	}
}
