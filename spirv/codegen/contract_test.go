package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/tools"
)

func TestDotNaive(t *testing.T) {
	for _, dt := range hlo.AllDTypes {
		if !dt.IsNumeric() {
			continue
		}
		t.Run(dt.String(), func(t *testing.T) {
			// Batched, with the contracting dim first in rhs.
			b := newCB(t, "dot")
			x, y := b.param(s(dt, 2, 5, 7)), b.param(s(dt, 2, 7, 3))
			dd := &hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}
			lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, x, y)))
			// Outer product (no contracting dims) and vector·vector.
			b = newCB(t, "outer")
			x, y = b.param(s(dt, 4)), b.param(s(dt, 3))
			lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{}, nil, x, y)))
			b = newCB(t, "vdot")
			x, y = b.param(s(dt, 40)), b.param(s(dt, 40))
			dd = &hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{0}}
			lowerOK(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, x, y)))
		})
	}
}

func convDims2D() *hlo.ConvDims {
	// b01f_01io->b01f
	return &hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
}

func TestConvolution(t *testing.T) {
	for _, dt := range []hlo.DType{hlo.F32, hlo.F16, hlo.BF16, hlo.F64, hlo.S32, hlo.S8} {
		t.Run(dt.String(), func(t *testing.T) {
			w := []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(3)}
			w[0].Stride, w[0].PadLow, w[0].PadHigh = 2, 1, 1
			w[1].BaseDilation, w[1].WindowDilation, w[1].WindowReversal = 2, 2, true
			b := newCB(t, "conv")
			x, k := b.param(s(dt, 2, 9, 9, 4)), b.param(s(dt, 3, 3, 4, 6))
			lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil, x, k)))
			// Depthwise: feature_group_count = input features.
			b = newCB(t, "depthwise")
			x, k = b.param(s(dt, 1, 8, 8, 4)), b.param(s(dt, 3, 3, 1, 8))
			w = []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(3)}
			lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w, FeatureGroupCount: 4}, nil, x, k)))
			// batch_group_count (the filter gradient of a grouped convolution).
			b = newCB(t, "batch_groups")
			x, k = b.param(s(dt, 4, 5, 5, 2)), b.param(s(dt, 2, 2, 2, 4))
			w = []hlo.WindowDim{hlo.NewWindowDim(2), hlo.NewWindowDim(2)}
			lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w, BatchGroupCount: 2}, nil, x, k)))
		})
	}
	// 1-D with other dim_labels: bf0_oi0->bf0.
	b := newCB(t, "conv1d")
	x, k := b.param(s(hlo.F32, 2, 3, 20)), b.param(s(hlo.F32, 5, 3, 4))
	cd := &hlo.ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2},
		KernelInput: 1, KernelOutput: 0, KernelSpatial: []int64{2},
		OutputBatch: 0, OutputFeature: 1, OutputSpatial: []int64{2}}
	lowerOK(t, b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: cd, Window: []hlo.WindowDim{hlo.NewWindowDim(4)}}, nil, x, k)))
}

