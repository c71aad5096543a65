package codegen

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// rowNormalise is x − reduce(x) over the minor dims of x, of type dt and dims rows ++ cols,
// with the reducer op.
func rowNormalise(t *testing.T, dt hlo.DType, op hlo.Opcode, rows, cols []int64) *hlo.Computation {
	b := newCB(t, "rows")
	full := append(slices.Clone(rows), cols...)
	x := b.param(s(dt, full...))
	var dims, keep []int64
	for d := range full {
		if d < len(rows) {
			keep = append(keep, int64(d))
		} else {
			dims = append(dims, int64(d))
		}
	}
	init := b.constant(hlo.NewLiteral(hlo.Scalar(dt)))
	r := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: dims}, []*hlo.Computation{scalarComp(t, op, dt)}, x, init)
	rb := b.declared(hlo.OpBroadcast, s(dt, full...), hlo.Attributes{Dimensions: keep}, r)
	return b.build(b.simple(hlo.OpSubtract, x, rb))
}

// Row kernels: one dispatch, valid SPIR-V, a subgroup per row where the reducer
// combines by subgroup arithmetic and the target has it, one invocation per row
// otherwise; the row input may be written in place.
func TestRowKernel(t *testing.T) {
	noSubgroups := LavapipeTarget()
	noSubgroups.SubgroupArithmetic = false
	for _, tc := range []struct {
		name       string
		c          *hlo.Computation
		t          Target
		cooperates bool
	}{
		{"f32 add, vec4", rowNormalise(t, hlo.F32, hlo.OpAdd, []int64{6}, []int64{64}), LavapipeTarget(), true},
		{"f32 max, odd columns", rowNormalise(t, hlo.F32, hlo.OpMaximum, []int64{6}, []int64{13}), LavapipeTarget(), true},
		{"f32 min, rank-2 rows and columns", rowNormalise(t, hlo.F32, hlo.OpMinimum, []int64{2, 3}, []int64{4, 8}), LavapipeTarget(), true},
		{"s32 max", rowNormalise(t, hlo.S32, hlo.OpMaximum, []int64{5}, []int64{20}), LavapipeTarget(), true},
		{"f16 add: one invocation per row", rowNormalise(t, hlo.F16, hlo.OpAdd, []int64{5}, []int64{20}), LavapipeTarget(), false},
		{"f32 multiply: one invocation per row", rowNormalise(t, hlo.F32, hlo.OpMultiply, []int64{5}, []int64{20}), LavapipeTarget(), false},
		{"f32 add without subgroup arithmetic", rowNormalise(t, hlo.F32, hlo.OpAdd, []int64{5}, []int64{20}), noSubgroups, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp, ok := planRows(tc.c)
			require.True(t, ok)
			require.Equal(t, tc.cooperates, rowSubgroupOps(rp, tc.t) != nil)
			p := lowerFor(t, tc.c, tc.t)
			require.Len(t, p.Dispatches, 1)
			require.Equal(t, []bool{true}, p.InPlace)
			facts, err := Facts(tc.c, tc.t)
			require.NoError(t, err)
			require.Equal(t, p.InPlace, facts.InPlace)
		})
	}
}

// A row kernel with a tuple root of same-dims outputs (sibling fusion's) sweeps
// both in its output pass: one dispatch writing two outputs, valid SPIR-V, vec4
// and scalar sweeps; outputs of other dims (the reduction itself among them)
// make no row kernel.
func TestRowKernelMultiOutput(t *testing.T) {
	twoOutputs := func(cols int64, second func(b *cb, x, diff *hlo.Instruction) *hlo.Instruction) *hlo.Computation {
		b := newCB(t, "rows2")
		x := b.param(s(hlo.F32, 6, cols))
		init := b.constant(hlo.NewLiteral(hlo.Scalar(hlo.F32)))
		r := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{scalarComp(t, hlo.OpAdd, hlo.F32)}, x, init)
		rb := b.declared(hlo.OpBroadcast, s(hlo.F32, 6, cols), hlo.Attributes{Dimensions: []int64{0}}, r)
		diff := b.simple(hlo.OpSubtract, x, rb)
		return b.build(b.simple(hlo.OpTuple, diff, second(b, x, diff)))
	}
	exp := func(b *cb, x, _ *hlo.Instruction) *hlo.Instruction { return b.simple(hlo.OpExp, x) }
	for _, tc := range []struct {
		name string
		c    *hlo.Computation
	}{
		{"vec4 sweep", twoOutputs(64, exp)},
		{"scalar sweep", twoOutputs(13, exp)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp, ok := planRows(tc.c)
			require.True(t, ok)
			require.Equal(t, []int64{6}, rp.rowDims)
			p := lowerFor(t, tc.c, LavapipeTarget())
			require.Len(t, p.Dispatches, 1)
			require.Len(t, p.Outputs, 2)
		})
	}
	b := newCB(t, "rows_other_dims")
	x := b.param(s(hlo.F32, 6, 8))
	r := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{scalarComp(t, hlo.OpAdd, hlo.F32)}, x, b.constant(hlo.NewLiteral(hlo.Scalar(hlo.F32))))
	rb := b.declared(hlo.OpBroadcast, s(hlo.F32, 6, 8), hlo.Attributes{Dimensions: []int64{0}}, r)
	_, ok := planRows(b.build(b.simple(hlo.OpTuple, b.simple(hlo.OpSubtract, x, rb), r)))
	require.False(t, ok, "outputs of other dims (the reduction itself) make no row kernel")
}

