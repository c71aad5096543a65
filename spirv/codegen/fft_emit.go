package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// lowerFFT emits the dispatches planFFT decides (fft.go).
func (l *lowering) lowerFFT() error {
	spec, err := planFFT(l.c.Root, l.t)
	if err != nil {
		return err
	}
	l.p.Scratch = append(l.p.Scratch, spec.scratch...)
	switch {
	case spec.fill:
		return l.fftFill()
	case spec.direct:
		return l.fftDirect()
	}
	for _, p := range append(spec.pre, spec.passes...) {
		emit := l.fftPassKernel
		if p.gen {
			emit = l.bluesteinKernelGen
		}
		if err := emit(p); err != nil {
			return err
		}
	}
	return nil
}

// fftFill writes zeros: RFFT of length 0 (one entry per line, the empty sum).
func (l *lowering) fftFill() error {
	k := l.newKernel("fft_zero", defaultLocal)
	out := l.bindOutputs(k)[0]
	cdt := fftComplexType(l.c.Root)
	k.lowerComplex(cdt)
	zero := k.makeComplex(k.partConst(0), k.partConst(0))
	return l.add(k, k.gridStride(l.p.Outputs[0].NumElements(), func(i spirv.ID) { k.store(out, i, zero, cdt) }))
}

// fftDirect is a transform whose lengths are all 1: the identity, with RFFT's
// imaginary parts of 0 and IRFFT's real parts.
func (l *lowering) fftDirect() error {
	k := l.newKernel("fft_copy", defaultLocal)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	x := l.c.Root.Operands[0]
	dt := l.p.Outputs[0].DType
	k.lowerComplex(fftComplexType(l.c.Root))
	groups := k.gridStride(l.p.Outputs[0].NumElements(), func(i spirv.ID) {
		g.scoped(func() {
			v := g.emit(x, k.delinearize(i, x.Shape.Dims))
			switch {
			case !x.Shape.DType.IsComplex():
				v = k.makeComplex(v, k.partConst(0))
			case !dt.IsComplex():
				v = k.f.CompositeExtract(v, 0)
			}
			k.store(out, i, v, dt)
		})
	})
	return l.add(k, groups)
}

// fftPassKernel emits one Stockham pass: invocation t takes butterfly b of line
// (o, i), t = (o·n/r + b)·inner + i, so that consecutive invocations read
// consecutive elements of a strided axis.
func (l *lowering) fftPassKernel(p fftPass) error {
	k := l.newKernel(p.name(), defaultLocal)
	cdt := fftComplexType(l.c.Root)
	k.lowerComplex(cdt)
	io := fftIO{p: p, inner: product(p.dims[p.axis+1:]), cdt: cdt}
	if !p.fromOperand {
		io.src = k.bind(p.src, cdt, spirv.ReadOnly)
	}
	if p.hasKernel {
		io.kernel = k.bind(p.kernel, cdt, spirv.ReadOnly)
	}
	dstDT := cdt
	if p.writeReal {
		dstDT = cdt.ComplexPart()
	}
	io.dst = k.bind(p.dst, dstDT, 0)
	io.g = l.kernelGen(k)
	io.x = l.c.Root.Operands[0]
	f := k.f
	span := p.n / p.radix // the distance between a butterfly's points
	groups := k.gridStride(product(p.dims)/p.radix, func(t spirv.ID) {
		io.g.scoped(func() {
			r, i := k.divMod(t, io.inner)
			o, b := k.divMod(r, span)
			_, q := k.divMod(b, p.s)
			a := make([]spirv.ID, p.radix)
			for j := range a {
				a[j] = io.read(k, o, f.IAdd(b, k.ic(int64(j)*span)), i)
			}
			y := k.fftButterfly(a, p.inverse)
			base := f.ISub(b, q)                            // s·p
			first := f.IAdd(q, f.IMul(base, k.ic(p.radix))) // q + s·r·p
			w := k.fftTwiddles(base, p)
			for j, v := range y {
				if j > 0 {
					v, _ = k.complexBinary(hlo.OpMultiply, cdt, v, w[j])
				}
				io.write(k, o, f.IAdd(first, k.ic(int64(j)*p.s)), i, v)
			}
		})
	})
	return l.add(k, groups)
}

