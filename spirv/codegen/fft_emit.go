package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// lowerFFT emits the dispatches planFFT decides (fft.go).
func (l *lowering) lowerFFT() error {
	spec, err := planFFT(l.c.Root)
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
	for _, p := range spec.passes {
		if err := l.fftPassKernel(p); err != nil {
			return err
		}
	}
	return nil
}

// fftFill writes zeros: RFFT of length 0 (one entry per line, the empty sum).
func (l *lowering) fftFill() error {
	k := l.newKernel("fft_zero", defaultLocal)
	out := l.bindOutputs(k)[0]
	zero := k.makeComplex(k.m.F32(0), k.m.F32(0))
	return l.add(k, k.gridStride(l.p.Outputs[0].NumElements(), func(i spirv.ID) { k.store(out, i, zero, hlo.C64) }))
}

// fftDirect is a transform whose lengths are all 1: the identity, with RFFT's
// imaginary parts of 0 and IRFFT's real parts.
func (l *lowering) fftDirect() error {
	k := l.newKernel("fft_copy", defaultLocal)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	x := l.c.Root.Operands[0]
	dt := l.p.Outputs[0].DType
	groups := k.gridStride(l.p.Outputs[0].NumElements(), func(i spirv.ID) {
		g.scoped(func() {
			v := g.emit(x, k.delinearize(i, x.Shape.Dims))
			switch {
			case x.Shape.DType == hlo.F32:
				v = k.makeComplex(v, k.m.F32(0))
			case dt == hlo.F32:
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
	var src spirv.Buffer
	if !p.fromOperand {
		src = k.bind(p.src, hlo.C64, spirv.ReadOnly)
	}
	dstDT := hlo.C64
	if p.writeReal {
		dstDT = hlo.F32
	}
	dst := k.bind(p.dst, dstDT, 0)
	g := l.kernelGen(k)
	f := k.f
	inner := product(p.dims[p.axis+1:])
	span := p.n / p.radix // the distance between a butterfly's points
	groups := k.gridStride(product(p.dims)/p.radix, func(t spirv.ID) {
		g.scoped(func() {
			r, i := k.divMod(t, inner)
			o, b := k.divMod(r, span)
			_, q := k.divMod(b, p.s)
			a := make([]spirv.ID, p.radix)
			for j := range a {
				at := f.IAdd(b, k.ic(int64(j)*span))
				if p.fromOperand {
					a[j] = l.fftReadOperand(g, p, o, at, i)
				} else {
					a[j] = k.fftRead(src, p, o, at, i)
				}
			}
			y := k.fftButterfly(a, p.inverse)
			base := f.ISub(b, q)                            // s·p
			first := f.IAdd(q, f.IMul(base, k.ic(p.radix))) // q + s·r·p
			w := k.fftTwiddles(base, p)
			for j, v := range y {
				if j > 0 {
					v, _ = k.complexBinary(hlo.OpMultiply, hlo.C64, v, w[j])
				}
				k.fftWrite(dst, p, o, f.IAdd(first, k.ic(int64(j)*p.s)), i, v)
			}
		})
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
// quarter turn, else the product with the constant (rounded from f64).
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
	w := k.m.ConstComposite(k.complexType(), k.m.ConstFloat(k.m.TypeF32(), c), k.m.ConstFloat(k.m.TypeF32(), s))
	v, _ := k.complexBinary(hlo.OpMultiply, hlo.C64, z, w)
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
// two computed (fftTwiddle), each other one the product of those of its bits (j
// = 7: w·w²·w⁴), so that a radix-16 pass computes 4 twiddles, not 15, and each is
// within about 4 ulp (three rounded products of values within 1 ulp).
func (k *kernel) fftTwiddles(base spirv.ID, p fftPass) []spirv.ID {
	w := make([]spirv.ID, p.radix)
	for j := int64(1); j < p.radix; j++ {
		if j&(j-1) == 0 {
			w[j] = k.fftTwiddle(k.f.IMul(base, k.ic(j)), p.n, p.inverse)
			continue
		}
		low := j & -j
		w[j], _ = k.complexBinary(hlo.OpMultiply, hlo.C64, w[j-low], w[low])
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

// fftRead reads entry j of line (o, i) from a c64 buffer; where the buffer holds
// only the n/2+1 first entries of the last axis (IRFFT), entry j ≥ n/2+1 is the
// conjugate of entry n−j.
func (k *kernel) fftRead(src spirv.Buffer, p fftPass, o, j, i spirv.ID) spirv.ID {
	inner := product(p.dims[p.axis+1:])
	if p.srcLast == p.last || p.axis != len(p.dims)-1 {
		return k.load(src, k.fftIndex(o, j, i, p.dims[p.axis], inner), hlo.C64)
	}
	f := k.f
	stored := f.Less(j, k.ic(p.srcLast))
	at := f.Select(stored, j, f.ISub(k.ic(p.n), j))
	v := k.load(src, k.fftIndex(o, at, i, p.srcLast, inner), hlo.C64)
	re, im := k.parts(v)
	return k.makeComplex(re, f.Select(stored, im, f.FNegate(im)))
}

// fftReadOperand is fftRead from the program's operand through the elemental
// emitter (a real operand gets imaginary parts of 0).
func (l *lowering) fftReadOperand(g *gen, p fftPass, o, j, i spirv.ID) spirv.ID {
	k := g.k
	x := l.c.Root.Operands[0]
	inner := product(p.dims[p.axis+1:])
	f := k.f
	at, stored := j, spirv.ID(0)
	if p.srcLast != p.last && p.axis == len(p.dims)-1 {
		stored = f.Less(j, k.ic(p.srcLast))
		at = f.Select(stored, j, f.ISub(k.ic(p.n), j))
	}
	ext := p.dims[p.axis]
	if p.axis == len(p.dims)-1 {
		ext = p.srcLast
	}
	v := g.emit(x, k.delinearize(k.fftIndex(o, at, i, ext, inner), x.Shape.Dims))
	if p.readReal {
		return k.makeComplex(v, k.m.F32(0))
	}
	if stored != 0 {
		re, im := k.parts(v)
		v = k.makeComplex(re, f.Select(stored, im, f.FNegate(im)))
	}
	return v
}

// fftWrite writes entry j of line (o, i): only the n/2+1 first entries of the
// last axis where the destination holds those (RFFT), the real part to a real
// destination (IRFFT), scaled by 1/∏n after an inverse transform's last pass.
func (k *kernel) fftWrite(dst spirv.Buffer, p fftPass, o, j, i, v spirv.ID) {
	f := k.f
	if p.scale != 0 && p.scale != 1 {
		v = k.exact(f.FMul(v, f.Splat(k.m.F32(float32(p.scale)), 2)))
	}
	dt := hlo.C64
	if p.writeReal {
		v, dt = f.CompositeExtract(v, 0), hlo.F32
	}
	ext := p.dims[p.axis]
	if p.axis == len(p.dims)-1 {
		ext = p.dstLast
	}
	at := k.fftIndex(o, j, i, ext, product(p.dims[p.axis+1:]))
	if p.dstLast == p.last || p.axis != len(p.dims)-1 {
		k.store(dst, at, v, dt)
		return
	}
	f.If(f.Less(j, k.ic(p.dstLast)), func() { k.store(dst, at, v, dt) }, nil)
}

// fftTwiddle is e^{−2πi·tw/n} (inverse: e^{+2πi·tw/n}) for 0 ≤ tw < n. u = tw/n
// is exact in f32 (n is a power of two) and is reduced exactly to [0, 1/8] by
// sin(2π − θ) = −sin θ, cos(π − θ) = −cos θ and cos(π/2 − θ) = sin θ (each
// reduced u is a difference of multiples of 1/n: exact); sine and cosine of 2π·u ≤ π/4 are
// their Taylor polynomials to x⁹ and x¹⁰, whose truncation errors (2e-9, 1e-10)
// lie below half an f32 ulp.
func (k *kernel) fftTwiddle(tw spirv.ID, n int64, inverse bool) spirv.ID {
	f, m := k.f, k.m
	u := k.fmul(f.Convert(m.TypeF32(), tw), m.F32(float32(1/float64(n))))
	lower := f.Greater(u, m.F32(0.5)) // θ > π
	u = f.Select(lower, k.fsub(m.F32(1), u), u)
	far := f.Greater(u, m.F32(0.25)) // θ > π/2
	u = f.Select(far, k.fsub(m.F32(0.5), u), u)
	swap := f.Greater(u, m.F32(0.125)) // θ > π/4
	u = f.Select(swap, k.fsub(m.F32(0.25), u), u)
	x := k.fmul(u, m.F32(float32(2*math.Pi)))
	x2 := k.fmul(x, x)
	sin := k.fmul(x, k.horner(x2, []float64{1, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880}))
	cos := k.horner(x2, []float64{1, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800})
	s, c := f.Select(swap, cos, sin), f.Select(swap, sin, cos)
	c = f.Select(far, f.FNegate(c), c)
	if !inverse { // e^{−iθ}: the sine negated, unless the reduction negated it already
		s = f.Select(lower, s, f.FNegate(s))
	} else {
		s = f.Select(lower, f.FNegate(s), s)
	}
	return k.makeComplex(c, s)
}
