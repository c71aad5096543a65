package hlo

import (
	"fmt"
	"math"
	"strings"
)

// LiteralsEqual reports, as an error, how got differs from want when they are not
// exactly equal: the same shape and bit-identical elements, except that any two NaNs
// are equal (their payloads may differ) and pred elements compare as truth values.
// +0 and -0 differ, since several ops (sign, negate, multiply) are specified down to
// the sign of zero. The error names the first mismatching index, both values and how
// many elements differ. Tuples compare element by element.
func LiteralsEqual(got, want *Literal) error {
	return compareLiterals(got, want, elementsEqual)
}

// LiteralsClose is LiteralsEqual with a tolerance for floating-point elements:
// |got-want| <= atol + rtol*|want| (want is the reference). NaN matches only NaN, an
// infinity only the same infinity. Integer and pred elements must be exactly equal.
func LiteralsClose(got, want *Literal, atol, rtol float64) error {
	return compareLiterals(got, want, func(g, w *Literal, i int) bool {
		if g.DType().IsComplex() {
			return complexClose(g.Complex128(i), w.Complex128(i), atol, rtol)
		}
		if !g.DType().IsFloat() {
			return elementsEqual(g, w, i)
		}
		return floatsClose(g.Float64(i), w.Float64(i), atol, rtol)
	})
}

func floatsClose(g, w, atol, rtol float64) bool {
	switch {
	case math.IsNaN(g) || math.IsNaN(w):
		return math.IsNaN(g) && math.IsNaN(w)
	case g == w: // also the same infinity
		return true
	case math.IsInf(g, 0) || math.IsInf(w, 0):
		return false
	}
	return math.Abs(g-w) <= atol+rtol*math.Abs(w)
}

// complexClose compares each part as floatsClose does, the tolerance relative to
// the modulus of want (a part near 0 of a large number is as accurate as the
// number, not as itself); beside an infinite part, a finite one is relative to
// itself.
func complexClose(g, w complex128, atol, rtol float64) bool {
	scale := math.Hypot(nanToZero(real(w)), nanToZero(imag(w))) // a NaN part scales nothing
	part := func(gp, wp float64) bool {
		if math.IsNaN(gp) || math.IsNaN(wp) || math.IsInf(gp, 0) || math.IsInf(wp, 0) {
			return floatsClose(gp, wp, 0, 0)
		}
		s := scale
		if math.IsInf(s, 0) {
			s = math.Abs(wp)
		}
		return math.Abs(gp-wp) <= atol+rtol*s
	}
	return part(real(g), real(w)) && part(imag(g), imag(w))
}

func nanToZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// sameFloatBits is bit equality, or both NaN.
func sameFloatBits(g, w float64) bool {
	return math.Float64bits(g) == math.Float64bits(w) || (math.IsNaN(g) && math.IsNaN(w))
}

func elementsEqual(g, w *Literal, i int) bool {
	dt := g.DType()
	switch {
	case dt == Pred:
		return g.Bool(i) == w.Bool(i)
	case dt.IsComplex(): // part by part (c128 is wider than Bits)
		gc, wc := g.Complex128(i), w.Complex128(i)
		return sameFloatBits(real(gc), real(wc)) && sameFloatBits(imag(gc), imag(wc))
	case dt.IsFloat():
		return g.Bits(i) == w.Bits(i) || (math.IsNaN(g.Float64(i)) && math.IsNaN(w.Float64(i)))
	}
	return g.Bits(i) == w.Bits(i)
}

func compareLiterals(got, want *Literal, same func(g, w *Literal, i int) bool) error {
	if got == nil || want == nil {
		if got == want {
			return nil
		}
		return fmt.Errorf("literal mismatch: got %v, want %v", got, want)
	}
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("literal shape mismatch: got %v, want %v", got.Shape(), want.Shape())
	}
	if got.Shape().IsTuple() {
		for i := range got.Elems() {
			if err := compareLiterals(got.Elems()[i], want.Elems()[i], same); err != nil {
				return fmt.Errorf("tuple element %d: %w", i, err)
			}
		}
		return nil
	}
	first, count := -1, 0
	for i := 0; i < got.NumElements(); i++ {
		if !same(got, want, i) {
			if first < 0 {
				first = i
			}
			count++
		}
	}
	if count == 0 {
		return nil
	}
	return fmt.Errorf("%v literals differ at index %s: got %s, want %s (%d of %d elements differ)",
		got.Shape(), formatIndex(got.Shape(), first), FormatElement(got, first),
		FormatElement(want, first), count, got.NumElements())
}

// formatIndex prints the multi-dimensional index of linear (row-major) position i.
func formatIndex(s Shape, i int) string {
	parts := make([]string, s.Rank())
	rem := int64(i)
	for d := s.Rank() - 1; d >= 0; d-- {
		parts[d] = fmt.Sprint(rem % s.Dims[d])
		rem /= s.Dims[d]
	}
	return "[" + strings.Join(parts, ",") + "]"
}
