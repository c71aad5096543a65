package codegen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// fft (hlo/op_fft.go) on c64 and c128 runs as Stockham autosort passes of radix 16 (the
// last of a line 8, 4 or 2 where log2 n is not a multiple of 4: fftRadix), one
// dispatch per pass: the pass of radix r
// and stride s (the product of the radices before it) along a length-n axis reads
// every line of its source buffer and writes every line of its destination, one
// invocation per butterfly
//
//	a_j = x[q + s·(p + j·n/(r·s))], j < r
//	y[q + s·(r·p + k)] = w^{s·p·k} · Σ_j a_j·e^{∓2πi·jk/r}, w = e^{∓2πi/n}
//
// for p < n/(r·s), q < s: after the passes (s = 1, 16, 256, …) each line is its
// transform in natural order (no bit reversal). A multi-dimensional transform is
// these passes along each transformed axis in turn (a strided axis is read at its
// stride: consecutive invocations take consecutive inner elements). The first
// pass reads the operand, the last writes the result; the passes between
// ping-pong between the output (where it can hold a complex intermediate) and one
// or two scratch buffers (assignBuffers). The r-point DFT of a butterfly is
// computed in registers (fftButterfly); a larger radix moves the array fewer
// times (4096 points: 3 passes, where radix 2 takes 12).
//
// The real transforms shrink or grow the last axis: RFFT transforms the last axis
// first, from the real operand, and its last pass keeps the n/2+1 first entries
// of each line, so that the other axes transform the halved array; IRFFT
// transforms the other axes of its halved operand first, and the first pass of the
// last axis reads entry j ≥ n/2+1 as the conjugate of entry n−j (cpuref's
// completion by conjugate symmetry), and its last pass keeps the real parts.
// The inverse transforms use the conjugate twiddles, and their last pass scales by
// 1/∏n (a power of two: exact).
//
// Twiddles are computed in each butterfly, not read from a table: for k a power
// of two, the angle 2π·s·p·k/n is reduced exactly, in integers, by the
// symmetries of the circle to [0, π/4], where sine and cosine are Taylor
// polynomials accurate to below half an ulp (fftRoot), so that twiddle is within
// about 1 ulp; the others are products of those (fftTwiddles: within about 4
// ulp).
//
// A length N that is not a power of two runs as Bluestein's chirp-z transform,
// as cpuref does: with chirp_k = e^{∓iπk²/N}, X_k = chirp_k·Σ_j (x_j·chirp_j)·
// conj(chirp_{k−j}), a circular convolution of length m ≥ 2N−1 (a power of two)
// computed as the inverse transform of the product of two forward ones. Along
// such an axis the passes are those of length m: the first reads x_j·chirp_j (0
// for j ≥ N), the first inverse pass multiplies by K̂, the transform of the
// conjugate chirp (a scratch buffer that dispatches before the transform compute
// once per length: fftSpec.pre), and the last writes the N first entries times
// chirp_k/m. Chirp angles are π·(k² mod 2N)/N, reduced exactly in integers
// (fftRoot).

// fftPass is one dispatch: the radix-r butterflies of stride s along axis, of
// line length n, or (gen) the writing of Bluestein's convolution kernel. The
// axis has extent dims[axis] = n in the pass's logical array, srcExt in the
// source buffer and dstExt in the destination (the other extents agree).
type fftPass struct {
	axis             int
	n, s, radix      int64
	dims             []int64
	srcExt, dstExt   int64
	trueN            int64 // the axis' transform length: n, or Bluestein's N
	complete         bool  // IRFFT: the source holds the trueN/2+1 first entries; entry j beyond is conj(entry trueN−j)
	chirpIn          bool  // Bluestein's first pass: entry j is x_j·chirp_j, 0 for j ≥ trueN
	chirpOut         bool  // Bluestein's last pass: entry k < trueN is written times chirp_k
	chirpInverse     bool  // Bluestein's chirp is e^{+iπk²/N} (inverse transforms)
	hasKernel        bool  // Bluestein's first inverse pass: entry j is multiplied by K̂_j (kernel)
	gen              bool  // the dispatch writing Bluestein's convolution kernel of length n for trueN
	src, dst, kernel Arg
	readReal         bool    // the source is the real operand
	writeReal        bool    // the destination is the real output
	scale            float64 // a factor of the written values, or 0 for none
	inverse          bool    // conjugate twiddles
	fromOperand      bool    // the first pass: it reads the program's operand
}