func TestGEMM(t *testing.T) {
	cases := []struct {
		name string
		l, r []int64
		dd   *hlo.DotDims
	}{
		{"square", []int64{64, 64}, []int64{64, 64}, &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}},
		{"odd", []int64{37, 53}, []int64{53, 29}, &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}},
		{"transposed", []int64{50, 33}, []int64{41, 50}, &hlo.DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{1}}},
		{"batched", []int64{3, 2, 40, 30}, []int64{3, 2, 30, 50},
			&hlo.DotDims{LhsBatch: []int64{0, 1}, RhsBatch: []int64{0, 1}, LhsContracting: []int64{3}, RhsContracting: []int64{2}}},
		// Merged views (gemmView): a dense layer over [batch, seq, features] (lhs
		// free dims 0 and 1 are M), its weight gradient (contracting dims 0 and 1
		// are K), free dims after a batch dim, and K read as vec4 where it is minor.
		{"dense layer", []int64{2, 64, 96}, []int64{96, 80}, &hlo.DotDims{LhsContracting: []int64{2}, RhsContracting: []int64{0}}},
		{"weight gradient", []int64{2, 64, 96}, []int64{2, 64, 80}, &hlo.DotDims{LhsContracting: []int64{0, 1}, RhsContracting: []int64{0, 1}}},
		{"batch then merged rows", []int64{4, 2, 16, 64}, []int64{4, 64, 24},
			&hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{3}, RhsContracting: []int64{1}}},
		{"contracting minor on both", []int64{6, 8, 4, 16}, []int64{40, 4, 16}, &hlo.DotDims{LhsContracting: []int64{2, 3}, RhsContracting: []int64{1, 2}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newCB(t, "gemm")
			x, y := b.param(s(hlo.F32, c.l...)), b.param(s(hlo.F32, c.r...))
			root := b.op(hlo.OpDot, hlo.Attributes{Dot: c.dd}, nil, x, y)
			require.True(t, useGEMM(root, LavapipeTarget()))
			p := lowerOK(t, b.build(root))
			require.Contains(t, p.Dispatches[0].Kernel.Name, "gemm")
		})
	}
	// Not mergeable: contracting dims apart, or the rhs's free dims more than one.
	for _, c := range []struct {
		l, r []int64
		dd   *hlo.DotDims
	}{
		{[]int64{8, 40, 6}, []int64{8, 6, 36}, &hlo.DotDims{LhsContracting: []int64{0, 2}, RhsContracting: []int64{0, 1}}},
		{[]int64{40, 64}, []int64{64, 6, 8}, &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}},
	} {
		b := newCB(t, "not_gemm")
		x, y := b.param(s(hlo.F32, c.l...)), b.param(s(hlo.F32, c.r...))
		require.False(t, useGEMM(b.op(hlo.OpDot, hlo.Attributes{Dot: c.dd}, nil, x, y), LavapipeTarget()), "%v·%v", c.l, c.r)
	}
	for _, dt := range []hlo.DType{hlo.F16, hlo.BF16} {
		b := newCB(t, "gemm_"+dt.String())
		x, y := b.param(s(dt, 64, 48)), b.param(s(dt, 48, 40))
		root := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}, nil, x, y)
		require.True(t, useGEMM(root, LavapipeTarget()))
		lowerOK(t, b.build(root))
	}
	target := LavapipeTarget()
	target.GemmBlock = [2]uint32{4, 12}
	b := newCB(t, "gemm_block")
	x, y := b.param(s(hlo.F32, 100, 70)), b.param(s(hlo.F32, 70, 90))
	lowerFor(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}}, nil, x, y)), target)

	// A grid smaller than the blocks: both block loops (rows with the batch on
	// y, columns on x) run more than once.
	small := LavapipeTarget()
	small.MaxWorkgroupCount = [3]uint32{1, 2, 1}
	b = newCB(t, "gemm_loops")
	x, y = b.param(s(hlo.F32, 3, 100, 64)), b.param(s(hlo.F32, 3, 64, 600))
	dd := &hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}
	p := lowerFor(t, b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, x, y)), small)
	require.Equal(t, [3]uint32{1, 2, 1}, p.Dispatches[0].Groups)
}

// TestGEMMTransposedLayoutsReadVec4: A stored K×M (M%4 == 0) and B stored N×K
// (K%4 == 0) are read through vec4 views of their bindings, like the standard
// layout; M%4 != 0 falls back to element reads of A (no vec4 view of binding 0).
func TestGEMMTransposedLayoutsReadVec4(t *testing.T) {
	for _, tc := range []struct {
		name         string
		a, b         []int64
		lc, rc       int64
		aVec4, bVec4 bool
	}{
		{"A K×M, B K×N", []int64{52, 68}, []int64{52, 36}, 0, 0, true, true},
		{"A M×K, B N×K", []int64{68, 52}, []int64{36, 52}, 1, 1, true, true},
		{"A K×M with M%4 != 0", []int64{52, 66}, []int64{52, 36}, 0, 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newCB(t, "gemm")
			x, y := b.param(s(hlo.F32, tc.a...)), b.param(s(hlo.F32, tc.b...))
			dot := b.op(hlo.OpDot, hlo.Attributes{Dot: &hlo.DotDims{LhsContracting: []int64{tc.lc}, RhsContracting: []int64{tc.rc}}}, nil, x, y)
			p := lowerOK(t, b.build(dot))
			require.Len(t, p.Dispatches, 1)
			words, err := spirv.Words(p.Dispatches[0].Kernel.SPIRV)
			require.NoError(t, err)
			text, err := tools.Disassemble(words)
			require.NoError(t, err)
			require.Equal(t, tc.aVec4, readsVec4(text, 0), "A through a vec4 view")
			require.Equal(t, tc.bVec4, readsVec4(text, 1), "B through a vec4 view")
		})
	}
}

// readsVec4 reports whether a kernel's disassembly reads input n four elements at a
// time: through a vec4 alias of its binding or a texel buffer (texel.go).
func readsVec4(text string, n int) bool {
	return strings.Contains(text, fmt.Sprintf("%%in%d_vec4", n)) || strings.Contains(text, fmt.Sprintf("%%in%d_rgba", n))
}
