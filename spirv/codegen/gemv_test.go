package codegen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

// disassembly is the text of a program's first kernel (the GEMV, or its partial
// sums when K is split).
func disassembly(t *testing.T, p *Program) string {
	t.Helper()
	words, err := spirv.Words(p.Dispatches[0].Kernel.SPIRV)
	require.NoError(t, err)
	text, err := tools.Disassemble(words)
	require.NoError(t, err)
	return text
}

// TestGEMV: dots of 1 to 4 rows lower as the GEMV (validated), reading B as vec4
// in both layouts (N minor, and K minor: the transposed weight, q·Kᵀ), with batch
// dims, in f32, f16 and bf16, and through a fused widening convert of B.
func TestGEMV(t *testing.T) {
	std := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	nk := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}
	batched := &hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{2}}
	for _, tc := range []struct {
		name  string
		dt    hlo.DType
		a, b  []int64
		dd    *hlo.DotDims
		bVec4 bool
	}{
		{"x·W, W K×N", hlo.F32, []int64{1, 768}, []int64{768, 2304}, std, true},
		{"4 rows, W N×K", hlo.F32, []int64{4, 256}, []int64{300, 256}, nk, true},
		{"odd N and K", hlo.F32, []int64{3, 77}, []int64{77, 93}, std, false},
		{"q·Kᵀ over a cache, batched", hlo.F32, []int64{12, 1, 64}, []int64{12, 512, 64}, batched, true},
		{"bf16", hlo.BF16, []int64{2, 128}, []int64{128, 96}, std, true},
		{"f16, W N×K", hlo.F16, []int64{1, 128}, []int64{96, 128}, nk, true},
		// W·x: the GEMV of Cᵀ, W its B (vec4 along K, or along M when stored K×M).
		{"W·x, W M×K", hlo.F32, []int64{768, 256}, []int64{256, 1}, std, true},
		{"W·X, 4 columns", hlo.BF16, []int64{300, 128}, []int64{128, 4}, std, true},
		{"Wᵀ·x, W K×M", hlo.F32, []int64{256, 768}, []int64{256, 1}, &hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{0}}, true},
		{"odd K", hlo.F16, []int64{300, 131}, []int64{131, 1}, std, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "gemv")
			x, y := b.param(s(tc.dt, tc.a...)), b.param(s(tc.dt, tc.b...))
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: tc.dd}, nil, x, y)
			require.True(t, useGEMV(root, LavapipeTarget()))
			p := lowerOK(t, b.build(root))
			require.Contains(t, p.Dispatches[0].Kernel.Name, "gemv")
			w := 1 // the matrix: B, or A for W·x (many rows)
			if tc.a[len(tc.a)-2] > gemvMaxRows {
				w = 0
			}
			require.Equal(t, tc.bVec4, readsVec4(disassembly(t, p), w), "the matrix through a vec4 view")
		})
	}
	t.Run("fused widening convert read as bf16 vec4", func(t *testing.T) {
		b := newCB(t, "gemv_convert")
		x, w := b.param(s(hlo.BF16, 1, 256)), b.param(s(hlo.BF16, 256, 128))
		xc := b.declared(hlo.OpConvert, s(hlo.F32, 1, 256), hlo.Attributes{}, x)
		wc := b.declared(hlo.OpConvert, s(hlo.F32, 256, 128), hlo.Attributes{}, w)
		p := lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: std}, nil, xc, wc)))
		require.True(t, readsVec4(disassembly(t, p), 1))
	})
	// Not a GEMV: 5 rows and 5 columns (the GEMM), too little of B, one row and
	// one column.
	for _, tc := range []struct{ a, b []int64 }{{[]int64{5, 256}, []int64{256, 256}}, {[]int64{1, 32}, []int64{32, 16}},
		{[]int64{256, 256}, []int64{256, 5}}, {[]int64{16, 16}, []int64{16, 1}}, {[]int64{1, 4096}, []int64{4096, 1}}} {
		b := newCB(t, "not_gemv")
		x, y := b.param(s(hlo.F32, tc.a...)), b.param(s(hlo.F32, tc.b...))
		require.False(t, useGEMV(b.op(hlo.OpDot, hlo.Attributes{Dot: std}, nil, x, y), LavapipeTarget()), "%v·%v", tc.a, tc.b)
	}
}

// TestGEMVSplitK: K is split into parts (partial sums in scratch, then their sum
// with the epilogue) when the output has few blocks, and when K's loop would pass
// the target's bound; the facts agree with the program.
func TestGEMVSplitK(t *testing.T) {
	std := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
	small := LavapipeTarget()
	small.MaxLoopIterations = 400
	for _, tc := range []struct {
		name   string
		target Target
		a, b   []int64
		parts  int64
	}{
		// 1 block of 16 columns: min(256 blocks, 4096/4/32 quads per part) parts.
		{"narrow output", LavapipeTarget(), []int64{2, 4096}, []int64{4096, 16}, 32},
		// 8192/16 = 512 blocks: not split (2 rows: not sliced).
		{"wide output", LavapipeTarget(), []int64{2, 256}, []int64{256, 8192}, 1},
		// K = 2002: 500 quads and 2 more, in parts of 84 quads (within a quarter
		// of the bound: 100 iterations).
		{"past the loop bound", small, []int64{3, 2002}, []int64{2002, 1024}, 6},
		// One row over W with N minor: K in slices of 4 quads (768/16 = 48),
		// past the loop bound too (K = 1202: 300 quads in 75 parts, within a quarter of the
		// bound for the sum pass); where slices would pass that (2002/16: 126
		// parts), K is split for the bound alone.
		{"x·W sliced", LavapipeTarget(), []int64{1, 768}, []int64{768, 2304}, 48},
		{"x·W sliced past the loop bound", small, []int64{1, 1202}, []int64{1202, 1024}, 75},
		{"x·W, too many slices", small, []int64{1, 2002}, []int64{2002, 1024}, 6},
		// Not sliced: 2 rows; N·K below gemvSliceWork (256/16 blocks: split in 8 for work).
		{"2 rows", LavapipeTarget(), []int64{2, 768}, []int64{768, 2304}, 1},
		{"small", LavapipeTarget(), []int64{1, 256}, []int64{256, 256}, 2},
		// W·x: 1024/8 = 128 blocks of Cᵀ, split only past the loop bound.
		{"W·x", LavapipeTarget(), []int64{1024, 4096}, []int64{4096, 1}, 1},
		{"W·x past the loop bound", small, []int64{1024, 2002}, []int64{2002, 1}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "gemv_split")
			x, y := b.param(s(hlo.F32, tc.a...)), b.param(s(hlo.F32, tc.b...))
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: std}, nil, x, y)
			require.True(t, useGEMV(root, tc.target))
			gv, _ := gemvView(root)
			require.Equal(t, tc.parts, gemvParts(gv.gemmShape, tc.target))
			c := b.build(root)
			p := lowerFor(t, c, tc.target)
			checkFacts(t, tc.name, c, tc.target)
			if tc.parts == 1 {
				require.Len(t, p.Dispatches, 1)
				require.Empty(t, p.Scratch)
				return
			}
			require.Len(t, p.Dispatches, 2)
			require.Contains(t, p.Dispatches[0].Kernel.Name, "gemv_partial")
			require.Contains(t, p.Dispatches[1].Kernel.Name, "gemv_sum")
			require.Equal(t, []int64{tc.parts * tc.a[0] * tc.b[1] * 4}, p.Scratch, "one C of partial sums per part")
		})
	}
}
