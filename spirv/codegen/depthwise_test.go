package codegen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestDepthwiseEpilogue: a kernel whose root is an epilogue of a depthwise
// convolution (bias + ReLU6; a residual add converted to f32) lowers to the
// depthwise kernel alone, for lavapipe and a small device; every kernel
// validates, Facts agree with Lower, and the residual, read only at the element
// being stored, may be overwritten in place.
func TestDepthwiseEpilogue(t *testing.T) {
	reluBias := func(dt hlo.DType) *hlo.Computation {
		b := newCB(t, "dw_relu6")
		x, w, bias := b.param(s(dt, 2, 10, 9, 16)), b.param(s(dt, 3, 3, 1, 16)), b.param(s(dt, 16))
		conv := b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: win(3, 1, 1, 1, 1), FeatureGroupCount: 16, BatchGroupCount: 1}, nil, x, w)
		bb := b.declared(hlo.OpBroadcast, conv.Shape, hlo.Attributes{Dimensions: []int64{3}}, bias)
		lo, hi := b.constant(scalarOf(dt, 0)), b.constant(scalarOf(dt, 6))
		return b.build(b.simple(hlo.OpClamp, lo, b.simple(hlo.OpAdd, conv, bb), hi))
	}
	residual := func() *hlo.Computation {
		b := newCB(t, "dw_residual")
		x, w, res := b.param(s(hlo.BF16, 1, 12, 12, 8)), b.param(s(hlo.BF16, 5, 5, 1, 8)), b.param(s(hlo.BF16, 1, 6, 6, 8))
		conv := b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: win(5, 2, 2, 1, 1), FeatureGroupCount: 8, BatchGroupCount: 1}, nil, x, w)
		sum := b.simple(hlo.OpAdd, conv, res)
		return b.build(b.declared(hlo.OpConvert, s(hlo.F32, 1, 6, 6, 8), hlo.Attributes{}, sum))
	}
	cases := map[string]*hlo.Computation{"f32": reluBias(hlo.F32), "bf16": reluBias(hlo.BF16), "residual": residual()}
	for name, c := range cases {
		for _, target := range []Target{LavapipeTarget(), smallTarget()} {
			p := lowerFor(t, c, target)
			require.Len(t, p.Dispatches, 1, name)
			require.True(t, strings.HasSuffix(p.Dispatches[0].Kernel.Name, "depthwise"), "%s: %s", name, p.Dispatches[0].Kernel.Name)
			checkFacts(t, name, c, target)
		}
	}
	p := lowerOK(t, cases["residual"])
	require.Equal(t, []bool{false, false, true}, p.InPlace, "the residual is read only where it is stored")
}

// scalarOf is the dt scalar v.
func scalarOf(dt hlo.DType, v float64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	l.SetFloat64(0, v)
	return l
}

// TestDepthwiseReadsTexels: the depthwise kernel reads its input and filter
// through uniform texel buffers (four f32, or the four u16 of 16-bit floats, per
// texel) after its storage buffers where the target has them; not on a target
// without texel buffers, not for an input with more texels than one view may
// cover, and no more texel buffers than the target allows. The input stays bound
// as a storage buffer.
func TestDepthwiseReadsTexels(t *testing.T) {
	conv := func(dt hlo.DType) *hlo.Computation {
		b := newCB(t, "dw")
		x, w := b.param(s(dt, 1, 10, 9, 16)), b.param(s(dt, 3, 3, 1, 16))
		return b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: win(3, 1, 1, 1, 1), FeatureGroupCount: 16, BatchGroupCount: 1}, nil, x, w))
	}
	texels := func(c *hlo.Computation, target Target) []Texel {
		p := lowerFor(t, c, target)
		require.Len(t, p.Dispatches, 1)
		k := p.Dispatches[0].Kernel
		require.True(t, strings.HasSuffix(k.Name, "depthwise"), k.Name)
		require.Equal(t, 3, k.Bindings, "input, filter and output stay storage buffers")
		return k.Texels
	}
	lp := LavapipeTarget()
	require.ElementsMatch(t, []Texel{{Arg: 0, Format: TexelRGBA32U}, {Arg: 1, Format: TexelRGBA32U}}, texels(conv(hlo.F32), lp))
	require.ElementsMatch(t, []Texel{{Arg: 0, Format: TexelRGBA16U}, {Arg: 1, Format: TexelRGBA16U}}, texels(conv(hlo.BF16), lp))
	require.ElementsMatch(t, []Texel{{Arg: 0, Format: TexelRGBA16U}, {Arg: 1, Format: TexelRGBA16U}}, texels(conv(hlo.F16), lp))

	none := lp
	none.MaxTexelBufferElements = 0
	require.Empty(t, texels(conv(hlo.F32), none))
	one := lp
	one.MaxTexelBuffers = 1
	require.Len(t, texels(conv(hlo.F32), one), 1)
	small := lp
	small.MaxTexelBufferElements = 10 * 9 * 16 / 4 // the input's 360 texels fit, exactly
	require.Len(t, texels(conv(hlo.F32), small), 2)
	small.MaxTexelBufferElements--
	require.Equal(t, []Texel{{Arg: 1, Format: TexelRGBA32U}}, texels(conv(hlo.F32), small), "only the filter fits a view")
}