// A reduction over a major dim, or one whose rows do not lead the root, is no row
// kernel: it keeps the elemental loop.
func TestRowKernelRefused(t *testing.T) {
	b := newCB(t, "cols")
	x := b.param(s(hlo.F32, 8, 4))
	zero := b.constant(hlo.ScalarLiteral[float32](0))
	c := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{0}}, []*hlo.Computation{scalarComp(t, hlo.OpAdd, hlo.F32)}, x, zero)
	cb := b.declared(hlo.OpBroadcast, s(hlo.F32, 8, 4), hlo.Attributes{Dimensions: []int64{1}}, c)
	comp := b.build(b.simple(hlo.OpDivide, x, cb))
	_, ok := planRows(comp)
	require.False(t, ok)
	require.Len(t, lowerOK(t, comp).Dispatches, 1)
}

// softmaxRows is softmax over the minor dim of dt[rows, cols], plus extra(x) when
// given: exp(x − max) / Σ exp(x − max), the max and the sum row reductions.
func softmaxRows(t *testing.T, dt hlo.DType, rows, cols int64, extra func(b *cb, x, y *hlo.Instruction) *hlo.Instruction) *hlo.Computation {
	b := newCB(t, "softmax")
	x := b.param(s(dt, rows, cols))
	row := func(op hlo.Opcode, v *hlo.Instruction) *hlo.Instruction {
		init := b.constant(hlo.NewLiteral(hlo.Scalar(dt)))
		r := b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{scalarComp(t, op, dt)}, v, init)
		return b.declared(hlo.OpBroadcast, s(dt, rows, cols), hlo.Attributes{Dimensions: []int64{0}}, r)
	}
	e := b.simple(hlo.OpExp, b.simple(hlo.OpSubtract, x, row(hlo.OpMaximum, x)))
	y := b.simple(hlo.OpDivide, e, row(hlo.OpAdd, e))
	if extra != nil {
		y = extra(b, x, y)
	}
	return b.build(y)
}

// A row kernel computes softmax's exp(x − max) once per element: the sum's sweep
// keeps it in the output buffer and the output sweep reads it back, so the kernel
// holds one Exp per element of a sweep's group (4 in a vec4 sweep, 1 in a scalar
// one; also with a second output) where recomputing it would hold two. Where the
// output sweep also reads an input that may be written in place (x itself, here),
// the early store would overwrite x before that read, and exp is computed twice.
func TestRowKernelKeepsExpensiveValue(t *testing.T) {
	noSubgroups := LavapipeTarget()
	noSubgroups.SubgroupArithmetic = false
	plusX := func(b *cb, x, y *hlo.Instruction) *hlo.Instruction { return b.simple(hlo.OpAdd, y, x) }
	withSquare := func(b *cb, _, y *hlo.Instruction) *hlo.Instruction {
		return b.simple(hlo.OpTuple, y, b.simple(hlo.OpMultiply, y, y))
	}
	for _, tc := range []struct {
		name string
		c    *hlo.Computation
		t    Target
		exps int
	}{
		{"f32 vec4 sweep, subgroup per row", softmaxRows(t, hlo.F32, 6, 64, nil), LavapipeTarget(), 4},
		{"f32 scalar sweep", softmaxRows(t, hlo.F32, 6, 13, nil), LavapipeTarget(), 1},
		{"f32 vec4 sweep, one invocation per row", softmaxRows(t, hlo.F32, 6, 64, nil), noSubgroups, 4},
		{"bf16, kept in a bf16 buffer", softmaxRows(t, hlo.BF16, 6, 64, nil), LavapipeTarget(), 4},
		{"output sweep reads the in-place input", softmaxRows(t, hlo.F32, 6, 64, plusX), LavapipeTarget(), 8},
		{"two outputs, kept in the first", softmaxRows(t, hlo.F32, 6, 64, withSquare), LavapipeTarget(), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := lowerFor(t, tc.c, tc.t)
			require.Len(t, p.Dispatches, 1)
			require.Equal(t, []bool{true}, p.InPlace)
			require.Equal(t, tc.exps, strings.Count(disassembly(t, p), " Exp "))
		})
	}
}
