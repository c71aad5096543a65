package autodiff

import (
	"errors"
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
	)
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

// TestComplexWithoutRuleIsRefused: an op with no complex rule on the path is an
// error naming it, not a zero gradient.
func TestComplexWithoutRuleIsRefused(t *testing.T) {
	for name, f := range map[string]func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction{
		"power": func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction { return b.Pow(z, z) },
		"sign":  func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction { return b.Sign(z) },
		"irfft": func(b *hlo.Builder, z *hlo.Instruction) *hlo.Instruction { return b.Fft(z, hlo.IRFFT, 4) },
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
	}
}
