package autodiff

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The complex rules are checked by finite differences through real functions of
// real parameters with complex values inside: z = complex(x, y), some ops on z,
// and both parts of the result (concatenated) as the real output. The real parts
// are drawn in [0.3, 1.2], away from the cuts of log and sqrt on the negative real
// axis and the poles of tan.

func complexParts(b *hlo.Builder, w *hlo.Instruction) *hlo.Instruction {
	return b.Concatenate(0, b.Unary(hlo.OpReal, w), b.Unary(hlo.OpImag, w))
}

func complexGen(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
	if i == 0 {
		return randomLiteral(r, s, 0.3, 1.2)
	}
	return randomLiteral(r, s, -1, 1)
}

func complexCase(name string, f func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction) fdCase {
	return fdCase{name: name, params: []hlo.Shape{f64s(2, 3), f64s(2, 3)}, gen: complexGen,
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			z := b.Complex(ps[0], ps[1])
			w := b.Complex(b.Add(ps[0], ps[1]), ps[0]) // a second complex value, for binary ops
			return f(b, z, w)
		}}
}

func complexCases(t *testing.T) []fdCase {
	var cases []fdCase
	for _, op := range []hlo.Opcode{hlo.OpNegate, hlo.OpExp, hlo.OpExpm1, hlo.OpLog, hlo.OpLog1p, hlo.OpSqrt,
		hlo.OpRsqrt, hlo.OpTanh, hlo.OpSin, hlo.OpCos, hlo.OpTan} {
		cases = append(cases, complexCase("c128 "+op.String(), func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Unary(op, z))
		}))
	}
	for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide} {
		cases = append(cases, complexCase("c128 "+op.String(), func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Binary(op, z, w))
		}))
	}
	return append(cases,
		complexCase("c128 abs", func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction { return b.Abs(z) }),
		complexCase("convert f64 to c128", func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Mul(b.Convert(b.Unary(hlo.OpReal, w), hlo.C128), z))
		}),
		complexCase("c128 transpose reshape copy", func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Copy(b.Reshape(b.Transpose(b.Mul(z, z), 1, 0), 2, 3)))
		}),
		complexCase("fft FFT", func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Fft(b.Mul(z, z), hlo.FFT, 3))
		}),
		complexCase("fft IFFT 2-D", func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Fft(b.Exp(z), hlo.IFFT, 2, 3))
		}),
		complexCase("c128 power", func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Pow(z, w))
		}),
		complexCase("c128 sign", func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Mul(b.Sign(b.Mul(z, w)), w))
		}),
	)
}