// fftIO is how a pass reads and writes its lines.
type fftIO struct {
	p                fftPass
	inner            int64
	src, kernel, dst spirv.Buffer
	g                *gen
	x                *hlo.Instruction // the program's operand
	cdt              hlo.DType        // the transform's complex type
}

// load is stored entry pos of line (o, i) of the source, as a complex value.
func (io fftIO) load(k *kernel, o, pos, i spirv.ID) spirv.ID {
	at := k.fftIndex(o, pos, i, io.p.srcExt, io.inner)
	if !io.p.fromOperand {
		return k.load(io.src, at, io.cdt)
	}
	v := io.g.emit(io.x, k.delinearize(at, io.x.Shape.Dims))
	if io.p.readReal {
		return k.makeComplex(v, k.partConst(0))
	}
	return v
}

// read is logical entry j of line (o, i): where the source holds only the
// trueN/2+1 first entries (IRFFT), entry j beyond is conj(entry trueN−j);
// Bluestein's first pass takes x_j·chirp_j, 0 for j ≥ trueN; its first inverse
// pass multiplies by K̂_j.
func (io fftIO) read(k *kernel, o, j, i spirv.ID) spirv.ID {
	f, p := k.f, io.p
	at, stored := j, spirv.ID(0)
	if p.complete {
		stored = f.Less(j, k.ic(p.srcExt))
		at = f.Select(stored, j, f.ISub(k.ic(p.trueN), j))
	}
	inRange := spirv.ID(0)
	if p.chirpIn {
		inRange = f.Less(j, k.ic(p.trueN))
		at = f.Select(inRange, at, k.ic(0)) // a real entry, read and discarded
	}
	v := io.load(k, o, at, i)
	if p.complete {
		re, im := k.parts(v)
		v = k.makeComplex(re, f.Select(stored, im, f.FNegate(im)))
	}
	if p.chirpIn {
		v, _ = k.complexBinary(hlo.OpMultiply, io.cdt, v, k.chirp(f.Select(inRange, j, k.ic(0)), p.trueN, p.chirpInverse))
		v = k.selectComplex(inRange, v, k.makeComplex(k.partConst(0), k.partConst(0)))
	}
	if p.hasKernel {
		v, _ = k.complexBinary(hlo.OpMultiply, io.cdt, v, k.load(io.kernel, j, io.cdt))
	}
	return v
}

// write writes logical entry j of line (o, i): only the dstExt first entries
// where the destination holds fewer than the line (RFFT's n/2+1, Bluestein's N),
// Bluestein's last pass times chirp_j, times the pass's scale, the real part to a
// real destination.
func (io fftIO) write(k *kernel, o, j, i, v spirv.ID) {
	f, p := k.f, io.p
	keep := p.dstExt < p.n
	if p.chirpOut {
		in := f.Less(j, k.ic(p.trueN))
		v, _ = k.complexBinary(hlo.OpMultiply, io.cdt, v, k.chirp(f.Select(in, j, k.ic(0)), p.trueN, p.chirpInverse))
	}
	if p.scale != 0 && p.scale != 1 {
		v = k.exact(f.FMul(v, f.Splat(k.partConst(p.scale), 2)))
	}
	dt := io.cdt
	if p.writeReal {
		v, dt = f.CompositeExtract(v, 0), io.cdt.ComplexPart()
	}
	at := k.fftIndex(o, j, i, p.dstExt, io.inner)
	if !keep {
		k.store(io.dst, at, v, dt)
		return
	}
	f.If(f.Less(j, k.ic(p.dstExt)), func() { k.store(io.dst, at, v, dt) }, nil)
}

// selectComplex is cond ? a : b for complex values (part by part: SPIR-V 1.3 selects
// a vector by a vector of conditions).
func (k *kernel) selectComplex(cond, a, b spirv.ID) spirv.ID {
	ar, ai := k.parts(a)
	br, bi := k.parts(b)
	return k.makeComplex(k.f.Select(cond, ar, br), k.f.Select(cond, ai, bi))
}

