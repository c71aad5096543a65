package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// The VJPs of fft, by docs/complex.md's definitions and the convention of
// rules_complex.go: a complex cotangent c of a value w pairs with a change dw as
// dL = Re Σ c·dw (no conjugation), so a C-linear map's rule is its transpose and a
// map between real and complex values folds in the real part or a conjugate.
//
//	FFT, IFFT  the DFT matrix (unscaled, or conjugated and scaled by 1/N) is
//	           symmetric: ct ↦ the same transform of ct.
//	RFFT       X = the first n/2+1 bins of FFT(x), x real:
//	           ct_x[j] = Re Σ_{k<n/2+1} ct[k]·e^{−2πi·jk/n}
//	           = N·IRFFT(conj(ct)/w) with IRFFT's bin weights w below.
//	IRFFT      y[j] = (1/N)·Re Σ_k w_k·Y[k]·e^{+2πi·jk/n}, where the
//	           interior bins 1 … ⌈n/2⌉−1 stand for themselves and their conjugate
//	           mirrors (w = 2) and DC and, for even n, Nyquist (w = 1) are read by
//	           their real part only; so ct_Y[k] = (w_k/N)·Σ_j ct[j]·e^{+2πi·jk/n}
//	           = (w_k/N)·conj(RFFT(ct)[k]), ct real. The dimensions before the
//	           last are a plain (symmetric) inverse transform and fold into the
//	           same RFFT. Its imaginary parts at DC and Nyquist come out 0: IRFFT
//	           ignores them.
//
// N is the product of the lengths; a length of 0 leaves nothing to transform and
// the gradient is zero.
var fftRow = arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	a := n.orig.Attrs
	x := n.args[0]
	switch {
	case a.FftType != hlo.FFT && a.FftType != hlo.IFFT && a.FftType != hlo.RFFT && a.FftType != hlo.IRFFT:
		return nil, fmt.Errorf("fft_type %v has no VJP rule: %w", a.FftType, hlo.ErrUnsupported)
	case fftPoints(a.FftLength) == 0:
		return one(e.zeros(x.Shape)), nil
	case a.FftType == hlo.RFFT:
		return one(rfftTranspose(e, ct, a.FftLength)), nil
	case a.FftType == hlo.IRFFT:
		return one(irfftTranspose(e, ct, a.FftLength)), nil
	}
	return one(e.b.Fft(ct, a.FftType, a.FftLength...)), nil
})

func fftPoints(lengths []int64) int64 {
	p := int64(1)
	for _, n := range lengths {
		p *= n
	}
	return p
}

// rfftTranspose is N·IRFFT(conj(ct)/w): IRFFT reads bin k as w_k·Y[k]·e^{+…}/N
// in real part, so Y = N·conj(ct)/w gives Re Σ ct[k]·e^{−2πi·jk/n}; it transforms
// half the spectrum, where real(FFT(ct zero-padded)) would hold the whole one.
func rfftTranspose(e *engine, ct *hlo.Instruction, lengths []int64) *hlo.Instruction {
	n := float64(fftPoints(lengths))
	scale := e.b.Constant(binScales(ct.Shape.DType, lengths, n/2, n))
	last := int64(ct.Shape.Rank() - 1)
	return e.b.Fft(e.b.Mul(conjugate(e, ct), e.b.Broadcast(scale, ct.Shape.Dims, []int64{last})), hlo.IRFFT, lengths...)
}

// irfftTranspose is conj(RFFT(ct)) times the bins' weights w_k/N along the last
// dimension.
func irfftTranspose(e *engine, ct *hlo.Instruction, lengths []int64) *hlo.Instruction {
	spec := e.b.Fft(ct, hlo.RFFT, lengths...)
	if spec == nil {
		return nil // the builder holds the error
	}
	n := float64(fftPoints(lengths))
	w := e.b.Constant(binScales(spec.Shape.DType, lengths, 2/n, 1/n))
	last := int64(spec.Shape.Rank() - 1)
	return e.b.Mul(conjugate(e, spec), e.b.Broadcast(w, spec.Shape.Dims, []int64{last}))
}

// binScales is a vector over the bins k = 0 … n/2 of complex type dt: edge at DC
// and (n even) Nyquist, which stand for one bin of the full spectrum, interior at
// the others, which stand for two.
func binScales(dt hlo.DType, lengths []int64, interior, edge float64) *hlo.Literal {
	n := lengths[len(lengths)-1]
	lit := hlo.NewLiteral(hlo.MakeShape(dt, n/2+1))
	for k := range n/2 + 1 {
		v := interior
		if k == 0 || 2*k == n {
			v = edge
		}
		lit.SetComplex128(int(k), complex(v, 0))
	}
	return lit
}
