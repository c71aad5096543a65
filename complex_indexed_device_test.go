package vkxla_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// Complex gather, scatter, reduce-window and sort on the GPU against cpuref, in
// c64 and c128 (complexOpCases runs these for both). Each case of scatter by
// replacement or by add, reduce-window by sum and sort also has a reference
// module made of other ops: the same op on the real and imaginary planes, joined
// by complex (those act on each part alone, so each plane is the real op), and
// for sort a variadic sort of the two planes by the same order on the parts.
// The device cases compare with cpuref on the op itself; TestComplexPlaneReferences
// checks, in cpuref, that the op and its reference agree bit for bit in both
// types (for c128 a check of cpuref's literal paths by its f64 ones).

// planeBuild builds an op on values of element type et: the complex type of a
// case, or its part type when the reference builds the op on one plane.
type planeBuild func(t testing.TB, b *hlo.Builder, ps []*hlo.Instruction, et hlo.DType) *hlo.Instruction

// complexPlaneCase is a case of the op build makes on complex type dt; its
// reference applies build to the real and to the imaginary planes of the
// complex inputs (other inputs, indices, as they are) and joins them.
func complexPlaneCase(t testing.TB, dt hlo.DType, name string, op hlo.Opcode, inputs []*hlo.Literal, build planeBuild) opCase {
	c := complexCase(t, dt, name, op, inputs, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return build(t, b, ps, dt)
	})
	b := hlo.NewBuilder(c.name + " on planes")
	re, im := make([]*hlo.Instruction, len(inputs)), make([]*hlo.Instruction, len(inputs))
	for i, in := range inputs {
		p := b.Parameter(in.Shape(), "")
		re[i], im[i] = p, p
		if in.DType().IsComplex() {
			re[i], im[i] = b.Real(p), b.Imag(p)
		}
	}
	part := dt.ComplexPart()
	c.reference = mustBuild(t, b, b.Complex(build(t, b, re, part), build(t, b, im, part)))
	return c
}

// scalarComputation is (a, b) -> op(a, b) on scalars of et; OpCopy is the
// replacing combiner (a, b) -> b.
func scalarComputation(t testing.TB, op hlo.Opcode, et hlo.DType) *hlo.Computation {
	b := hlo.NewBuilder(op.String() + "_" + et.String())
	x, y := b.Parameter(hlo.Scalar(et), "x"), b.Parameter(hlo.Scalar(et), "y")
	root := y
	if op != hlo.OpCopy {
		root = b.Binary(op, x, y)
	}
	c, err := b.BuildComputation(root)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func int32Literal(t testing.TB, dims []int64, v ...int32) *hlo.Literal {
	l, err := hlo.FromSlice(dims, v)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// complexIndexedCases are the cases of dt, compared with cpuref on the op
// itself, not with their plane references (TestComplexPlaneReferences checks
// that the two agree).
func complexIndexedCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	cases := append(append(append(complexGatherCases(t, g, dt), complexScatterCases(t, g, dt)...),
		complexReduceWindowCases(t, g, dt)...), complexSortCases(t, g, dt)...)
	for i := range cases {
		cases[i].reference = nil
	}
	return cases
}

// TestComplexPlaneReferences checks the plane references in c64 and c128, where
// cpuref evaluates both the op and its reference (no device): their outputs are
// equal, bit for bit (NaNs as NaNs).
func TestComplexPlaneReferences(t *testing.T) {
	g := &gen{rng: rand.New(rand.NewPCG(3, 4))}
	var cases []opCase
	for _, dt := range []hlo.DType{hlo.C64, hlo.C128} {
		cases = append(append(append(cases, complexScatterCases(t, g, dt)...), complexReduceWindowCases(t, g, dt)...), complexSortCases(t, g, dt)...)
	}
	checked := 0
	for _, c := range cases {
		if c.reference == nil {
			continue // multiply: against cpuref itself
		}
		checked++
		t.Run(c.name, func(t *testing.T) {
			got, err := cpuref.Eval(c.module, c.inputs...)
			require.NoError(t, err)
			want, err := cpuref.Eval(c.reference, c.inputs...)
			require.NoError(t, err)
			gl, wl := got.Leaves(), want.Leaves()
			require.Len(t, gl, len(wl))
			for i := range gl {
				require.NoError(t, vkxla.ErrorSpec{}.Check(gl[i], wl[i]), "output %d", i)
			}
		})
	}
	require.Equal(t, 16, checked, "plane references")
}

// complexGatherCases: rows (indices out of range clamp to the last row and the
// first) and single elements; exact. cpuref gathers c128 plane by plane.
func complexGatherCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	x := randomComplex(g, dt, 10, 7)
	rows := int32Literal(t, []int64{5}, 3, 9, 0, 12, -2)
	points := int32Literal(t, []int64{4, 2}, 0, 0, 9, 6, 4, 3, 11, -1)
	return []opCase{
		complexCase(t, dt, "gather rows", hlo.OpGather, []*hlo.Literal{x, rows}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			gd := hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}
			return b.Gather(ps[0], ps[1], gd, []int64{1, 7})
		}),
		complexCase(t, dt, "gather points", hlo.OpGather, []*hlo.Literal{x, points}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			gd := hlo.GatherDims{CollapsedSliceDims: []int64{0, 1}, StartIndexMap: []int64{0, 1}, IndexVectorDim: 1}
			return b.Gather(ps[0], ps[1], gd, []int64{1, 1})
		}),
	}
}

