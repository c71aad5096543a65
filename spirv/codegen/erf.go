package codegen

import (
	"math"

	"github.com/vkxla/vkxla/spirv"
)

// erf and round-nearest-afz, which GLSL.std.450 lacks.
//
// erf(x) is, for |x| below a split s, its Maclaurin series
// 2/√π · Σ (-1)^n x^(2n+1) / (n!·(2n+1)), and above it 1 − erfc(|x|) with the sign of
// x, erfc from Laplace's continued fraction
// erfc(a) = e^(−a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + …)))), evaluated bottom
// up to a fixed depth. The splits and depths (f32: s = 1, 13 series terms, depth
// 48; f64: s = 1.5, 27 terms, depth 100) put the truncation error of either below
// a tenth of an ulp of the result; the series' alternating terms, at most 1.13
// times the result below s, cost a few units in the last place (a higher split
// costs more: at s = 2 the f64 error reached 5 ulp, the continued fraction
// converging too slowly below 1.5 to move it down further). The bound the tests hold it to is
// vkxla.Tolerance's row for erf (4 ulp). ±inf give ±1, NaN NaN, ±0 ±0.

// erfFormat is one precision's split, series length and continued-fraction depth.
type erfFormat struct {
	split float64
	terms int
	depth int
}

var (
	erfF32 = erfFormat{split: 1, terms: 13, depth: 48}
	erfF64 = erfFormat{split: 1.5, terms: 27, depth: 100}
)

// erfSeries holds the Maclaurin coefficients of erf(x)/x in z = x².
func erfSeries(terms int) []float64 {
	c := make([]float64, terms)
	fact := 1.0
	for n := range terms {
		if n > 0 {
			fact *= float64(n)
		}
		c[n] = 2 / math.SqrtPi / (fact * float64(2*n+1))
		if n%2 == 1 {
			c[n] = -c[n]
		}
	}
	return c
}

func (k *kernel) erf(x spirv.ID) spirv.ID {
	f := k.f
	ef := erfF32
	if k.m.Width(k.m.TypeOf(x)) == 64 {
		ef = erfF64
	}
	small := k.fmul(x, k.horner(k.fmul(x, x), erfSeries(ef.terms)))
	a := f.GLSL(spirv.GLSLFAbs, x)
	t := a
	for n := ef.depth; n >= 1; n-- {
		t = k.fadd(a, f.FDiv(k.fc(x, float64(n)/2), t))
	}
	erfc := f.FDiv(k.exp(f.FNegate(k.fmul(a, a))), k.fmul(k.fc(x, math.SqrtPi), t))
	big := k.fsub(k.fc(x, 1), erfc)
	big = f.Select(f.Less(x, k.fc(x, 0)), f.FNegate(big), big)
	return f.Select(f.Less(a, k.fc(x, ef.split)), small, big)
}

// roundAfz rounds to the nearest integer, halves away from zero: trunc(x) moved one
// away from zero where the dropped fraction, x − trunc(x) (exact), is at least ½.
// It keeps -0, ±inf and NaN, and never adds ½ (which would round 0.49999997 up).
func (k *kernel) roundAfz(x spirv.ID) spirv.ID {
	f := k.f
	t := f.GLSL(spirv.GLSLTrunc, x)
	frac := f.GLSL(spirv.GLSLFAbs, k.fsub(x, t))
	away := k.fadd(t, f.GLSL(spirv.GLSLFSign, x))
	return f.Select(f.GreaterEqual(frac, k.fc(x, 0.5)), away, t)
}