// fftSpec is the dispatches of an fft and the scratch buffers' sizes: pre, the
// transforms of Bluestein's kernels (one per length that is not a power of two),
// then passes, the transform itself.
type fftSpec struct {
	pre, passes []fftPass
	scratch     []int64
	// fill: the operand is empty and the result is not (RFFT of length 0): the
	// result is zeros. direct: no axis has a length above 1, and the result is the
	// operand converted to its type.
	fill, direct bool
	// elem is the bytes of a complex element of the intermediates: 8 (c64) or
	// 16 (c128).
	elem int64
}

// fftMaxRadix is the largest radix of a pass: a 16-point DFT in registers.
// 4096 points take 3 passes (radix 4: 6; radix 2: 12), each moving the array
// once; on lavapipe radix 16 ran 1.9× radix 4's speed, and radix 4 2× radix 2's
// (docs/results.md, "GPU FFT (issue 21)").
const fftMaxRadix = 16

// fftRadix is the radix of the next pass when rest points remain to combine:
// fftMaxRadix while they allow, else what is left (8, 4 or 2).
func fftRadix(rest int64) int64 { return min(fftMaxRadix, rest) }

// fftMaxChirp32 is the largest Bluestein length whose k² (k < N) fits 32-bit
// index arithmetic; longer ones compute it in 64 bits.
const fftMaxChirp32 = 46340

func isPow2(n int64) bool { return n > 0 && n&(n-1) == 0 }

// bluesteinLength is m, the least power of two ≥ 2N−1.
func bluesteinLength(n int64) int64 {
	m := int64(1)
	for m < 2*n-1 {
		m *= 2
	}
	return m
}

// fftSupport says why the GPU has no kernel for an fft on t, or "".
func fftSupport(in *hlo.Instruction, t Target) string {
	for _, n := range in.Attrs.FftLength {
		if n > fftMaxChirp32 && !isPow2(n) && !t.Int64 {
			return fmt.Sprintf("has fft_length={%s}; Bluestein's chirp of length %d needs 64-bit integers (shaderInt64), which the target lacks",
				strings.Join(strings.Fields(strings.Trim(fmt.Sprint(in.Attrs.FftLength), "[]")), ","), n)
		}
	}
	return ""
}

// withExtent is dims with dims[a] = e.
func withExtent(dims []int64, a int, e int64) []int64 {
	out := append([]int64(nil), dims...)
	out[a] = e
	return out
}

