package vkxla_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// c64 and c128 on the GPU against cpuref: the ops with complex kernels
// (codegen.ComplexOps), on random values in [-2, 2] with the special values
// (signed zeros, infinities, NaNs, products that overflow the part type) in
// front, each case once per complex type (c128's named "c128 …"). They run in
// the differential suite: go test -run TestDifferentialOps/complex.

func init() {
	opCases[hlo.OpComplex] = func(t testing.TB, g *gen) []opCase {
		return append(complexOpCases(t, g, hlo.C64), complexOpCases(t, g, hlo.C128)...)
	}
}

// specialC64 are the first elements of every c64 input.
var specialC64 = []complex64{
	0, complex(float32(math.Copysign(0, -1)), 0), complex(0, float32(math.Copysign(0, -1))),
	complex(float32(math.Inf(1)), 1), complex(1, float32(math.Inf(-1))), complex(float32(math.NaN()), 0),
	complex(0, float32(math.NaN())), complex(1e30, -1e30), complex(1e-30, 3),
}

// specialC128 are the first elements of every c128 input: c64's, with products
// that overflow f64 and a subnormal part.
var specialC128 = []complex128{
	0, complex(negZero(), 0), complex(0, negZero()), complex(inf(), 1), complex(1, -inf()), complex(nan64(), 0),
	complex(0, nan64()), complex(1e300, -1e300), complex(1e-300, 3), complex(5e-324, -1),
}

// complexSpecials are the special values of complex type dt.
func complexSpecials(dt hlo.DType) []complex128 {
	if dt == hlo.C128 {
		return specialC128
	}
	var s []complex128
	for _, z := range specialC64 {
		s = append(s, complex128(z))
	}
	return s
}

func randomComplex(g *gen, dt hlo.DType, dims ...int64) *hlo.Literal {
	return randomComplexWith(g, dt, complexSpecials(dt), dims...)
}

// randomC64With is a c64 array of random values in [-2, 2] with the given special
// values first.
func randomC64With(g *gen, special []complex64, dims ...int64) *hlo.Literal {
	var s []complex128
	for _, z := range special {
		s = append(s, complex128(z))
	}
	return randomComplexWith(g, hlo.C64, s, dims...)
}

// randomComplexWith is an array of dt of random values in [-2, 2] with the given
// special values first.
func randomComplexWith(g *gen, dt hlo.DType, special []complex128, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i := 0; i < l.NumElements(); i++ {
		v := complex(g.rng.Float64()*4-2, g.rng.Float64()*4-2)
		if i < len(special) {
			v = special[i]
		}
		l.SetComplex128(i, v)
	}
	return l
}

// complexScalar is a scalar literal of complex type dt.
func complexScalar(dt hlo.DType, z complex128) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	l.SetComplex128(0, z)
	return l
}

// complexCase is a case of op on complex type dt, named with dt's prefix, within
// vkxla.Tolerance(op, dt).
func complexCase(t testing.TB, dt hlo.DType, name string, op hlo.Opcode, inputs []*hlo.Literal, build func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction) opCase {
	if dt != hlo.C64 {
		name = dt.String() + " " + name
	}
	b := hlo.NewBuilder(name)
	ps := make([]*hlo.Instruction, len(inputs))
	for i, in := range inputs {
		ps[i] = b.Parameter(in.Shape(), "")
	}
	return opCase{name: name, module: mustBuild(t, b, build(b, ps)), inputs: inputs, spec: vkxla.Tolerance(op, dt)}
}

func complexOpCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	part := dt.ComplexPart()
	x, y := randomComplex(g, dt, 3, 43), randomComplex(g, dt, 3, 43)
	re, im := randomLiteral(g.rng, hlo.MakeShape(part, 3, 43), domain{-2, 2}), randomLiteral(g.rng, hlo.MakeShape(part, 3, 43), domain{-2, 2})
	other := hlo.C128
	if dt == hlo.C128 {
		other = hlo.C64
	}
	cases := []opCase{
		complexCase(t, dt, "complex", hlo.OpComplex, []*hlo.Literal{re, im}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Complex(ps[0], ps[1])
		}),
		complexCase(t, dt, "complex of a real's parts", hlo.OpComplex, []*hlo.Literal{re}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			z := b.Convert(ps[0], dt)
			return b.Tuple(b.Real(z), b.Imag(z))
		}),
		// convert from the other complex type and from integers (s64: one
		// rounding to the part type).
		complexCase(t, dt, "convert", hlo.OpConvert, []*hlo.Literal{randomComplex(g, other, 3, 43), randomLiteral(g.rng, hlo.MakeShape(hlo.S64, 3, 43), domain{-1 << 62, 1 << 62})},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Tuple(b.Convert(ps[0], dt), b.Convert(ps[1], dt))
			}),
		complexCase(t, dt, "select compare", hlo.OpCompare, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			eq := b.Compare(ps[0], ps[0], hlo.CmpEQ) // false at the NaNs
			return b.Tuple(eq, b.Compare(ps[0], ps[1], hlo.CmpNE), b.Select(eq, ps[0], ps[1]))
		}),
		complexCase(t, dt, "movement", hlo.OpTranspose, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			tr := b.Transpose(ps[0], 1, 0)
			cc := b.Concatenate(0, ps[0], ps[1])
			rv := b.Reverse(ps[1], 1)
			sl := b.Slice(ps[0], []int64{1, 2}, []int64{3, 40}, []int64{1, 3})
			return b.Tuple(tr, cc, rv, sl, b.Reshape(ps[1], 129), b.Copy(ps[0]))
		}),
		complexCase(t, dt, "pad broadcast dynamic-slice", hlo.OpPad, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			v := b.Constant(complexScalar(dt, complex(-1, 0.5)))
			pd := b.Pad(ps[0], v, []hlo.PadDim{{Low: 1, High: 0, Interior: 1}, {Low: 0, High: 2, Interior: 0}})
			bc := b.Broadcast(b.Slice(ps[1], []int64{0, 0}, []int64{1, 43}, []int64{1, 1}), []int64{2, 1, 43}, []int64{1, 2})
			i := b.Constant(hlo.ScalarLiteral(int32(1)))
			ds := b.DynamicSlice(ps[0], []*hlo.Instruction{i, i}, []int64{2, 5})
			du := b.DynamicUpdateSlice(ps[1], ds, []*hlo.Instruction{i, i})
			return b.Tuple(pd, bc, ds, du)
		}),
	}
	for _, op := range []hlo.Opcode{hlo.OpNegate, hlo.OpReal, hlo.OpImag, hlo.OpAbs, hlo.OpSign, hlo.OpExp, hlo.OpLog, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpSin, hlo.OpCos,
		hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p} {
		cases = append(cases, complexCase(t, dt, op.String(), op, []*hlo.Literal{x}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Unary(op, ps[0])
		}))
	}
	// exp's and log's special cases (math/cmplx's): infinite and NaN parts with
	// zero, finite, infinite and NaN partners; log's branch cut (−100 ± 0i).
	for _, op := range []hlo.Opcode{hlo.OpExp, hlo.OpLog, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpSin, hlo.OpCos, hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p} {
		cases = append(cases, complexCase(t, dt, op.String()+" special values", op, []*hlo.Literal{specialGrid(dt, op)},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, ps[0]) }))
	}
	cases = append(cases, complexTranscendentalCases(t, g, dt)...)
	// Every pair of special values (and of them and random ones), then random
	// pairs.
	sx, sy := specialPairs(g, dt)
	for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide} {
		for name, in := range map[string][]*hlo.Literal{"": {x, y}, " special pairs": {sx, sy}} {
			cases = append(cases, complexCase(t, dt, op.String()+name, op, in, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Binary(op, ps[0], ps[1])
			}))
		}
	}
	// Sums: the elemental loop (7 terms per output), the workgroup tree (1500) and
	// its two passes (20000), in the GPU's order: within the reduce tolerance.
	for _, n := range []int64{7, 1500, 20000} {
		z := randomComplexWith(g, dt, nil, 2, n) // finite: a NaN would hide the sums
		cases = append(cases, complexCase(t, dt, fmt.Sprintf("reduce sum of %d", n), hlo.OpReduce, []*hlo.Literal{z},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				zero := b.Constant(complexScalar(dt, 0))
				return b.Reduce([]*hlo.Instruction{ps[0]}, []*hlo.Instruction{zero}, complexAdder(t, dt), []int64{1})
			}))
	}
	cases = append(cases, complexIndexedCases(t, g, dt)...)
	// A fused chain, |z·w + z|² as real² + imag², one kernel: exact, as every
	// operation rounds on its own on both sides.
	return append(cases, complexCase(t, dt, "fused chain", hlo.OpMultiply, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		s := b.Add(b.Mul(ps[0], ps[1]), ps[0])
		r, i := b.Real(s), b.Imag(s)
		return b.Add(b.Mul(r, r), b.Mul(i, i))
	}))
}