// complexMovementCases run the C-linear ops whose real rules serve complex values
// on a product of two complex values, so that each cotangent reaches both.
func complexMovementCases(t *testing.T) []fdCase {
	one := func(b *hlo.Builder, v int64) *hlo.Instruction { return b.ScalarConstant(hlo.S32, float64(v)) }
	first := func(b *hlo.Builder, w *hlo.Instruction) *hlo.Instruction { // w[0, 0], a scalar
		return b.Reshape(b.Slice(w, []int64{0, 0}, []int64{1, 1}, nil))
	}
	moves := map[string]func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction{
		"broadcast": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Broadcast(z, []int64{3, 4, 2}, []int64{2, 0})
		},
		"slice": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Slice(z, []int64{0, 1}, []int64{2, 3}, []int64{1, 2})
		},
		"concatenate": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction { return b.Concatenate(1, z, w) },
		"pad": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Pad(z, first(b, w), []hlo.PadDim{{Low: 1, High: -1}, {Low: 0, High: 2, Interior: 1}})
		},
		"reverse": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction { return b.Reverse(z, 0, 1) },
		"dynamic-slice": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.DynamicSlice(z, []*hlo.Instruction{one(b, 1), one(b, 1)}, []int64{1, 2})
		},
		"dynamic-update-slice": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.DynamicUpdateSlice(z, b.Slice(w, []int64{0, 0}, []int64{1, 2}, nil), []*hlo.Instruction{one(b, 1), one(b, 0)})
		},
		"select": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Select(b.Compare(b.Unary(hlo.OpReal, z), b.Unary(hlo.OpReal, w), hlo.CmpGT), z, w)
		},
		"tuple get-tuple-element": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			t := b.Tuple(z, w)
			return b.Mul(b.GetTupleElement(t, 1), b.GetTupleElement(t, 0))
		},
		"gather": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			idx := b.Constant(hlo.MustFromSlice([]int64{3, 1}, []int32{1, 0, 1})) // row 1 twice: its cotangents add
			return b.Gather(z, idx, hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0},
				StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1, 3})
		},
		"reduce add": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Reduce([]*hlo.Instruction{z}, []*hlo.Instruction{first(b, w)}, b.Reducer(hlo.OpAdd, hlo.C128), []int64{0})
		},
		"reduce multiply": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Reduce([]*hlo.Instruction{z}, []*hlo.Instruction{first(b, w)}, b.Reducer(hlo.OpMultiply, hlo.C128), []int64{1})
		},
		"scatter add": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			// Element (1, 2) twice: both updates add there.
			idx := b.Constant(hlo.MustFromSlice([]int64{3, 2}, []int32{1, 2, 0, 0, 1, 2}))
			return b.Scatter([]*hlo.Instruction{z}, idx, []*hlo.Instruction{firstRow(b, w)}, b.Reducer(hlo.OpAdd, hlo.C128), elementScatter)
		},
		"scatter replace": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			idx := b.Constant(hlo.MustFromSlice([]int64{3, 2}, []int32{1, 2, 0, 0, 0, 1}))
			return b.Scatter([]*hlo.Instruction{z}, idx, []*hlo.Instruction{firstRow(b, w)}, replaceC128(t), elementScatter)
		},
		"reduce-window add": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			win := []hlo.WindowDim{hlo.NewWindowDim(2), {Size: 2, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
			return b.ReduceWindow([]*hlo.Instruction{z}, []*hlo.Instruction{first(b, w)}, b.Reducer(hlo.OpAdd, hlo.C128), win)
		},
		"sort by real part": func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return b.Sort([]*hlo.Instruction{z}, realLess(t), 1, true)
		},
	}
	var cases []fdCase
	for name, move := range moves {
		cases = append(cases, complexCase("c128 "+name, func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			return complexParts(b, b.Mul(move(b, b.Mul(z, w), w), b.Exp(move(b, z, w))))
		}))
	}
	return cases
}

func TestComplexMovementVJPs(t *testing.T) { runFD(t, complexMovementCases(t)) }

// elementScatter scatters single elements of a rank-2 operand: full index vectors.
var elementScatter = hlo.ScatterDims{InsertedWindowDims: []int64{0, 1}, ScatterDimsToOperandDims: []int64{0, 1}, IndexVectorDim: 1}

// firstRow is w[0, :], the updates of elementScatter's three indices.
func firstRow(b *hlo.Builder, w *hlo.Instruction) *hlo.Instruction {
	return b.Reshape(b.Slice(w, []int64{0, 0}, []int64{1, 3}, nil), 3)
}

// replaceC128 is the scatter combiner (old, new) -> new on c128.
func replaceC128(t *testing.T) *hlo.Computation {
	rb := hlo.NewBuilder("replace_c128")
	rb.Parameter(hlo.Scalar(hlo.C128), "old")
	c, err := rb.BuildComputation(rb.Parameter(hlo.Scalar(hlo.C128), "new"))
	require.NoError(t, err)
	return c
}

// realLess is the sort comparator real(a) < real(b) on c128.
func realLess(t *testing.T) *hlo.Computation {
	cb := hlo.NewBuilder("real_less")
	a := cb.Parameter(hlo.Scalar(hlo.C128), "a")
	c := cb.Parameter(hlo.Scalar(hlo.C128), "b")
	comp, err := cb.BuildComputation(cb.Compare(cb.Unary(hlo.OpReal, a), cb.Unary(hlo.OpReal, c), hlo.CmpLT))
	require.NoError(t, err)
	return comp
}