// planFFT decides the dispatches of root, an fft of c64 or c128 (f32 or f64 for
// RFFT's operand and IRFFT's result). Lower and Facts share it.
func planFFT(root *hlo.Instruction, target Target) (fftSpec, error) {
	if why := fftSupport(root, target); why != "" {
		return fftSpec{}, fmt.Errorf("%w: %s (fft) %s", hlo.ErrUnsupported, root.Name, why)
	}
	x := root.Operands[0].Shape
	t, lengths := root.Attrs.FftType, root.Attrs.FftLength
	spec := fftSpec{elem: int64(fftComplexType(root).Size())}
	switch {
	case root.Shape.NumElements() == 0:
		return spec, nil
	case x.NumElements() == 0:
		spec.fill = true
		return spec, nil
	}
	last := x.Rank() - 1
	full := withExtent(x.Dims, last, lengths[len(lengths)-1])
	half := full[last]/2 + 1
	cur := append([]int64(nil), full...) // the extents of the data the next pass reads
	if t == hlo.IRFFT {
		cur[last] = half
	}
	inverse := t == hlo.IFFT || t == hlo.IRFFT
	scale := 1.0
	for _, a := range fftAxes(t, x.Rank()-len(lengths), last) {
		n := full[a]
		if n < 2 {
			continue
		}
		scale /= float64(n)
		out := n
		if t == hlo.RFFT && a == last {
			out = half
		}
		first := len(spec.passes)
		if isPow2(n) {
			spec.passes = append(spec.passes, fftAxisPasses(a, n, withExtent(cur, a, n), inverse)...)
		} else {
			spec.passes = append(spec.passes, bluesteinPasses(a, n, withExtent(cur, a, bluesteinLength(n)), inverse)...)
		}
		spec.passes[first].srcExt = cur[a]
		spec.passes[first].complete = t == hlo.IRFFT && a == last && cur[a] < n
		spec.passes[len(spec.passes)-1].dstExt = out
		cur[a] = out
	}
	if len(spec.passes) == 0 {
		spec.direct = true
		return spec, nil
	}
	spec.passes[0].fromOperand = true
	spec.passes[0].readReal = t == hlo.RFFT
	end := &spec.passes[len(spec.passes)-1]
	end.writeReal = t == hlo.IRFFT
	if inverse {
		if end.scale == 0 { // no factor yet (a Bluestein last pass has 1/m)
			end.scale = 1
		}
		end.scale *= scale
	}
	spec.assignBuffers(root.Shape)
	return spec, nil
}

// fftAxes is the order in which the transformed axes lead..last are processed:
// RFFT the last first (from the real operand), then the others on the halved
// array; IRFFT the others on its halved operand, then the last; FFT and IFFT in
// order.
func fftAxes(t hlo.FftType, lead, last int) []int {
	var axes []int
	if t == hlo.RFFT {
		axes = append(axes, last)
		for a := lead; a < last; a++ {
			axes = append(axes, a)
		}
		return axes
	}
	for a := lead; a <= last; a++ {
		axes = append(axes, a)
	}
	return axes
}

// fftAxisPasses are the passes of a power-of-two length n along axis a of dims.
func fftAxisPasses(a int, n int64, dims []int64, inverse bool) []fftPass {
	var ps []fftPass
	for s, r := int64(1), int64(0); s < n; s *= r {
		r = fftRadix(n / s)
		ps = append(ps, fftPass{axis: a, n: n, s: s, radix: r, dims: dims, srcExt: n, dstExt: n, trueN: n, inverse: inverse})
	}
	return ps
}

// bluesteinPasses are the passes of a length N that is not a power of two along
// axis a, whose logical extent in dims is m: forward passes of length m from
// x·chirp, inverse ones from their product with K̂, the last writing times the
// chirp and 1/m.
func bluesteinPasses(a int, n int64, dims []int64, inverse bool) []fftPass {
	m := dims[a]
	fwd, inv := fftAxisPasses(a, m, dims, false), fftAxisPasses(a, m, dims, true)
	for i := range fwd {
		fwd[i].trueN, fwd[i].chirpInverse = n, inverse
	}
	for i := range inv {
		inv[i].trueN, inv[i].chirpInverse = n, inverse
	}
	fwd[0].chirpIn = true
	inv[0].hasKernel = true
	end := &inv[len(inv)-1]
	end.chirpOut, end.scale = true, 1/float64(m)
	return append(fwd, inv...)
}

// assignBuffers picks every dispatch's buffers: the transform's (fftChain into
// the output), then each Bluestein kernel's chain into a scratch buffer of its
// own, its intermediates in scratch buffer 0 (its dispatches run first).
func (s *fftSpec) assignBuffers(out hlo.Shape) {
	outArg := Arg{Kind: ArgOutput, Index: 0}
	outBytes := int64(-1)
	if out.DType.IsComplex() {
		outBytes = out.ByteSize()
	}
	s.fftChain(s.passes, outArg, outBytes)
	s.passes[0].src = Arg{Kind: ArgInput, Index: 0}
	kernels := map[int64]Arg{}
	for i, p := range s.passes {
		if !p.hasKernel {
			continue
		}
		k, ok := kernels[p.trueN]
		if !ok {
			k = s.bluesteinKernel(p.trueN, p.n, p.chirpInverse)
			kernels[p.trueN] = k
		}
		s.passes[i].kernel = k
	}
}