// specialReals and specialImags are the parts whose every combination exp's,
// log's, sqrt's and the trig functions' special cases are tested on: infinities,
// NaN, signed zeros, the branch cut (−100), values around ln(max) (where e^x and
// sinh overflow: f32 88 and 89, f64 709 and 710) and beyond, subnormals and the
// largest finite values.
func specialReals(dt hlo.DType) []float64 {
	if dt == hlo.C128 {
		return []float64{inf(), -inf(), nan64(), 0, negZero(), 1.5, -100, 709, 1e-310, -1.7e308}
	}
	return []float64{inf(), -inf(), nan64(), 0, negZero(), 1.5, -100, 88, float64(float32(1e-40)), float64(float32(-3e38))}
}

func specialImags(dt hlo.DType) []float64 {
	if dt == hlo.C128 {
		return []float64{0, negZero(), 1, -2, inf(), -inf(), nan64(), 5e-324, 1.7e308, 0.3, -0.5, 710, -710, 711}
	}
	return []float64{0, negZero(), 1, -2, inf(), -inf(), nan64(), float64(float32(1e-42)), float64(float32(3e38)), 0.3, -0.5, 89, -89, 95}
}

// specialGrid is every combination of specialReals and specialImags, but for
// c128's log those that have a subnormal modulus: Go's math.Log (cpuref's) on
// amd64 takes a subnormal for a normal number (math.Log(5e-324) is −709.09, not
// −744.44), where the kernel's log is right.
func specialGrid(dt hlo.DType, op hlo.Opcode) *hlo.Literal {
	var zs []complex128
	for _, re := range specialReals(dt) {
		for _, im := range specialImags(dt) {
			z := complex(re, im)
			if r := math.Hypot(re, im); dt == hlo.C128 && op == hlo.OpLog && r > 0 && r < 0x1p-1022 {
				continue
			}
			zs = append(zs, z)
		}
	}
	l := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(zs))))
	for i, z := range zs {
		l.SetComplex128(i, z)
	}
	return l
}

// complexAdder is the reducer (a, b) -> a + b on scalars of complex type dt.
func complexAdder(t testing.TB, dt hlo.DType) *hlo.Computation {
	b := hlo.NewBuilder("add_" + dt.String())
	x, y := b.Parameter(hlo.Scalar(dt), "x"), b.Parameter(hlo.Scalar(dt), "y")
	c, err := b.BuildComputation(b.Add(x, y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// specialPairs are two vectors of complex type dt holding every pair of the
// special values and a few random ones.
func specialPairs(g *gen, dt hlo.DType) (*hlo.Literal, *hlo.Literal) {
	vals := append([]complex128{}, complexSpecials(dt)...)
	for range 4 {
		vals = append(vals, complex(g.rng.Float64()*4-2, g.rng.Float64()*4-2))
	}
	vals = append(vals, complex(inf(), nan64()), complex(-inf(), inf()))
	xs, ys := hlo.NewLiteral(hlo.MakeShape(dt, int64(len(vals)*len(vals)))), hlo.NewLiteral(hlo.MakeShape(dt, int64(len(vals)*len(vals))))
	i := 0
	for _, a := range vals {
		for _, b := range vals {
			xs.SetComplex128(i, a)
			ys.SetComplex128(i, b)
			i++
		}
	}
	return xs, ys
}

// complexError is the largest distance of a part of got from want's, relative to
// want's modulus (as hlo.LiteralsClose measures it), in units of ε of the part
// type (2⁻²³ or 2⁻⁵²), over the elements whose parts are finite on both sides
// and whose modulus is not 0 (the others must match exactly).
func complexError(got, want *hlo.Literal) float64 {
	eps := math.Ldexp(1, -23)
	if got.DType() == hlo.C128 {
		eps = math.Ldexp(1, -52)
	}
	worst := 0.0
	for i := range got.NumElements() {
		g, w := got.Complex128(i), want.Complex128(i)
		r := math.Hypot(real(w), imag(w))
		if r == 0 || math.IsInf(r, 0) || math.IsNaN(r) || math.IsInf(real(g), 0) || math.IsInf(imag(g), 0) {
			continue
		}
		worst = max(worst, math.Abs(real(g)-real(w))/r/eps, math.Abs(imag(g)-imag(w))/r/eps)
	}
	return worst
}
