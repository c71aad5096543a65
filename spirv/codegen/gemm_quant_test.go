package codegen

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestQuantisedB: a dot whose B is a dequantised s4/s8/f8 weight (times a
// per-channel or per-group scale) reads the weight as packed u32 words (a texel
// buffer, or a u32 view of its binding; unpacked in registers) in both layouts, the GEMV's and the GEMM's, and
// finds the scale's group; a layout whose rows do not start on a word (odd N of
// s4, x·W) or whose columns do not (K·bits not a multiple of 32, x·Wᵀ) reads
// element by element. Every kernel validates (lowerOK); the numerics are
// TestQuantisedDotOnDevice's.
func TestQuantisedB(t *testing.T) {
	std := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	nk := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}
	for _, tc := range []struct {
		name  string
		wdt   hlo.DType
		m     int64
		w     []int64
		dd    *hlo.DotDims
		scale string // "", "channel", "group"
		words bool
		group int64
	}{
		{"s4 x·W", hlo.S4, 1, []int64{256, 64}, std, "", true, 0},
		{"s4 x·W per channel", hlo.S4, 1, []int64{256, 64}, std, "channel", true, 256},
		{"s4 x·W per group, sliced", hlo.S4, 1, []int64{1024, 256}, std, "group", true, 32},
		{"s8 x·Wᵀ per group", hlo.S8, 1, []int64{64, 256}, nk, "group", true, 32},
		{"f8 GEMM x·W", hlo.F8E4M3FN, 20, []int64{64, 40}, std, "channel", true, 64},
		{"s4 odd N", hlo.S4, 1, []int64{96, 75}, std, "", false, 0},
		{"s4 x·Wᵀ odd K", hlo.S4, 2, []int64{64, 77}, nk, "", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "quant")
			kDim := tc.dd.RhsContracting[0]
			x := b.param(s(hlo.F32, tc.m, tc.w[kDim]))
			w := b.param(s(tc.wdt, tc.w...))
			rhs := b.declared(hlo.OpConvert, s(hlo.F32, tc.w...), hlo.Attributes{}, w)
			switch tc.scale {
			case "channel":
				sc := b.param(s(hlo.F32, tc.w[1-kDim]))
				sb := b.declared(hlo.OpBroadcast, s(hlo.F32, tc.w...), hlo.Attributes{Dimensions: []int64{1 - kDim}}, sc)
				rhs = b.simple(hlo.OpMultiply, rhs, sb)
			case "group":
				k, n := tc.w[kDim], tc.w[1-kDim]
				sdims, gdims, bdims := []int64{k / 32, n}, []int64{k / 32, 32, n}, []int64{0, 2}
				if kDim == 1 {
					sdims, gdims, bdims = []int64{n, k / 32}, []int64{n, k / 32, 32}, []int64{0, 1}
				}
				sc := b.param(s(hlo.F32, sdims...))
				sg := b.declared(hlo.OpBroadcast, s(hlo.F32, gdims...), hlo.Attributes{Dimensions: bdims}, sc)
				sb := b.declared(hlo.OpReshape, s(hlo.F32, tc.w...), hlo.Attributes{}, sg)
				rhs = b.simple(hlo.OpMultiply, rhs, sb)
			}
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: tc.dd}, nil, x, rhs)
			gs, ok := gemmView(root)
			require.True(t, ok)
			q, ok := quantView(gs)
			require.True(t, ok)
			require.Equal(t, tc.group, q.group, "the scale's group of k")
			p := lowerOK(t, b.build(root))
			d := disassembly(t, p)
			words := strings.Contains(d, "in1_u32") || strings.Contains(d, fmt.Sprintf("in1_%s", TexelR32U))
			require.Equal(t, tc.words, words, "the weight read as packed words (a u32 view or an R32 texel buffer)")
		})
	}
}

// TestQuantisedColumnOctets: the GEMV of x·Wᵀ with W s4 (stored N×K) reads each
// column's 32-bit word once for its 8 k, whole (N = 1024: 128 blocks) or split
// into parts (N = 64: 8 blocks, K in 2 parts): the loop body fetches one word
// per column (8 columns; the other two fetches are x's two quads) and cuts 8 signed nibbles out
// of each (64 arithmetic shifts by 28), where reading 4 k per fetch took 32.
func TestQuantisedColumnOctets(t *testing.T) {
	for _, n := range []int64{1024, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := newCB(t, "octets")
			x := b.param(s(hlo.F32, 1, 256))
			w := b.param(s(hlo.S4, n, 256))
			rhs := b.declared(hlo.OpConvert, s(hlo.F32, n, 256), hlo.Attributes{}, w)
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}}, nil, x, rhs)
			p := lowerOK(t, b.build(root))
			d := disassembly(t, p)
			require.Equal(t, 10, strings.Count(d, "OpImageFetch"), "one word fetch per column, and x's two quads")
			signExtends := regexp.MustCompile(`OpShiftRightArithmetic %int %\d+ %uint_28`).FindAllString(d, -1)
			require.Len(t, signExtends, 64, "8 nibbles of each of the 8 columns' words")
		})
	}
}

// TestQuantisedRowTexels: the sliced one-row GEMV of x·W with W s4 (stored K×N,
// N a multiple of 32) takes 32 columns, one RGBA32 texel of W per k (4 words,
// 32 nibbles); with N = 240 it takes 16 columns, two R32 words per k. The loop
// body is one quad of k.
func TestQuantisedRowTexels(t *testing.T) {
	for _, tc := range []struct {
		n      int64
		format TexelFormat
	}{{256, TexelRGBA32U}, {240, TexelR32U}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			b := newCB(t, "rows")
			x := b.param(s(hlo.F32, 1, 1024))
			w := b.param(s(hlo.S4, 1024, tc.n))
			rhs := b.declared(hlo.OpConvert, s(hlo.F32, 1024, tc.n), hlo.Attributes{}, w)
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}, nil, x, rhs)
			d := disassembly(t, lowerOK(t, b.build(root)))
			require.Contains(t, d, fmt.Sprintf("in1_%s", tc.format))
			fetches := 1
			if tc.format == TexelR32U {
				fetches = 2
			}
			require.Equal(t, 4*fetches+1, strings.Count(d, "OpImageFetch"), "W's fetches for each of a quad's 4 k, and x's quad")
		})
	}
}