// bluesteinKernel appends the dispatches computing K̂ for length n (convolution
// length m) into a new scratch buffer, and returns it.
func (s *fftSpec) bluesteinKernel(n, m int64, inverse bool) Arg {
	if len(s.scratch) == 0 {
		s.scratch = append(s.scratch, 0) // scratch 0: the chain's intermediates
	}
	k := Arg{Kind: ArgScratch, Index: len(s.scratch)}
	s.scratch = append(s.scratch, m*s.elem)
	dims := []int64{m}
	chain := append([]fftPass{{gen: true, n: m, dims: dims, dstExt: m, trueN: n, chirpInverse: inverse}},
		fftAxisPasses(0, m, dims, false)...)
	s.fftChain(chain, k, m*s.elem)
	s.pre = append(s.pre, chain...)
	return k
}

// fftChain picks each dispatch's destination backwards from the chain's end,
// which writes final: a dispatch must not write the buffer the next one writes
// (which reads what it wrote). final takes an intermediate where it is large
// enough (finalBytes; −1: never); scratch buffers 0 and 1 the others, each as
// large as its largest use. Each dispatch's source is the previous one's
// destination.
func (s *fftSpec) fftChain(ps []fftPass, final Arg, finalBytes int64) {
	next := final
	ps[len(ps)-1].dst = final
	for i := len(ps) - 2; i >= 0; i-- {
		bytes := product(withExtent(ps[i].dims, ps[i].axis, ps[i].dstExt)) * s.elem
		dst := final
		if next == final || bytes > finalBytes {
			dst = s.scratchOtherThan(next, bytes)
		}
		ps[i].dst = dst
		next = dst
	}
	for i := 1; i < len(ps); i++ {
		ps[i].src = ps[i-1].dst
	}
}

// scratchOtherThan is scratch buffer 0 or 1, other than avoid, grown to bytes.
func (s *fftSpec) scratchOtherThan(avoid Arg, bytes int64) Arg {
	i := 0
	if avoid == (Arg{Kind: ArgScratch, Index: 0}) {
		i = 1
	}
	for len(s.scratch) <= i {
		s.scratch = append(s.scratch, 0)
	}
	s.scratch[i] = max(s.scratch[i], bytes)
	return Arg{Kind: ArgScratch, Index: i}
}

// passArgs are the arguments a dispatch binds after the program's inputs: its
// source (unless the operand, or none), Bluestein's kernel where it reads it, and
// its destination.
func (p fftPass) passArgs() []Arg {
	var args []Arg
	if !p.fromOperand && !p.gen {
		args = append(args, p.src)
	}
	if p.hasKernel {
		args = append(args, p.kernel)
	}
	return append(args, p.dst)
}

// name is the dispatch's kernel name suffix.
func (p fftPass) name() string {
	if p.gen {
		return fmt.Sprintf("fft_chirp%d", p.trueN)
	}
	return fmt.Sprintf("fft%d_d%d_s%d", p.radix, p.axis, bits.TrailingZeros64(uint64(p.s)))
}

// fftFacts are the dispatches' facts (facts.go).
func (l *lowering) fftFacts() error {
	spec, err := planFFT(l.c.Root, l.t)
	if err != nil {
		return err
	}
	l.p.Scratch = append(l.p.Scratch, spec.scratch...)
	switch {
	case spec.fill:
		l.dispatchFact("fft_zero", l.outputArgs())
	case spec.direct:
		l.dispatchFact("fft_copy", l.outputArgs())
	}
	for _, p := range append(spec.pre, spec.passes...) {
		l.dispatchFact(p.name(), p.passArgs())
	}
	return nil
}
