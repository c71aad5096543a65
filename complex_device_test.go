package vkxla_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// c64 on the GPU against cpuref: the ops with complex kernels
// (codegen.ComplexOps), on random values in [-2, 2] with the special values
// (signed zeros, infinities, NaNs, products that overflow f32) in front. They run
// in the differential suite: go test -run TestDifferentialOps/complex.

func init() { opCases[hlo.OpComplex] = complexOpCases }

// specialC64 are the first elements of every c64 input.
var specialC64 = []complex64{
	0, complex(float32(math.Copysign(0, -1)), 0), complex(0, float32(math.Copysign(0, -1))),
	complex(float32(math.Inf(1)), 1), complex(1, float32(math.Inf(-1))), complex(float32(math.NaN()), 0),
	complex(0, float32(math.NaN())), complex(1e30, -1e30), complex(1e-30, 3),
}

func randomC64(g *gen, dims ...int64) *hlo.Literal { return randomC64With(g, specialC64, dims...) }

// randomC64With is randomC64 with the given special values first.
func randomC64With(g *gen, special []complex64, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(hlo.C64, dims...))
	for i := 0; i < l.NumElements(); i++ {
		v := complex(g.rng.Float64()*4-2, g.rng.Float64()*4-2)
		if i < len(special) {
			v = complex128(special[i])
		}
		l.SetComplex128(i, v)
	}
	return l
}

func c64Case(t testing.TB, name string, op hlo.Opcode, inputs []*hlo.Literal, build func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction) opCase {
	b := hlo.NewBuilder(name)
	ps := make([]*hlo.Instruction, len(inputs))
	for i, in := range inputs {
		ps[i] = b.Parameter(in.Shape(), "")
	}
	return opCase{name: name, module: mustBuild(t, b, build(b, ps)), inputs: inputs, spec: vkxla.Tolerance(op, hlo.C64)}
}