// rowScatter scatters rows of updates into rows of ps[0] at ps[1] by combiner.
func rowScatter(combiner hlo.Opcode, unique bool) planeBuild {
	return func(t testing.TB, b *hlo.Builder, ps []*hlo.Instruction, et hlo.DType) *hlo.Instruction {
		sd := hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
			ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, UniqueIndices: unique}
		return b.Scatter(ps[:1], ps[1], ps[2:], scalarComputation(t, combiner, et), sd)
	}
}

// complexScatterCases: the paths of a non-atomic combiner (scatter.go), all
// exact as both sides combine in cpuref's order: rows with repeated indices
// (one invocation per window element, each over the scatter positions in
// order) by replacement and by add, with an index whose window does not fit
// (skipped); unique indices (one invocation per update); windows that overlap
// in the indexed dim (one invocation for all). c64 also multiplies, where the
// order of the products matters (c128's planes cannot express a product).
func complexScatterCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	x := randomComplex(g, dt, 10, 6)
	repeated := int32Literal(t, []int64{6}, 3, 7, 3, 0, 10, 3)
	upd := randomComplex(g, dt, 6, 6)
	unique := int32Literal(t, []int64{4}, 1, 4, 8, 2)
	updUnique := randomComplex(g, dt, 4, 6)
	cases := []opCase{
		complexPlaneCase(t, dt, "scatter replace rows", hlo.OpScatter, []*hlo.Literal{x, repeated, upd}, rowScatter(hlo.OpCopy, false)),
		complexPlaneCase(t, dt, "scatter add rows", hlo.OpScatter, []*hlo.Literal{x, repeated, upd}, rowScatter(hlo.OpAdd, false)),
		complexPlaneCase(t, dt, "scatter add unique", hlo.OpScatter, []*hlo.Literal{x, unique, updUnique}, rowScatter(hlo.OpAdd, true)),
		complexPlaneCase(t, dt, "scatter add overlapping windows", hlo.OpScatter,
			[]*hlo.Literal{randomComplex(g, dt, 4, 10), int32Literal(t, []int64{5, 1}, 0, 2, 2, 7, 8), randomComplex(g, dt, 5, 4, 3)},
			func(t testing.TB, b *hlo.Builder, ps []*hlo.Instruction, et hlo.DType) *hlo.Instruction {
				sd := hlo.ScatterDims{UpdateWindowDims: []int64{1, 2}, ScatterDimsToOperandDims: []int64{1}, IndexVectorDim: 1}
				return b.Scatter(ps[:1], ps[1], ps[2:], scalarComputation(t, hlo.OpAdd, et), sd)
			}),
	}
	// No plane reference: a product mixes the parts.
	mul := rowScatter(hlo.OpMultiply, false)
	return append(cases, complexCase(t, dt, "scatter multiply rows", hlo.OpScatter, []*hlo.Literal{x, repeated, upd},
		func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return mul(t, b, ps, dt) }))
}