// TestComplexConditionalVJP: a conditional whose branches take and return
// complex values (exp(z) or z·w), each branch selected in turn.
func TestComplexConditionalVJP(t *testing.T) {
	c128 := hlo.MakeShape(hlo.C128, 2, 3)
	branch := func(name string, f func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction) *hlo.Computation {
		b := hlo.NewBuilder(name)
		p := b.Parameter(hlo.MakeTuple(c128, c128), "zw")
		c, err := b.BuildComputation(f(b, b.GetTupleElement(p, 0), b.GetTupleElement(p, 1)))
		require.NoError(t, err)
		return c
	}
	exp := branch("exp", func(b *hlo.Builder, z, _ *hlo.Instruction) *hlo.Instruction { return b.Exp(z) })
	mul := branch("mul", func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction { return b.Mul(z, w) })
	var cases []fdCase
	for k, name := range []string{"exp", "multiply"} {
		cases = append(cases, complexCase("c128 conditional "+name, func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
			arg := b.Tuple(z, w)
			return complexParts(b, b.Conditional(b.ScalarConstant(hlo.S32, float64(k)), []*hlo.Computation{exp, mul}, []*hlo.Instruction{arg, arg}))
		}))
	}
	runFD(t, cases)
}

// TestComplexWhileVJP: a while loop carrying a complex state (z ← z·w + sin z,
// three times, w loop-invariant): its stacking loop and backward loop move and
// differentiate complex values by the rules above.
func TestComplexWhileVJP(t *testing.T) {
	c128 := hlo.MakeShape(hlo.C128, 2, 3)
	state := hlo.MakeTuple(hlo.MakeShape(hlo.S32), c128, c128)
	cb := hlo.NewBuilder("cond")
	p := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(p, 0), cb.ScalarConstant(hlo.S32, 3), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("body")
	q := bb.Parameter(state, "s")
	i, z, w := bb.GetTupleElement(q, 0), bb.GetTupleElement(q, 1), bb.GetTupleElement(q, 2)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), bb.Add(bb.Mul(z, w), bb.Sin(z)), w))
	require.NoError(t, err)
	runFD(t, []fdCase{complexCase("c128 while", func(b *hlo.Builder, z, w *hlo.Instruction) *hlo.Instruction {
		out := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), z, b.Mul(w, b.BroadcastScalar(b.ScalarConstant(hlo.C128, 0.5), 2, 3))))
		return complexParts(b, b.GetTupleElement(out, 1))
	})})
}

func TestComplexVJPs(t *testing.T) { runFD(t, complexCases(t)) }

// TestGradOfComplexParameter: the gradient of a real function of a complex
// parameter is JAX's ∂f/∂x − i·∂f/∂y: for |z|² = x² + y² at 3+4i, 6−8i; for
// real(z²) = x² − y², 2x + 2yi = 6+8i.
func TestGradOfComplexParameter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction
		want  complex128
	}{
		{"abs squared", func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			a := b.Abs(z)
			return b.Mul(a, a)
		}, complex(6, -8)},
		{"real of square", func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			return b.Unary(hlo.OpReal, b.Mul(z, z))
		}, complex(6, 8)},
		{"real of power 2", func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			return b.Unary(hlo.OpReal, b.Pow(z, b.ScalarConstant(hlo.C128, 2)))
		}, complex(6, 8)},
		// imag(sign z) = y/|z|: ∂x = −xy/|z|³ = −12/125, ∂y = x²/|z|³ = 9/125.
		{"imag of sign", func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			return b.Unary(hlo.OpImag, b.Sign(z))
		}, complex(-12.0/125, -9.0/125)},
		// power in its exponent: real(2^z) = 2^x·cos(y·ln 2), so
		// ∂x = ln 2·2^x·cos(y ln 2), ∂y = −ln 2·2^x·sin(y ln 2).
		{"real of 2 to the z", func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			return b.Unary(hlo.OpReal, b.Pow(b.ScalarConstant(hlo.C128, 2), z))
		}, complex(math.Ln2*8*math.Cos(4*math.Ln2), math.Ln2*8*math.Sin(4*math.Ln2))},
	} {
		b := hlo.NewBuilder(tc.name)
		m, err := b.Build(tc.build(b, b.Parameter(hlo.Scalar(hlo.C128), "z")))
		require.NoError(t, err)
		g, err := Grad(m, []int{0}, nil)
		require.NoError(t, err, tc.name)
		out, err := cpuref.Eval(g, hlo.ScalarLiteral(complex(3.0, 4)))
		require.NoError(t, err)
		assert.InDelta(t, real(tc.want), real(out.Complex128(0)), 1e-12, tc.name)
		assert.InDelta(t, imag(tc.want), imag(out.Complex128(0)), 1e-12, tc.name)
	}
}