func complexOpCases(t testing.TB, g *gen) []opCase {
	x, y := randomC64(g, 3, 43), randomC64(g, 3, 43)
	re, im := randomLiteral(g.rng, hlo.MakeShape(hlo.F32, 3, 43), domain{-2, 2}), randomLiteral(g.rng, hlo.MakeShape(hlo.F32, 3, 43), domain{-2, 2})
	cases := []opCase{
		c64Case(t, "complex", hlo.OpComplex, []*hlo.Literal{re, im}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Complex(ps[0], ps[1])
		}),
		c64Case(t, "complex of a real's parts", hlo.OpComplex, []*hlo.Literal{re}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			z := b.Convert(ps[0], hlo.C64)
			return b.Tuple(b.Real(z), b.Imag(z))
		}),
		c64Case(t, "select compare", hlo.OpCompare, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			eq := b.Compare(ps[0], ps[0], hlo.CmpEQ) // false at the NaNs
			return b.Tuple(eq, b.Compare(ps[0], ps[1], hlo.CmpNE), b.Select(eq, ps[0], ps[1]))
		}),
		c64Case(t, "movement", hlo.OpTranspose, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			tr := b.Transpose(ps[0], 1, 0)
			cc := b.Concatenate(0, ps[0], ps[1])
			rv := b.Reverse(ps[1], 1)
			sl := b.Slice(ps[0], []int64{1, 2}, []int64{3, 40}, []int64{1, 3})
			return b.Tuple(tr, cc, rv, sl, b.Reshape(ps[1], 129))
		}),
		c64Case(t, "pad broadcast dynamic-slice", hlo.OpPad, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			v := b.Constant(hlo.ScalarLiteral(complex64(complex(-1, 0.5))))
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
		cases = append(cases, c64Case(t, op.String(), op, []*hlo.Literal{x}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Unary(op, ps[0])
		}))
	}
	// exp's and log's special cases (math/cmplx's): infinite and NaN parts with
	// zero, finite, infinite and NaN partners; log's branch cut (−100 ± 0i).
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZ := float32(math.Copysign(0, -1))
	var expIn []complex64
	for _, re := range []float32{inf, -inf, nan, 0, negZ, 1.5, -100, 88, 1e-40, -3e38} {
		for _, im := range []float32{0, negZ, 1, -2, inf, -inf, nan, 1e-42, 3e38, 0.3, -0.5, 89, -89, 95} {
			expIn = append(expIn, complex(re, im))
		}
	}
	for _, op := range []hlo.Opcode{hlo.OpExp, hlo.OpLog, hlo.OpSqrt, hlo.OpRsqrt, hlo.OpSin, hlo.OpCos, hlo.OpTanh, hlo.OpTan, hlo.OpExpm1, hlo.OpLog1p} {
		cases = append(cases, c64Case(t, op.String()+" special values", op,
			[]*hlo.Literal{hlo.MustFromSlice([]int64{int64(len(expIn))}, expIn)},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, ps[0]) }))
	}
	cases = append(cases, complexTranscendentalCases(t, g)...)
	// Every pair of special values (and of them and random ones), then random
	// pairs.
	sx, sy := specialPairs(g)
	for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpDivide} {
		for name, in := range map[string][]*hlo.Literal{"": {x, y}, " special pairs": {sx, sy}} {
			cases = append(cases, c64Case(t, op.String()+name, op, in, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Binary(op, ps[0], ps[1])
			}))
		}
	}
	// A fused chain: |z·w + z|² as real² + imag², all in one kernel.
	// Sums: the elemental loop (7 terms per output), the workgroup tree (1500) and
	// its two passes (20000), in the GPU's order: within the reduce tolerance.
	for _, n := range []int64{7, 1500, 20000} {
		z := randomC64With(g, nil, 2, n) // finite: a NaN would hide the sums
		cases = append(cases, c64Case(t, fmt.Sprintf("reduce sum of %d", n), hlo.OpReduce, []*hlo.Literal{z},
			func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				zero := b.Constant(hlo.ScalarLiteral(complex64(0)))
				return b.Reduce([]*hlo.Instruction{ps[0]}, []*hlo.Instruction{zero}, c64Adder(t), []int64{1})
			}))
	}
	// A fused chain, |z·w + z|² as real² + imag², one kernel: exact, as every f32
	// operation rounds on its own on both sides.
	return append(cases, c64Case(t, "fused chain", hlo.OpMultiply, []*hlo.Literal{x, y}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		s := b.Add(b.Mul(ps[0], ps[1]), ps[0])
		r, i := b.Real(s), b.Imag(s)
		return b.Add(b.Mul(r, r), b.Mul(i, i))
	}))
}

// c64Adder is the reducer (a, b) -> a + b on c64 scalars.
func c64Adder(t testing.TB) *hlo.Computation {
	b := hlo.NewBuilder("add_c64")
	x, y := b.Parameter(hlo.Scalar(hlo.C64), "x"), b.Parameter(hlo.Scalar(hlo.C64), "y")
	c, err := b.BuildComputation(b.Add(x, y))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// specialPairs are two c64 vectors holding every pair of the special values and
// a few random ones.
func specialPairs(g *gen) (*hlo.Literal, *hlo.Literal) {
	vals := append([]complex64{}, specialC64...)
	for range 4 {
		vals = append(vals, complex64(complex(g.rng.Float64()*4-2, g.rng.Float64()*4-2)))
	}
	vals = append(vals, complex(float32(math.Inf(1)), float32(math.NaN())), complex(float32(math.Inf(-1)), float32(math.Inf(1))))
	var xs, ys []complex64
	for _, a := range vals {
		for _, b := range vals {
			xs, ys = append(xs, a), append(ys, b)
		}
	}
	return hlo.MustFromSlice([]int64{int64(len(xs))}, xs), hlo.MustFromSlice([]int64{int64(len(ys))}, ys)
}
