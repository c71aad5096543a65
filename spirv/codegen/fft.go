package codegen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// fft (hlo/op_fft.go) on c64 runs as Stockham autosort passes of radix 16 (the
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
// of two, u = s·p·k/n is exact in f32, reduced exactly by the symmetries of the
// circle to [0, 1/8], and sin and cos of 2π·u ∈ [0, π/4] are Taylor polynomials
// accurate to below half an ulp (fftTwiddle), so that twiddle is within about 1
// ulp; the others are products of those (fftTwiddles: within about 4 ulp).
//
// Lengths that are not powers of two have no kernel yet (fftSupport refuses them
// before planning).

// fftPass is one pass: the radix-r butterflies of stride s along axis, of line
// length n. Extents of the last axis: srcLast in the source buffer, last in the
// pass's logical array, dstLast in the destination (srcLast < last: IRFFT's
// completion; dstLast < last: RFFT's truncation).
type fftPass struct {
	axis                   int
	n, s, radix            int64
	dims                   []int64 // the logical (complex) array the pass transforms
	srcLast, last, dstLast int64
	src, dst               Arg
	readReal, writeReal    bool    // the source is the real operand; the destination is the real output
	scale                  float64 // the last pass of an inverse transform: 1/∏n; else 0
	inverse                bool
	fromOperand            bool // the first pass: it reads the program's operand
}

// fftSpec is the sequence of dispatches of an fft and the scratch buffers' sizes.
type fftSpec struct {
	passes  []fftPass
	scratch []int64
	// fill: the operand is empty and the result is not (RFFT of length 0): the
	// result is zeros. direct: no axis has a length above 1, and the result is the
	// operand converted to its type.
	fill, direct bool
}

// fftMaxRadix is the largest radix of a pass: a 16-point DFT in registers.
// 4096 points take 3 passes (radix 4: 6; radix 2: 12), each moving the array
// once; on lavapipe radix 16 ran 1.9× radix 4's speed, and radix 4 2× radix 2's
// (docs/results.md, "GPU FFT (issue 21)").
const fftMaxRadix = 16

// fftRadix is the radix of the next pass when rest points remain to combine:
// fftMaxRadix while they allow, else what is left (8, 4 or 2).
func fftRadix(rest int64) int64 { return min(fftMaxRadix, rest) }

// fftSupport says why the GPU has no kernel for an fft, or "".
func fftSupport(in *hlo.Instruction) string {
	for _, n := range in.Attrs.FftLength {
		if n > 1 && n&(n-1) != 0 {
			return fmt.Sprintf("has fft_length={%s}; GPU code generation transforms lengths that are powers of two only (%d is not; cpuref evaluates it)",
				strings.Join(strings.Fields(strings.Trim(fmt.Sprint(in.Attrs.FftLength), "[]")), ","), n)
		}
	}
	return ""
}

// fftLayout is a dims slice whose last extent is last.
func fftLayout(dims []int64, last int64) []int64 {
	out := append([]int64(nil), dims...)
	out[len(out)-1] = last
	return out
}

// planFFT decides the passes of root, an fft of c64 (f32 for RFFT's operand and
// IRFFT's result) with power-of-two lengths. Lower and Facts share it.
func planFFT(root *hlo.Instruction) (fftSpec, error) {
	if why := fftSupport(root); why != "" {
		return fftSpec{}, fmt.Errorf("%w: %s (fft) %s", hlo.ErrUnsupported, root.Name, why)
	}
	x := root.Operands[0].Shape
	t, lengths := root.Attrs.FftType, root.Attrs.FftLength
	spec := fftSpec{}
	switch {
	case root.Shape.NumElements() == 0:
		return spec, nil
	case x.NumElements() == 0:
		spec.fill = true
		return spec, nil
	}
	rank := x.Rank()
	lead := rank - len(lengths)
	last := rank - 1
	full := fftLayout(x.Dims, lengths[len(lengths)-1])
	half := full[last]/2 + 1
	var axes []int
	cur := full[last] // the last extent of the data the next pass reads
	switch t {
	case hlo.RFFT: // the last axis first (from the real operand), then the others on the halved array
		axes = append(axes, last)
		for a := lead; a < last; a++ {
			axes = append(axes, a)
		}
	case hlo.IRFFT: // the other axes on the halved operand, then the last
		for a := lead; a <= last; a++ {
			axes = append(axes, a)
		}
		cur = half
	default:
		for a := lead; a <= last; a++ {
			axes = append(axes, a)
		}
	}
	inverse := t == hlo.IFFT || t == hlo.IRFFT
	scale := 1.0
	for _, a := range axes {
		n := full[a]
		if n < 2 {
			continue
		}
		scale /= float64(n)
		logical := cur
		if a == last {
			logical = full[last]
		}
		for s, r := int64(1), int64(0); s < n; s *= r {
			r = fftRadix(n / s)
			p := fftPass{axis: a, n: n, s: s, radix: r, srcLast: cur, last: logical, dstLast: logical, inverse: inverse}
			if t == hlo.RFFT && a == last && r*s == n {
				p.dstLast = half
			}
			p.dims = fftLayout(full, logical)
			spec.passes = append(spec.passes, p)
			cur = p.dstLast
		}
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
		end.scale = scale
	}
	spec.assignBuffers(full, root.Shape)
	return spec, nil
}

// assignBuffers picks each pass's destination backwards from the output: a pass
// must not write the buffer the next pass writes (which reads what it wrote). The
// output takes an intermediate where it is a complex array large enough; scratch
// buffers the others, each as large as its largest use.
func (s *fftSpec) assignBuffers(full []int64, out hlo.Shape) {
	outArg := Arg{Kind: ArgOutput, Index: 0}
	outBytes := int64(-1)
	if out.DType == hlo.C64 {
		outBytes = out.ByteSize()
	}
	next := outArg
	ps := s.passes
	ps[len(ps)-1].dst = outArg
	for i := len(ps) - 2; i >= 0; i-- {
		bytes := product(fftLayout(full, ps[i].dstLast)) * 8
		dst := outArg
		if next == outArg || bytes > outBytes {
			dst = s.scratchOtherThan(next, bytes)
		}
		ps[i].dst = dst
		next = dst
	}
	ps[0].src = Arg{Kind: ArgInput, Index: 0}
	for i := 1; i < len(ps); i++ {
		ps[i].src = ps[i-1].dst
	}
}

// scratchOtherThan is a scratch buffer other than avoid, grown to bytes.
func (s *fftSpec) scratchOtherThan(avoid Arg, bytes int64) Arg {
	for i := range 2 {
		a := Arg{Kind: ArgScratch, Index: i}
		if a == avoid {
			continue
		}
		for len(s.scratch) <= i {
			s.scratch = append(s.scratch, 0)
		}
		s.scratch[i] = max(s.scratch[i], bytes)
		return a
	}
	panic("unreachable")
}

// passArgs are the arguments a pass binds after the program's inputs: its source
// (unless the operand) and its destination.
func (p fftPass) passArgs() []Arg {
	if p.src.Kind == ArgInput {
		return []Arg{p.dst}
	}
	return []Arg{p.src, p.dst}
}

// name is the pass's kernel name suffix.
func (p fftPass) name() string {
	return fmt.Sprintf("fft%d_d%d_s%d", p.radix, p.axis, bits.TrailingZeros64(uint64(p.s)))
}

// fftFacts are the dispatches' facts (facts.go).
func (l *lowering) fftFacts() error {
	spec, err := planFFT(l.c.Root)
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
	for _, p := range spec.passes {
		l.dispatchFact(p.name(), p.passArgs())
	}
	return nil
}