// chirp is e^{∓iπj²/n} (inverse: +) for 0 ≤ j < n: the angle 2π·t/(2n) with t =
// j² mod 2n, formed in 64-bit integers where j² may not fit 32 bits.
func (k *kernel) chirp(j spirv.ID, n int64, inverse bool) spirv.ID {
	f := k.f
	if n > fftMaxChirp32 && k.m.Width(k.idxT) == 32 {
		i64 := k.m.TypeInt(64, true)
		j64 := f.Convert(i64, j)
		t := f.SRem(f.IMul(j64, j64), k.m.ConstInt(i64, 2*n))
		return k.fftRoot(f.Convert(k.idxT, t), 2*n, inverse)
	}
	return k.fftRoot(f.SRem(f.IMul(j, j), k.ic(2*n)), 2*n, inverse)
}

// bluesteinKernelGen writes Bluestein's convolution kernel for length trueN into
// a line of length n = m: conj(chirp_j) at j < N and at m − j for 0 < j < N, 0
// between. The forward passes after it make it K̂.
func (l *lowering) bluesteinKernelGen(p fftPass) error {
	k := l.newKernel(p.name(), defaultLocal)
	cdt := fftComplexType(l.c.Root)
	k.lowerComplex(cdt)
	dst := k.bind(p.dst, cdt, 0)
	f := k.f
	n, m := p.trueN, p.n
	groups := k.gridStride(m, func(j spirv.ID) {
		front := f.Less(j, k.ic(n))
		back := f.Greater(j, k.ic(m-n))
		e := f.Select(front, j, f.Select(back, f.ISub(k.ic(m), j), k.ic(0)))
		v := k.chirp(e, n, !p.chirpInverse) // the conjugate chirp
		k.store(dst, j, k.selectComplex(f.LogicalOr(front, back), v, k.makeComplex(k.partConst(0), k.partConst(0))), cdt)
	})
	return l.add(k, groups)
}

// fftButterfly is the DFT of len(a) points, a power of two up to fftMaxRadix
// (inverse: with e^{+2πi·jk/r}): the DFTs of the even and the odd points joined
// by the constant twiddles of r (radix-2 decimation in time, in registers).
func (k *kernel) fftButterfly(a []spirv.ID, inverse bool) []spirv.ID {
	r := len(a)
	if r == 1 {
		return a
	}
	even, odd := make([]spirv.ID, 0, r/2), make([]spirv.ID, 0, r/2)
	for j, v := range a {
		if j%2 == 0 {
			even = append(even, v)
		} else {
			odd = append(odd, v)
		}
	}
	e, o := k.fftButterfly(even, inverse), k.fftButterfly(odd, inverse)
	y := make([]spirv.ID, r)
	for j := range r / 2 {
		t := k.rotate(o[j], j, r, inverse)
		y[j], y[j+r/2] = k.exact(k.f.FAdd(e[j], t)), k.exact(k.f.FSub(e[j], t))
	}
	return y
}

// rotate is z·e^{∓2πi·j/r}: z itself for j = 0, a swap of the parts for a
// quarter turn, else the product with the constant (rounded from f64 for c64).
func (k *kernel) rotate(z spirv.ID, j, r int, inverse bool) spirv.ID {
	switch {
	case j == 0:
		return z
	case 4*j == r:
		return k.timesI(z, inverse)
	}
	s, c := math.Sincos(2 * math.Pi * float64(j) / float64(r))
	if !inverse {
		s = -s
	}
	w := k.m.ConstComposite(k.complexType(), k.partConst(c), k.partConst(s))
	v, _ := k.complexBinary(hlo.OpMultiply, k.complexDType(), z, w)
	return v
}

// timesI is i·z (or −i·z when !plus): exact, a swap of the parts and a negation.
func (k *kernel) timesI(z spirv.ID, plus bool) spirv.ID {
	re, im := k.parts(z)
	if plus {
		return k.makeComplex(k.f.FNegate(im), re)
	}
	return k.makeComplex(im, k.f.FNegate(re))
}

// fftTwiddles are the pass's twiddles w^{base·j}, j < r: those of j a power of
// two computed (fftRoot), each other one the product of those of its bits (j
// = 7: w·w²·w⁴), so that a radix-16 pass computes 4 twiddles, not 15, and each is
// within about 4 ulp (three rounded products of values within 1 ulp).
func (k *kernel) fftTwiddles(base spirv.ID, p fftPass) []spirv.ID {
	w := make([]spirv.ID, p.radix)
	for j := int64(1); j < p.radix; j++ {
		if j&(j-1) == 0 {
			w[j] = k.fftRoot(k.f.IMul(base, k.ic(j)), p.n, p.inverse)
			continue
		}
		low := j & -j
		w[j], _ = k.complexBinary(hlo.OpMultiply, k.complexDType(), w[j-low], w[low])
	}
	return w
}

