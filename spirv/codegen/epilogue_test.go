package codegen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// epilogueOf is tanh(x·w + bias) (+ residual when given) for x m×k and w k×n of type dt.
func epilogueOf(t *testing.T, dt hlo.DType, m, k, n int64, residual bool) *hlo.Computation {
	b := newCB(t, "epilogue")
	x, w, bias := b.param(s(dt, m, k)), b.param(s(dt, k, n)), b.param(s(dt, n))
	d := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}, nil, x, w)
	bb := b.declared(hlo.OpBroadcast, s(dt, m, n), hlo.Attributes{Dimensions: []int64{1}}, bias)
	y := b.simple(hlo.OpTanh, b.simple(hlo.OpAdd, d, bb))
	if residual {
		y = b.simple(hlo.OpAdd, y, b.param(s(dt, m, n)))
	}
	return b.build(y)
}

// A dot under an elementwise epilogue lowers as its GEMM, one dispatch, valid for
// the vec4 and the scalar store, f32 and bf16; a residual is in place, the
// product's operands never.
func TestGEMMEpilogue(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        *hlo.Computation
		inPlace  []bool
		residual bool
	}{
		{"f32 vec4 store", epilogueOf(t, hlo.F32, 64, 64, 64, false), []bool{false, false, false}, false},
		{"f32 odd N", epilogueOf(t, hlo.F32, 64, 64, 30, false), []bool{false, false, false}, false},
		{"bf16", epilogueOf(t, hlo.BF16, 32, 64, 32, false), []bool{false, false, false}, false},
		{"residual", epilogueOf(t, hlo.F32, 64, 64, 64, true), []bool{false, false, false, true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotNil(t, gemmDot(tc.c))
			l, err := newLowering(tc.c, LavapipeTarget())
			require.NoError(t, err)
			require.Equal(t, byGEMM, l.strategy())
			p := lowerOK(t, tc.c)
			require.Len(t, p.Dispatches, 1)
			require.Equal(t, tc.inPlace, p.InPlace)
			facts, err := Facts(tc.c, LavapipeTarget())
			require.NoError(t, err)
			require.Equal(t, p.InPlace, facts.InPlace)
		})
	}
}

// A product read elsewhere than at its own index (transposed) is no epilogue.
func TestGEMMEpilogueRefused(t *testing.T) {
	b := newCB(t, "transposed")
	x, w := b.param(s(hlo.F32, 64, 64)), b.param(s(hlo.F32, 64, 64))
	d := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}, nil, x, w)
	tr := b.declared(hlo.OpTranspose, s(hlo.F32, 64, 64), hlo.Attributes{Dimensions: []int64{1, 0}}, d)
	c := b.build(b.simple(hlo.OpAdd, tr, x))
	require.Nil(t, gemmDot(c))
}
