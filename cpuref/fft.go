package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// evalFft is XLA's fft (hlo/op_fft.go): a discrete Fourier transform over the last
// len(fft_length) dimensions, computed in complex128 whatever the element type and
// rounded once to it. Each transformed dimension is a batch of 1-D transforms
// (fft_plan.go: radix-2 for powers of two, Bluestein's chirp-z for other lengths,
// so O(n log n) for every n). IFFT and IRFFT scale by 1/n per dimension. RFFT is
// the complex transform of the real operand, of which the last dimension keeps its
// n/2+1 first entries; IRFFT inverts the other dimensions first and then each line
// of the last one from its n/2+1 entries, the others being their conjugates by the
// symmetry of a real signal's transform (the imaginary parts of entry 0 and, for
// even n, n/2 are so ignored, as pocketfft and XLA's CPU back end do).
func evalFft(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, t, n := ops[0], in.Attrs.FftType, in.Attrs.FftLength
	if err := hlo.CheckShape(hlo.OpFft, []hlo.Shape{x.Shape()}, &in.Attrs, nil, in.Shape); err != nil {
		return nil, err
	}
	dims := x.Shape().Dims
	lead := len(dims) - len(n)
	data := complexValues(x)
	plans := fftPlans{}
	switch t {
	case hlo.FFT, hlo.IFFT:
		for a := lead; a < len(dims); a++ {
			transformAxis(data, dims, a, plans.get(int(dims[a])), t == hlo.IFFT)
		}
	case hlo.RFFT:
		for a := lead; a < len(dims); a++ {
			transformAxis(data, dims, a, plans.get(int(dims[a])), false)
		}
		data = truncateLast(data, dims, in.Shape.Dims[len(dims)-1])
	case hlo.IRFFT:
		for a := lead; a < len(dims)-1; a++ {
			transformAxis(data, dims, a, plans.get(int(dims[a])), true)
		}
		last := int(n[len(n)-1])
		data = inverseRealLast(data, dims, last, plans.get(last))
	default:
		return nil, fmt.Errorf("unknown fft_type %v", t)
	}
	if err := ev.cancelled(); err != nil {
		return nil, err
	}
	return complexLiteral(in.Shape, data), nil
}

// complexValues reads every element of x as a complex128.
func complexValues(x *hlo.Literal) []complex128 {
	out := make([]complex128, x.NumElements())
	mapElements(len(out), func(i int) { out[i] = x.Complex128(i) })
	return out
}

// complexLiteral stores values in a literal of shape s: the real parts for a real
// type.
func complexLiteral(s hlo.Shape, values []complex128) *hlo.Literal {
	out := hlo.NewLiteral(s)
	if s.DType.IsComplex() {
		mapElements(len(values), func(i int) { out.SetComplex128(i, values[i]) })
	} else {
		mapElements(len(values), func(i int) { out.SetFloat64(i, real(values[i])) })
	}
	return out
}

// transformAxis transforms every line of data along axis a of dims in place
// (inverse: the scaled inverse transform).
func transformAxis(data []complex128, dims []int64, a int, p *fftPlan, inverse bool) {
	n, inner, outer := lineGeometry(dims, a)
	if n <= 1 {
		return // a transform of length 0 or 1 is the identity (1/1 scaling)
	}
	parallelFor(outer*inner, n*16, func(lo, hi int) {
		line := make([]complex128, n)
		scratch := p.scratch()
		for l := lo; l < hi; l++ {
			base := (l/inner)*n*inner + l%inner
			for k := range line {
				line[k] = data[base+k*inner]
			}
			p.transform(line, scratch, inverse)
			for k, v := range line {
				data[base+k*inner] = v
			}
		}
	})
}

// lineGeometry is the length of axis a, and the number of lines inside (the
// stride) and outside it.
func lineGeometry(dims []int64, a int) (n, inner, outer int) {
	n, inner, outer = int(dims[a]), 1, 1
	for _, d := range dims[a+1:] {
		inner *= int(d)
	}
	for _, d := range dims[:a] {
		outer *= int(d)
	}
	return n, inner, outer
}

// truncateLast keeps the first keep entries of every line of the last dimension
// (a line of length 0 has one entry, 0: the empty sum).
func truncateLast(data []complex128, dims []int64, keep int64) []complex128 {
	n, _, lines := lineGeometry(dims, len(dims)-1)
	out := make([]complex128, lines*int(keep))
	if n == 0 {
		return out
	}
	for l := 0; l < lines; l++ {
		copy(out[l*int(keep):(l+1)*int(keep)], data[l*n:l*n+int(keep)])
	}
	return out
}

// inverseRealLast is IRFFT's last dimension: each line of n/2+1 entries is
// completed by conjugate symmetry to n entries, inverted, and its real parts kept.
func inverseRealLast(data []complex128, dims []int64, n int, p *fftPlan) []complex128 {
	half, _, lines := lineGeometry(dims, len(dims)-1)
	out := make([]complex128, lines*n)
	parallelFor(lines, n*16, func(lo, hi int) {
		scratch := p.scratch()
		for l := lo; l < hi; l++ {
			line, src := out[l*n:(l+1)*n], data[l*half:(l+1)*half]
			for k := range line {
				if k < half {
					line[k] = src[k]
				} else {
					line[k] = conj(src[n-k])
				}
			}
			p.transform(line, scratch, true)
			for k, v := range line {
				line[k] = complex(real(v), 0)
			}
		}
	})
	return out
}

func conj(z complex128) complex128 { return complex(real(z), -imag(z)) }
