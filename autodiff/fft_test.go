package autodiff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The fft rules are checked by finite differences, as the complex ones: RFFT's
// complex result enters the real output by its two parts, IRFFT's complex operand
// is complex(x, y) of two real parameters, so that the derivatives in the
// imaginary parts of the DC and Nyquist bins (which IRFFT ignores: 0) are checked
// too. Lengths cover even and odd n, 1, 2 and 0 (nothing to transform), and 1 to
// 3 transformed dimensions with a batch dimension in front.

// halfDims are the dims of an RFFT result (IRFFT operand) of a batch of b.
func halfDims(b int64, lengths []int64) []int64 {
	d := append([]int64{b}, lengths...)
	d[len(d)-1] = d[len(d)-1]/2 + 1
	return d
}

func rfftCase(name string, lengths []int64, square bool) fdCase {
	return fdCase{name: name, params: []hlo.Shape{f64s(append([]int64{2}, lengths...)...)},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			x := ps[0]
			if square {
				x = b.Mul(x, x)
			}
			return complexParts(b, b.Fft(x, hlo.RFFT, lengths...))
		}}
}

func irfftCase(name string, lengths []int64, square bool) fdCase {
	s := f64s(halfDims(2, lengths)...)
	return fdCase{name: name, params: []hlo.Shape{s, s},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			z := b.Complex(ps[0], ps[1])
			if square {
				z = b.Mul(z, z)
			}
			return b.Fft(z, hlo.IRFFT, lengths...)
		}}
}

func fftCases() []fdCase {
	var cases []fdCase
	for _, lengths := range [][]int64{{6}, {5}, {1}, {2}, {0}, {4, 5}, {3, 6}, {2, 3, 4}, {3, 2, 5}} {
		for _, square := range []bool{false, true} {
			tag := fmt.Sprintf("%v", lengths)
			if square {
				tag += " of a square"
			}
			cases = append(cases, rfftCase("RFFT "+tag, lengths, square), irfftCase("IRFFT "+tag, lengths, square))
		}
	}
	return cases
}

func TestFftVJPs(t *testing.T) { runFD(t, fftCases()) }

// spectralConv is a Fourier layer as a neural operator has it: the rfft of x over
// its last two dims, times a complex weight per retained frequency (broadcast over
// the batch), back by irfft, plus x.
func spectralConv(b *hlo.Builder, x, w *hlo.Instruction) *hlo.Instruction {
	lengths := x.Shape.Dims[1:]
	spec := b.Fft(x, hlo.RFFT, lengths...)
	mixed := b.Mul(spec, b.Broadcast(w, spec.Shape.Dims, []int64{1, 2}))
	return b.Add(b.Fft(mixed, hlo.IRFFT, lengths...), x)
}

func spectralConvCase(n0, n1 int64) fdCase {
	ws := f64s(n0, n1/2+1)
	return fdCase{name: fmt.Sprintf("spectral conv %dx%d", n0, n1), params: []hlo.Shape{f64s(2, n0, n1), ws, ws},
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return spectralConv(b, b.Tanh(ps[0]), b.Complex(ps[1], ps[2]))
		}}
}

// TestSpectralConvVJP: the gradient in the real input and in both parts of the
// complex weight, for even and odd lengths.
func TestSpectralConvVJP(t *testing.T) {
	runFD(t, []fdCase{spectralConvCase(4, 6), spectralConvCase(3, 5)})
}

// TestSpectralConvComplexWeight: with the weight a c128 parameter, its gradient is
// JAX's ∂L/∂u − i·∂L/∂v (w = u + iv), each part checked against a central
// difference in that part.
func TestSpectralConvComplexWeight(t *testing.T) {
	const n0, n1 = 3, 4
	b := hlo.NewBuilder("spectral_conv")
	x := b.Parameter(f64s(2, n0, n1), "x")
	w := b.Parameter(hlo.MakeShape(hlo.C128, n0, n1/2+1), "w")
	m, err := b.Build(spectralConv(b, x, w))
	require.NoError(t, err)
	vjp, err := VJP(m, []int{1}, nil)
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(3, 4))
	xs := randomLiteral(r, x.Shape, -1, 1)
	ws := hlo.NewLiteral(w.Shape)
	for i := range ws.NumElements() {
		ws.SetComplex128(i, complex(2*r.Float64()-1, 2*r.Float64()-1))
	}
	ct := randomLiteral(r, m.Entry.Root.Shape, -1, 1)
	got, err := cpuref.Eval(vjp, xs, ws, ct)
	require.NoError(t, err)
	grad := got.Elems()[1]

	loss := func(wl *hlo.Literal) float64 {
		out, err := cpuref.Eval(m, xs, wl)
		require.NoError(t, err)
		var l float64
		for j := range out.NumElements() {
			l += ct.Float64(j) * out.Float64(j)
		}
		return l
	}
	diff := func(i int, step complex128) float64 {
		up, down := ws.Clone(), ws.Clone()
		up.SetComplex128(i, ws.Complex128(i)+step)
		down.SetComplex128(i, ws.Complex128(i)-step)
		return (loss(up) - loss(down)) / (2 * fdStep)
	}
	for i := range ws.NumElements() {
		want := complex(diff(i, complex(fdStep, 0)), -diff(i, complex(0, fdStep)))
		g := grad.Complex128(i)
		require.InDelta(t, real(want), real(g), fdAtol+fdRtol*math.Abs(real(want)), "element %d: %v, want %v", i, g, want)
		require.InDelta(t, imag(want), imag(g), fdAtol+fdRtol*math.Abs(imag(want)), "element %d: %v, want %v", i, g, want)
	}
}