// TestComplexSignGradAtZero: sign's gradient at z = 0 is 0, as abs's, not NaN.
func TestComplexSignGradAtZero(t *testing.T) {
	b := hlo.NewBuilder("sign_at_zero")
	z := b.Parameter(hlo.MakeShape(hlo.C128, 2), "z")
	m, err := b.Build(b.Unary(hlo.OpImag, b.Reduce([]*hlo.Instruction{b.Sign(z)},
		[]*hlo.Instruction{b.ScalarConstant(hlo.C128, 0)}, b.Reducer(hlo.OpAdd, hlo.C128), []int64{0})))
	require.NoError(t, err)
	g, err := Grad(m, []int{0}, nil)
	require.NoError(t, err)
	zs, err := hlo.FromSlice([]int64{2}, []complex128{0, complex(3, 4)})
	require.NoError(t, err)
	out, err := cpuref.Eval(g, zs)
	require.NoError(t, err)
	assert.Equal(t, complex128(0), out.Complex128(0))
	assert.InDelta(t, -12.0/125, real(out.Complex128(1)), 1e-15)
	assert.InDelta(t, -9.0/125, imag(out.Complex128(1)), 1e-15)
}

// TestComplexWithoutRuleIsRefused: an op with no complex rule on the path is an
// error naming it, not a zero gradient: select-and-scatter (max pooling's
// gradient; max has no complex form) and a reduce-window that multiplies.
func TestComplexWithoutRuleIsRefused(t *testing.T) {
	for name, f := range map[string]func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction{
		"select-and-scatter": func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			sb := hlo.NewBuilder("real_ge")
			l := sb.Parameter(hlo.Scalar(hlo.C128), "a")
			r := sb.Parameter(hlo.Scalar(hlo.C128), "b")
			sel, err := sb.BuildComputation(sb.Compare(sb.Unary(hlo.OpReal, l), sb.Unary(hlo.OpReal, r), hlo.CmpGE))
			require.NoError(t, err)
			src := b.Slice(z, []int64{0}, []int64{1}, nil)
			return b.SelectAndScatter(z, src, b.ScalarConstant(hlo.C128, 0), sel, b.Reducer(hlo.OpAdd, hlo.C128),
				[]hlo.WindowDim{{Size: 3, Stride: 3, WindowDilation: 1, BaseDilation: 1}})
		},
		"reduce-window multiply": func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction {
			return b.ReduceWindow([]*hlo.Instruction{z}, []*hlo.Instruction{b.ScalarConstant(hlo.C128, 1)},
				b.Reducer(hlo.OpMultiply, hlo.C128), []hlo.WindowDim{hlo.NewWindowDim(2)})
		},
	} {
		b := hlo.NewBuilder(name)
		x := b.Parameter(hlo.MakeShape(hlo.F64, 3), "x")
		z := b.Complex(x, x)
		out := f(b, z)
		if !out.Shape.DType.IsFloat() {
			out = b.Unary(hlo.OpReal, out)
		}
		m, err := b.Build(out)
		require.NoError(t, err, name)
		_, err = VJP(m, []int{0}, nil)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, hlo.ErrUnsupported), "%s: %v", name, err)
		assert.ErrorContains(t, err, "complex", name)
	}
}
