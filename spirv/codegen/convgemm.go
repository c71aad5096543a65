package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Convolution as an implicit GEMM. A float convolution (f32, or f16/bf16
// accumulated in f32) at a kernel's root is the GEMM C = A·B per feature group,
// with
//
//	rows    M = output pixels (output batch × output spatial, row-major),
//	columns N = output features of the group,
//	k       K = window taps × input features of the group (taps outer),
//
// A[row, (tap, c)] the input element that output pixel row reads at window tap
// tap and input feature c (zero where the tap falls in padding or a hole of lhs
// dilation), B[(tap, c), o] the filter element. No im2col matrix is formed: the
// tiled GEMM kernel (gemmKernel, gemmAcc, gemmStore) runs with loaders that read
// A and B from the convolution's operands. Per block the rows' output pixels are
// split once; per tap each row's input position, its validity and its address
// are computed once; the inner loop over input features then reads A and B like
// a plain GEMM: a vec4 of 4 input features per row where the input's minor
// dimension is its feature dimension (NHWC), a vec4 of 4 output features where
// the filter's is its output-feature dimension (HWIO) or 4 input features where
// it is its input-feature one (OHWI); any other layout is read element by
// element through the emitter (so a fused operand works too). A 1×1 stride-1
// convolution of NHWC × HWIO is exactly a GEMM of the image as an
// (N·H·W)×C matrix.
//
// The sum runs over taps, then input features: another order than cpuref's
// (input features, then taps), within the convolution's tolerance.

// convGEMM is a convolution's implicit-GEMM view.
type convGEMM struct {
	in, lhs, rhs *hlo.Instruction
	cd           *hlo.ConvDims
	w            []hlo.WindowDim
	groups       int64   // feature groups: the GEMM's batch
	m, n         int64   // output pixels; output features per group
	kIn          int64   // input features per group
	taps         []int64 // the window's sizes
	rowDims      []int64 // output batch, then output spatial sizes
}

// convGEMMView is the implicit-GEMM view of a float convolution without batch
// groups.
func convGEMMView(in *hlo.Instruction) (convGEMM, bool) {
	if in.Op != hlo.OpConvolution || in.Attrs.Conv == nil || max(in.Attrs.BatchGroupCount, 1) != 1 {
		return convGEMM{}, false
	}
	for _, x := range []*hlo.Instruction{in, in.Operands[0], in.Operands[1]} {
		if dt := x.Shape.DType; dt != hlo.F32 && !isNarrowFloat(dt) {
			return convGEMM{}, false
		}
	}
	cd, lhs, rhs := in.Attrs.Conv, in.Operands[0], in.Operands[1]
	if lhs.Shape.NumElements() == 0 || rhs.Shape.NumElements() == 0 {
		return convGEMM{}, false // nothing to read: the elemental kernel writes zeros
	}
	fg := max(in.Attrs.FeatureGroupCount, 1)
	cg := convGEMM{in: in, lhs: lhs, rhs: rhs, cd: cd, w: in.Attrs.Window, groups: fg,
		n: rhs.Shape.Dims[cd.KernelOutput] / fg, kIn: rhs.Shape.Dims[cd.KernelInput],
		taps: windowSizes(in.Attrs.Window)}
	cg.rowDims = []int64{in.Shape.Dims[cd.OutputBatch]}
	for _, d := range cd.OutputSpatial {
		cg.rowDims = append(cg.rowDims, in.Shape.Dims[d])
	}
	cg.m = product(cg.rowDims)
	return cg, true
}

// terms is the number of products each output element sums.
func (cg convGEMM) terms() int64 { return cg.kIn * product(cg.taps) }

// loopIters is the loop iterations one block runs: the taps loop and, per tap, the
// quads of input features.
func (cg convGEMM) loopIters() int64 {
	taps := product(cg.taps)
	return taps + taps*(cg.kIn/4)
}

// useConvGEMM: a float convolution with enough work for the tiled kernel, at least
// 2 output pixels and 2 output features per group (depthwise convolutions have
// their own kernel), whose loops fit the target's bound with room for the grid's.
func useConvGEMM(root *hlo.Instruction, t Target) bool {
	cg, ok := convGEMMView(root)
	if !ok || cg.m < 2 || cg.n < 2 || cg.groups*cg.m*cg.n*cg.terms() < gemmMinWork {
		return false
	}
	return t.MaxLoopIterations <= 0 || cg.loopIters() <= t.MaxLoopIterations/2
}

func (l *lowering) lowerConvGEMM() error {
	cg, _ := convGEMMView(l.c.Root)
	out := l.c.Root.Shape.Dims
	colStride := product(out[cg.cd.OutputFeature+1:])
	return l.gemmKernel("conv_gemm", cg.groups, cg.m, cg.n, func(t gemmTile) {
		k := t.g.k
		rows := cg.blockRows(k, t.row0, t.rm)
		acc := newGemmAcc(k, t.rm, t.rn)
		k.loopTaps(t.g, cg.taps, func(pos []spirv.ID) {
			acc.sumK(t.g, l.convLoaders(t, cg, rows, pos), cg.kIn)
		})
		// Output element (pixel row, feature group·n + col).
		rowBase := func(i int64, _ spirv.ID) spirv.ID {
			idx := make([]spirv.ID, len(out))
			idx[cg.cd.OutputBatch] = rows[i][0]
			for s, d := range cg.cd.OutputSpatial {
				idx[d] = rows[i][1+s]
			}
			idx[cg.cd.OutputFeature] = k.f.IMul(t.b, k.ic(cg.n))
			return k.linearize(idx, out)
		}
		l.gemmStore(t, acc, gemmOut{m: cg.m, n: cg.n, colStride: colStride, rowBase: rowBase,
			vec4: colStride == 1 && cg.n%4 == 0})
	})
}

// blockRows splits the block's rows (clamped to the last pixel: rows past M are
// computed, not stored) into output batch and spatial indices.
func (cg convGEMM) blockRows(k *kernel, row0 spirv.ID, rm int64) [][]spirv.ID {
	rows := make([][]spirv.ID, rm)
	for i := range rows {
		rows[i] = k.delinearize(k.clampHigh(k.f.IAdd(row0, k.ic(int64(i))), cg.m-1), cg.rowDims)
	}
	return rows
}

// loopTaps runs body for every window position (row-major), in a loop unless
// the window is a single tap.
func (k *kernel) loopTaps(g *gen, taps []int64, body func(pos []spirv.ID)) {
	if product(taps) == 1 {
		pos := make([]spirv.ID, len(taps))
		for i := range pos {
			pos[i] = k.ic(0)
		}
		body(pos)
		return
	}
	k.loop(product(taps), func(tap spirv.ID) {
		g.scoped(func() { body(k.delinearize(tap, taps)) })
	})
}

// convLoaders reads A and B of one tap (window position pos) for the block:
// A's rows are the block's pixels at that tap, k the group's input features.
func (l *lowering) convLoaders(t gemmTile, cg convGEMM, rows [][]spirv.ID, pos []spirv.ID) gemmLoad {
	g, k, f := t.g, t.g.k, t.g.k.f
	cd := cg.cd
	lhsDims := cg.lhs.Shape.Dims
	featBase := f.IMul(t.b, k.ic(cg.kIn))
	// Per row: the input index at input feature 0 of the group (spatial indices
	// clamped into the input, so that every read is in bounds) and whether the
	// tap lies inside the input.
	lidx := make([][]spirv.ID, len(rows))
	valid := make([]spirv.ID, len(rows))
	for i, r := range rows {
		li := make([]spirv.ID, len(lhsDims))
		li[cd.InputBatch] = r[0]
		li[cd.InputFeature] = featBase
		var conds []spirv.ID
		for s, d := range cd.InputSpatial {
			src, cs := k.windowSource(cg.w[s:s+1], lhsDims[d:d+1], r[1+s:2+s], pos[s:s+1])
			li[d] = src[0]
			if len(cs) > 0 {
				conds = append(conds, cs...)
				li[d] = k.clampIndex(src[0], 0, lhsDims[d]-1)
			}
		}
		lidx[i] = li
		if len(conds) > 0 {
			valid[i] = k.all(conds...)
		}
	}
	var ld gemmLoad
	ld.aCol = func(kv spirv.ID) []spirv.ID {
		a := make([]spirv.ID, len(rows))
		for i, li := range lidx {
			at := append([]spirv.ID(nil), li...)
			at[cd.InputFeature] = f.IAdd(featBase, kv)
			a[i] = g.emit(cg.lhs, at)
			if valid[i] != 0 {
				a[i] = f.Select(valid[i], a[i], k.m.F32(0))
			}
		}
		return a
	}
	if v, ok := l.vec4View(k, cg.lhs, cd.InputFeature, cg.kIn); ok {
		dims4 := quarterMinor(lhsDims)
		bases := make([]spirv.ID, len(rows))
		for i, li := range lidx {
			at := append([]spirv.ID(nil), li...)
			at[cd.InputFeature] = f.SDiv(featBase, k.ic(4))
			bases[i] = k.linearize(at, dims4)
		}
		ld.aQuad = vec4RowQuads(k, v, bases, valid)
	} else {
		ld.aQuad = quadsFromCols(k, ld.aCol)
	}
	l.convBLoaders(t, cg, pos, &ld)
	return ld
}

// convBLoaders sets B's loaders of one tap: B[(tap, c), col] is the filter at
// input feature c, output feature group·n + col and the tap's window position
// (reversed where the window is).
func (l *lowering) convBLoaders(t gemmTile, cg convGEMM, pos []spirv.ID, ld *gemmLoad) {
	k, f := t.g.k, t.g.k.f
	cd := cg.cd
	dims := cg.rhs.Shape.Dims
	colBase := f.IMul(t.b, k.ic(cg.n))
	index := func(kv, col spirv.ID) []spirv.ID {
		ri := make([]spirv.ID, len(dims))
		ri[cd.KernelInput] = kv
		ri[cd.KernelOutput] = col
		for s, d := range cd.KernelSpatial {
			ri[d] = pos[s]
			if cg.w[s].WindowReversal {
				ri[d] = f.ISub(k.ic(cg.w[s].Size-1), pos[s])
			}
		}
		return ri
	}
	if v, ok := l.vec4View(k, cg.rhs, cd.KernelInput, cg.kIn); ok {
		// OHWI: a vec4 of 4 input features per column.
		dims4 := quarterMinor(dims)
		bases := make([]spirv.ID, t.rn)
		for j := range bases {
			col := k.clampHigh(f.IAdd(t.col0, k.ic(int64(j))), cg.n-1)
			bases[j] = k.linearize(index(k.ic(0), f.IAdd(colBase, col)), dims4)
		}
		ld.bQuad = vec4ColumnQuads(k, v, bases)
	}
	if v, ok := l.vec4View(k, cg.rhs, cd.KernelOutput, cg.n); ok {
		// HWIO: a vec4 of 4 output features per input feature.
		dims4 := quarterMinor(dims)
		tapBase := k.linearize(index(k.ic(0), f.SDiv(colBase, k.ic(4))), dims4)
		stride := k.ic(product(dims4[cd.KernelInput+1:]))
		cs := columnQuads(k, t.col0, t.rn, cg.n)
		ld.bRow = func(kv spirv.ID) []spirv.ID {
			return vec4Row(k, v, f.IAdd(tapBase, f.IMul(kv, stride)), cs)
		}
		return
	}
	ld.bRow = rowFromElems(k, t.col0, t.rn, cg.n, func(kv, col spirv.ID) spirv.ID {
		return t.g.emit(cg.rhs, index(kv, f.IAdd(colBase, col)))
	})
}
