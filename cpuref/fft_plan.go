package cpuref

import (
	"math"
	"math/bits"
)

// One-dimensional discrete Fourier transforms of any length in O(n log n):
// iterative radix-2 for powers of two, Bluestein's chirp-z transform for the
// others (a length-n DFT is a convolution with the chirp e^{−iπk²/n}, computed
// with power-of-two transforms of length ≥ 2n−1). The twiddle factors are computed
// directly by sin and cos of their angles, not by recurrence, so the error grows
// with log n only.

// fftPlan holds what a length's transforms share: twiddles, or Bluestein's chirp
// and the transform of its convolution kernel.
type fftPlan struct {
	n       int
	twiddle []complex128 // radix-2: e^{−2πik/n}, k < n/2
	// Bluestein: chirp[k] = e^{−iπk²/n}; kernel is the transform of the
	// convolution kernel, of the power-of-two length sub.n.
	chirp, kernel []complex128
	sub           *fftPlan
}

// fftPlans caches the plans of one evaluation by length.
type fftPlans map[int]*fftPlan

func (ps fftPlans) get(n int) *fftPlan {
	if p, ok := ps[n]; ok {
		return p
	}
	p := newFftPlan(n)
	ps[n] = p
	return p
}

func isPowerOfTwo(n int) bool { return n > 0 && n&(n-1) == 0 }

func newFftPlan(n int) *fftPlan {
	p := &fftPlan{n: n}
	if n <= 1 {
		return p
	}
	if isPowerOfTwo(n) {
		p.twiddle = make([]complex128, n/2)
		for k := range p.twiddle {
			p.twiddle[k] = unitRoot(-2*float64(k), float64(n))
		}
		return p
	}
	m := 1 << bits.Len(uint(2*n-2)) // the least power of two ≥ 2n−1
	p.sub = newFftPlan(m)
	p.chirp = make([]complex128, n)
	for k := range p.chirp {
		// k² mod 2n keeps the angle small and exact: e^{−iπk²/n} has period 2n in k².
		p.chirp[k] = unitRoot(-float64(uint64(k)*uint64(k)%uint64(2*n)), float64(n))
	}
	p.kernel = make([]complex128, m)
	p.kernel[0] = conj(p.chirp[0])
	for k := 1; k < n; k++ {
		p.kernel[k] = conj(p.chirp[k])
		p.kernel[m-k] = conj(p.chirp[k])
	}
	p.sub.radix2(p.kernel, false)
	return p
}

// unitRoot is e^{iπ·num/den}.
func unitRoot(num, den float64) complex128 {
	s, c := math.Sincos(math.Pi * num / den)
	return complex(c, s)
}

// scratch is the working memory one goroutine's transforms of this plan need.
func (p *fftPlan) scratch() []complex128 {
	if p.sub == nil {
		return nil
	}
	return make([]complex128, p.sub.n)
}

// transform replaces x (of length p.n) by its DFT, or by its inverse scaled by 1/n.
func (p *fftPlan) transform(x, scratch []complex128, inverse bool) {
	if p.n <= 1 {
		return
	}
	if inverse { // the inverse is the conjugate of the forward transform of the conjugate
		for i, v := range x {
			x[i] = conj(v)
		}
	}
	if p.sub == nil {
		p.radix2(x, false)
	} else {
		p.bluestein(x, scratch)
	}
	if inverse {
		scale := 1 / float64(p.n)
		for i, v := range x {
			x[i] = complex(real(v)*scale, -imag(v)*scale)
		}
	}
}

// radix2 is the in-place iterative Cooley–Tukey transform (forward; inverse
// without scaling when conjugate is set).
func (p *fftPlan) radix2(x []complex128, conjugate bool) {
	n := p.n
	shift := 64 - bits.Len(uint(n-1))
	for i := range x { // bit-reversal permutation
		if j := int(bits.Reverse64(uint64(i)) >> shift); i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := 0; k < half; k++ {
				w := p.twiddle[k*step]
				if conjugate {
					w = conj(w)
				}
				a, b := x[start+k], complexMul(w, x[start+k+half])
				x[start+k], x[start+k+half] = a+b, a-b
			}
		}
	}
}

// bluestein is the forward DFT of x as the convolution of x·chirp with the
// conjugate chirp, times the chirp.
func (p *fftPlan) bluestein(x, work []complex128) {
	for k := range work {
		work[k] = 0
	}
	for k, v := range x {
		work[k] = complexMul(v, p.chirp[k])
	}
	p.sub.radix2(work, false)
	for k, v := range work {
		work[k] = complexMul(v, p.kernel[k])
	}
	p.sub.radix2(work, true)
	scale := 1 / float64(p.sub.n)
	for k := range x {
		v := complexMul(work[k], p.chirp[k])
		x[k] = complex(real(v)*scale, imag(v)*scale)
	}
}