// divMod is x / d and x % d for a non-negative x: a shift and a mask when d is a
// power of two.
func (k *kernel) divMod(x spirv.ID, d int64) (quo, rem spirv.ID) {
	f := k.f
	switch {
	case d == 1:
		return x, k.ic(0)
	case d&(d-1) == 0:
		shift := int64(0)
		for 1<<shift < d {
			shift++
		}
		return f.ShrA(x, k.ic(shift)), f.And(x, k.ic(d-1))
	}
	return f.SDiv(x, k.ic(d)), f.SRem(x, k.ic(d))
}

// fftIndex is the linear index of entry j of line (o, i) in an array whose
// transformed axis has extent ext.
func (k *kernel) fftIndex(o, j, i spirv.ID, ext, inner int64) spirv.ID {
	f := k.f
	lin := f.IAdd(f.IMul(o, k.ic(ext)), j)
	if inner == 1 {
		return lin
	}
	return f.IAdd(f.IMul(lin, k.ic(inner)), i)
}

// fftRoot is e^{−2πi·t/d} (plus: e^{+2πi·t/d}) for 0 ≤ t < d. With T = 4t of
// D = 4d the angle is reduced exactly, in integers, by sin(2π − θ) = −sin θ,
// cos(π − θ) = −cos θ and cos(π/2 − θ) = sin θ (D/2, D/4 and D/8's multiples
// are integers or halves), so that u = T/D ∈ [0, 1/8] is one rounded product
// (exact for d a power of two); sine and cosine of 2π·u ≤ π/4 are their Taylor
// polynomials, in f32 to x⁹ and x¹⁰, whose truncation errors (2e-9, 1e-10) lie
// below half an f32 ulp, and in f64 (c128) to x¹⁷ and x¹⁸ (1e-19, 3e-21: below
// half an f64 ulp, 5.5e-17).
func (k *kernel) fftRoot(t spirv.ID, d int64, plus bool) spirv.ID {
	f, m := k.f, k.m
	big := f.IMul(t, k.ic(4))
	lower := f.Greater(big, k.ic(2*d)) // θ > π
	big = f.Select(lower, f.ISub(k.ic(4*d), big), big)
	far := f.Greater(big, k.ic(d)) // θ > π/2
	big = f.Select(far, f.ISub(k.ic(2*d), big), big)
	swap := f.Greater(f.IMul(big, k.ic(2)), k.ic(d)) // θ > π/4
	big = f.Select(swap, f.ISub(k.ic(d), big), big)
	u := k.fmul(f.Convert(k.partType(), big), k.partConst(1/float64(4*d)))
	x := k.fmul(u, k.partConst(2*math.Pi))
	x2 := k.fmul(x, x)
	terms := 4 // beyond the leading 1: sine's to x⁹, cosine's to x¹⁰
	if m.Width(k.partType()) == 64 {
		terms = 8 // to x¹⁷ and x¹⁸
	}
	sinC, _ := taylorSinCos(terms)
	_, cosC := taylorSinCos(terms + 1)
	sin := k.fmul(x, k.horner(x2, append([]float64{1}, sinC...)))
	cos := k.horner(x2, append([]float64{1}, cosC...))
	s, c := f.Select(swap, cos, sin), f.Select(swap, sin, cos)
	c = f.Select(far, f.FNegate(c), c)
	if plus { // e^{+iθ}: the sine, negated where the reduction turned θ into 2π − θ
		s = f.Select(lower, f.FNegate(s), s)
	} else {
		s = f.Select(lower, s, f.FNegate(s))
	}
	return k.makeComplex(c, s)
}

// fftComplexType is the complex type an fft computes in: its result's, or its
// operand's for IRFFT.
func fftComplexType(root *hlo.Instruction) hlo.DType {
	if root.Shape.DType.IsComplex() {
		return root.Shape.DType
	}
	return root.Operands[0].Shape.DType
}
