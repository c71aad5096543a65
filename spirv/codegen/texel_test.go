package codegen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestElementReadsUseScalarTexels: element-by-element reads of an input not written
// in place (a transpose's) go through a one-element-per-texel view of 32- or
// 16-bit types; an elementwise kernel's in-place input and 8-bit inputs stay
// storage-buffer reads.
func TestElementReadsUseScalarTexels(t *testing.T) {
	texels := func(dt hlo.DType, op hlo.Opcode) []Texel {
		b := newCB(t, "k")
		x := b.param(s(dt, 6, 10))
		var root *hlo.Instruction
		if op == hlo.OpTranspose {
			root = b.declared(hlo.OpTranspose, s(dt, 10, 6), hlo.Attributes{Dimensions: []int64{1, 0}}, x)
		} else {
			root = b.simple(op, x)
		}
		p := lowerOK(t, b.build(root))
		require.Len(t, p.Dispatches, 1)
		return p.Dispatches[0].Kernel.Texels
	}
	require.Equal(t, []Texel{{Arg: 0, Format: TexelR32U}}, texels(hlo.F32, hlo.OpTranspose))
	require.Equal(t, []Texel{{Arg: 0, Format: TexelR32U}}, texels(hlo.S32, hlo.OpTranspose))
	require.Equal(t, []Texel{{Arg: 0, Format: TexelR16U}}, texels(hlo.BF16, hlo.OpTranspose))
	require.Equal(t, []Texel{{Arg: 0, Format: TexelR16U}}, texels(hlo.S16, hlo.OpTranspose))
	require.Empty(t, texels(hlo.S8, hlo.OpTranspose), "8-bit: no texel format")
	require.Empty(t, texels(hlo.F32, hlo.OpNegate), "read where it may be written in place")
}