// complexReduceWindowCases: sums over padded, strided windows of rows, and over
// 3×3 windows with base and window dilation, from an init value that is not 0;
// finite values (a NaN would hide the sums), within reduce's tolerance (both
// sides add in the window's row-major order).
func complexReduceWindowCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	init := complexScalar(dt, complex(1, -0.5))
	sum := func(w []hlo.WindowDim) planeBuild {
		return func(t testing.TB, b *hlo.Builder, ps []*hlo.Instruction, et hlo.DType) *hlo.Instruction {
			return b.ReduceWindow(ps[:1], ps[1:], scalarComputation(t, hlo.OpAdd, et), w)
		}
	}
	rows := []hlo.WindowDim{hlo.NewWindowDim(1), {Size: 5, Stride: 2, PadLow: 2, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
	dilated := []hlo.WindowDim{{Size: 3, Stride: 1, PadLow: 1, PadHigh: 1, WindowDilation: 2, BaseDilation: 2},
		{Size: 3, Stride: 2, WindowDilation: 1, BaseDilation: 2}}
	return []opCase{
		complexPlaneCase(t, dt, "reduce-window sum of rows", hlo.OpReduceWindow,
			[]*hlo.Literal{randomComplexWith(g, dt, nil, 3, 43), init}, sum(rows)),
		complexPlaneCase(t, dt, "reduce-window sum dilated", hlo.OpReduceWindow,
			[]*hlo.Literal{randomComplexWith(g, dt, nil, 6, 9), init}, sum(dilated)),
	}
}

// sortKeys is an array of dt whose real parts repeat (so that imaginary parts
// decide) and whose parts include signed zeros, infinities and NaNs, which the
// total order places.
func sortKeys(g *gen, dt hlo.DType, dims ...int64) *hlo.Literal {
	reals := []float64{-1, negZero(), 0, 0.5, inf(), nan64(), -inf()}
	imags := []float64{negZero(), 0, 1, -2, nan64()}
	l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i := range l.NumElements() {
		im := imags[g.rng.IntN(len(imags))]
		if g.rng.IntN(2) == 0 {
			im = g.rng.Float64()*4 - 2
		}
		l.SetComplex128(i, complex(reals[g.rng.IntN(len(reals))], im))
	}
	return l
}

// lexLess is the comparator of parts (ar, ai) and (br, bi): ar < br, or ar = br
// and ai < bi, in the total order of the part type (−NaN < −inf < … < −0 < +0 <
// … < +NaN), which orders every value.
func lexLess(b *hlo.Builder, ar, ai, br, bi *hlo.Instruction) *hlo.Instruction {
	cmp := func(x, y *hlo.Instruction, dir hlo.ComparisonDirection) *hlo.Instruction {
		return b.CompareTyped(x, y, dir, hlo.CompareTotalOrder)
	}
	return b.Or(cmp(ar, br, hlo.CmpLT), b.And(cmp(ar, br, hlo.CmpEQ), cmp(ai, bi, hlo.CmpLT)))
}

// complexLexLess is lexLess on complex scalars a, b of dt (the comparator's
// first two parameters), with the others (values sorted along) of types rest.
func complexLexLess(t testing.TB, dt hlo.DType, rest ...hlo.DType) *hlo.Computation {
	b := hlo.NewBuilder("lex_less_" + dt.String())
	x, y := b.Parameter(hlo.Scalar(dt), "a"), b.Parameter(hlo.Scalar(dt), "b")
	for _, r := range rest {
		b.Parameter(hlo.Scalar(r), "")
		b.Parameter(hlo.Scalar(r), "")
	}
	c, err := b.BuildComputation(lexLess(b, b.Real(x), b.Imag(x), b.Real(y), b.Imag(y)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// planeLexLess is lexLess on the planes of the reference's sort: parameters
// (re a, re b, im a, im b) of part, then pairs of rest.
func planeLexLess(t testing.TB, part hlo.DType, rest ...hlo.DType) *hlo.Computation {
	b := hlo.NewBuilder("plane_lex_less_" + part.String())
	var ps []*hlo.Instruction
	for range 4 {
		ps = append(ps, b.Parameter(hlo.Scalar(part), ""))
	}
	for _, r := range rest {
		b.Parameter(hlo.Scalar(r), "")
		b.Parameter(hlo.Scalar(r), "")
	}
	c, err := b.BuildComputation(lexLess(b, ps[0], ps[2], ps[1], ps[3]))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// complexSortCases: complex keys along the last dim and, with s32 values
// carried along (ties keep their order: stable), along the first; exact.
func complexSortCases(t testing.TB, g *gen, dt hlo.DType) []opCase {
	keys := sortKeys(g, dt, 3, 43)
	kvKeys := sortKeys(g, dt, 43, 3)
	vals := randomLiteral(g.rng, hlo.MakeShape(hlo.S32, 43, 3), domain{-100, 100})
	return []opCase{
		complexSortCase(t, dt, "sort by parts", []*hlo.Literal{keys}, 1),
		complexSortCase(t, dt, "sort by parts with values", []*hlo.Literal{kvKeys, vals}, 0),
	}
}

// complexSortCase sorts inputs (complex keys, then values) along dim by
// complexLexLess; the reference sorts the keys' planes and the values
// by planeLexLess and joins the planes.
func complexSortCase(t testing.TB, dt hlo.DType, name string, inputs []*hlo.Literal, dim int64) opCase {
	var rest []hlo.DType
	for _, in := range inputs[1:] {
		rest = append(rest, in.DType())
	}
	c := complexCase(t, dt, name, hlo.OpSort, inputs, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Sort(ps, complexLexLess(t, dt, rest...), dim, true)
	})
	b := hlo.NewBuilder(c.name + " on planes")
	ps := make([]*hlo.Instruction, len(inputs))
	for i, in := range inputs {
		ps[i] = b.Parameter(in.Shape(), "")
	}
	operands := append([]*hlo.Instruction{b.Real(ps[0]), b.Imag(ps[0])}, ps[1:]...)
	sorted := b.Sort(operands, planeLexLess(t, dt.ComplexPart(), rest...), dim, true)
	outs := []*hlo.Instruction{b.Complex(b.GetTupleElement(sorted, 0), b.GetTupleElement(sorted, 1))}
	for i := range rest {
		outs = append(outs, b.GetTupleElement(sorted, int64(2+i)))
	}
	root := outs[0]
	if len(outs) > 1 {
		root = b.Tuple(outs...)
	}
	c.reference = mustBuild(t, b, root)
	return c
}
