package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Convolution as an implicit GEMM. A float convolution (f32, or f16/bf16
// accumulated in f32) at a kernel's root is the GEMM C = A·B per feature group
// (or batch group: a grouped convolution's filter gradient), with
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
	groups       int64 // feature or batch groups: the GEMM's batch
	// byBatch: the groups are batch groups (batch_group_count; a filter gradient
	// of a grouped convolution): group g reads all input features of the input
	// batches g·(output batch) … (g+1)·(output batch) − 1, where feature group g
	// reads input features g·kIn … (g+1)·kIn − 1 of every batch.
	byBatch bool
	m, n    int64   // output pixels; output features per group
	kIn     int64   // input features per group
	taps    []int64 // the window's sizes
	rowDims []int64 // output batch, then output spatial sizes
	// batchMinor orders the rows batch-minor (spatial, then batch): set where
	// the input's batch dimension is its minor one, a multiple of 4 (a filter
	// gradient of NHWC images, whose "batch" is the image features), so that
	// four neighbouring rows are one vec4 of the input.
	batchMinor bool
	// phases, when set, orders the rows phase-major so that a block's tap loop
	// skips the taps that read lhs dilation's holes (convphase.go); m is then
	// its row count, padding rows included.
	phases *convPhases
}

// withPhases is cg with its rows in phase-major order where phasesFor applies.
func (cg convGEMM) withPhases(t Target) convGEMM {
	rm, _ := gemmBlock(t)
	if p := phasesFor(cg, rm, t); p != nil {
		cg.phases, cg.m = p, p.rows()
	}
	return cg
}

// convGEMMView is the implicit-GEMM view of a float convolution without batch
// groups.
func convGEMMView(in *hlo.Instruction) (convGEMM, bool) {
	cg, ok := groupedGEMMView(in)
	return cg, ok && !cg.byBatch
}

// groupedGEMMView is the implicit-GEMM view of a float convolution with feature
// or batch groups (not both: the verifier refuses that).
func groupedGEMMView(in *hlo.Instruction) (convGEMM, bool) {
	if in == nil || in.Op != hlo.OpConvolution || in.Attrs.Conv == nil {
		return convGEMM{}, false
	}
	fg, bg := max(in.Attrs.FeatureGroupCount, 1), max(in.Attrs.BatchGroupCount, 1)
	if fg > 1 && bg > 1 {
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
	groups := max(fg, bg)
	cg := convGEMM{in: in, lhs: lhs, rhs: rhs, cd: cd, w: in.Attrs.Window, groups: groups, byBatch: bg > 1,
		n: rhs.Shape.Dims[cd.KernelOutput] / groups, kIn: rhs.Shape.Dims[cd.KernelInput],
		taps: windowSizes(in.Attrs.Window)}
	cg.rowDims = []int64{in.Shape.Dims[cd.OutputBatch]}
	for _, d := range cd.OutputSpatial {
		cg.rowDims = append(cg.rowDims, in.Shape.Dims[d])
	}
	cg.m = product(cg.rowDims)
	cg.batchMinor = cd.InputBatch == int64(lhs.Shape.Rank()-1) && cg.rowDims[0]%4 == 0 && len(cg.rowDims) > 1
	return cg, true
}

// splitRow is the output batch and spatial indices ([batch, spatial…]) of GEMM
// row row, in the row order batchMinor chooses.
func (cg convGEMM) splitRow(k *kernel, row spirv.ID) []spirv.ID {
	if cg.phases != nil {
		return cg.phases.splitRow(k, row)
	}
	if !cg.batchMinor {
		return k.delinearize(row, cg.rowDims)
	}
	idx := k.delinearize(row, append(append([]int64(nil), cg.rowDims[1:]...), cg.rowDims[0]))
	return append([]spirv.ID{idx[len(idx)-1]}, idx[:len(idx)-1]...)
}

// terms is the number of products each output element sums.
func (cg convGEMM) terms() int64 { return cg.kIn * product(cg.taps) }

// loopIters is the loop iterations one block runs: the taps loop and, per tap, the
// quads of input features.
func (cg convGEMM) loopIters() int64 {
	taps := product(cg.taps)
	return taps + taps*(cg.kIn/4)
}

// useConvGEMM: a depthwise filter gradient the dwgrad kernel takes, or a float
// convolution with enough work for the tiled kernel, at least 2 output pixels
// and 2 output features per group (depthwise convolutions have their own
// kernel), whose loops per tap fit the target's bound (longer
// contractions are split over taps) and whose partial sums, if split, fit one
// binding.
func useConvGEMM(root *hlo.Instruction, t Target) bool {
	if cg, ok := dwGradOf(root); ok {
		return useDWGrad(cg, t)
	}
	cg, ok := groupedGEMMView(root)
	if !ok || cg.m < 2 || cg.n < 2 || cg.groups*cg.m*cg.n*cg.terms() < gemmMinWork {
		return false
	}
	if lim := t.MaxLoopIterations; lim > 0 && 1+cg.kIn/4 > lim/4 {
		return false
	}
	parts := convGEMMParts(cg, t)
	return parts == 1 || t.MaxStorageBufferRange <= 0 || cg.partialBytes(parts) <= t.MaxStorageBufferRange
}

// convSplitBlocks is the number of blocks below which a long contraction (at
// least convSplitTaps taps: a filter gradient sums over the output's pixels) is
// split over taps, so that the device has that much parallel work: a filter
// gradient has few outputs and many terms each.
const (
	convSplitBlocks = 128
	convSplitTaps   = 64
)

// convGEMMParts is the number of tap ranges the implicit GEMM sums separately
// (1: no split): enough for each range's loops to stay within a quarter of the
// target's loop bound, and, for long contractions with few blocks, enough to
// reach convSplitBlocks blocks with at least 16 taps per range.
func convGEMMParts(cg convGEMM, t Target) int64 {
	taps := product(cg.taps)
	parts := int64(1)
	if lim := t.MaxLoopIterations; lim > 0 {
		parts = ceilDiv(cg.loopIters(), lim/4)
	}
	rm, rn := gemmBlock(t)
	blocks := cg.groups * ceilDiv(cg.m, rm) * ceilDiv(cg.n, rn)
	if taps >= convSplitTaps && blocks < convSplitBlocks {
		parts = max(parts, min(ceilDiv(convSplitBlocks, blocks), taps/16))
	}
	return min(parts, taps)
}

// partialBytes is the size of the scratch buffer of f32 partial sums: one C per
// part and group.
func (cg convGEMM) partialBytes(parts int64) int64 { return parts * cg.groups * cg.m * cg.n * 4 }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// convGEMMFacts: one kernel, or a scratch buffer of partial sums, the partial
// GEMM writing it and the sum pass reading it into the output.
func (l *lowering) convGEMMFacts() {
	cg, _ := groupedGEMMView(gemmConv(l.c))
	l.p.InPlace = l.epilogueInPlace(cg.in)
	if _, ok := dwGradOf(cg.in); ok {
		l.dwGradFacts(cg)
		return
	}
	parts := convGEMMParts(cg, l.t)
	if parts == 1 {
		l.dispatchFact("conv_gemm", l.outputArgs())
		return
	}
	l.partialSumFacts("conv_gemm_partial", "conv_gemm_sum", cg.partialBytes(parts))
}

func (l *lowering) lowerConvGEMM() error {
	cg, _ := groupedGEMMView(gemmConv(l.c))
	l.p.InPlace = l.epilogueInPlace(cg.in)
	if _, ok := dwGradOf(cg.in); ok {
		return l.lowerDWGrad(cg)
	}
	parts := convGEMMParts(cg, l.t)
	if parts == 1 {
		return l.convGEMMKernel(cg.withPhases(l.t), l.outputDest(), 1)
	}
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, cg.partialBytes(parts))
	if err := l.convGEMMKernel(cg, gemmDest{arg: Arg{Kind: ArgScratch, Index: scratch}, dt: hlo.F32}, parts); err != nil {
		return err
	}
	return l.convGEMMSum(cg, scratch, parts)
}

// convGEMMKernel is the implicit GEMM over all taps into the output (parts 1), or
// over each of parts tap ranges into dest's partial sums, C of part p and group
// g at batch p·groups + g, (M, N) row-major.
func (l *lowering) convGEMMKernel(cg convGEMM, dest gemmDest, parts int64) error {
	out := cg.in.Shape.Dims
	colStride := product(out[cg.cd.OutputFeature+1:])
	name := "conv_gemm"
	if parts > 1 {
		name = "conv_gemm_partial"
	}
	taps := product(cg.taps)
	perPart := ceilDiv(taps, parts)
	return l.gemmKernel(name, parts*cg.groups, cg.m, cg.n, dest, func(t gemmTile) {
		k, f := t.g.k, t.g.k.f
		rows := cg.blockRows(k, t.row0, t.rm)
		acc := newGemmAcc(k, t.rm, t.rn)
		group := t.b
		sum := func(pos []spirv.ID) { acc.sumK(t.g, l.convLoaders(t, cg, group, rows, pos), cg.kIn) }
		if parts == 1 {
			if cg.phases != nil {
				cg.phases.loopTaps(t.g, cg.w, cg.taps, t.row0, sum)
			} else {
				k.loopTaps(t.g, cg.taps, sum)
			}
			// Output element (pixel row, feature group·n + col).
			rowBase := func(i int64, _ spirv.ID) spirv.ID {
				return k.linearize(cg.outputIndex(k, out, rows[i], f.IMul(group, k.ic(cg.n))), out)
			}
			o := gemmOut{m: cg.m, n: cg.n, colStride: colStride, rowBase: rowBase, vec4: colStride == 1 && cg.n%4 == 0}
			if cg.phases != nil {
				o.rowValid = func(row spirv.ID) spirv.ID { return cg.phases.valid(k, row) }
			}
			if cg.in != l.c.Root { // an epilogue reads the output element's index
				o.epilogue = cg.in
				o.index = func(i int64, col spirv.ID) []spirv.ID {
					return cg.outputIndex(k, out, rows[i], f.IAdd(f.IMul(group, k.ic(cg.n)), col))
				}
				if o.vec4 && cg.cd.OutputFeature == int64(len(out)-1) { // features minor: a vec4 per quad
					o.rowIndex = func(i int64) []spirv.ID { return o.index(i, k.ic(0))[:len(out)-1] }
					o.quad0 = f.SDiv(f.IMul(group, k.ic(cg.n)), k.ic(4))
				} else {
					o.vec4 = false // stored one by one
				}
			}
			l.gemmStore(t, acc, o)
			return
		}
		group = f.SRem(t.b, k.ic(cg.groups))
		start := f.IMul(f.SDiv(t.b, k.ic(cg.groups)), k.ic(perPart))
		end := f.IAdd(start, k.ic(perPart))
		end = f.Select(f.Less(end, k.ic(taps)), end, k.ic(taps))
		k.countLoop(perPart, func() {
			f.Range(start, end, k.ic(1), func(tap spirv.ID) {
				t.g.scoped(func() { sum(k.delinearize(tap, cg.taps)) })
			})
		})
		rowBase := func(_ int64, row spirv.ID) spirv.ID {
			return f.IMul(f.IAdd(f.IMul(t.b, k.ic(cg.m)), row), k.ic(cg.n))
		}
		l.gemmStore(t, acc, gemmOut{m: cg.m, n: cg.n, colStride: 1, rowBase: rowBase, vec4: cg.n%4 == 0})
	})
}

// outputIndex is the output's index of pixel row (batch, spatial…) at feature.
func (cg convGEMM) outputIndex(k *kernel, dims []int64, row []spirv.ID, feature spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, len(dims))
	idx[cg.cd.OutputBatch] = row[0]
	for s, d := range cg.cd.OutputSpatial {
		idx[d] = row[1+s]
	}
	idx[cg.cd.OutputFeature] = feature
	return idx
}

// convGEMMSum is the split implicit GEMM's second pass (splitSum): element e is
// (group, row, col) of the groups' M×N products, stored at its output index.
func (l *lowering) convGEMMSum(cg convGEMM, scratch int, parts int64) error {
	dims := cg.in.Shape.Dims
	return l.splitSum("conv_gemm_sum", cg.in, scratch, parts, cg.groups*cg.m*cg.n, func(k *kernel, e spirv.ID) ([]spirv.ID, spirv.ID) {
		f := k.f
		c := k.delinearize(e, []int64{cg.groups, cg.m, cg.n}) // group, row, col
		feature := f.IAdd(f.IMul(c[0], k.ic(cg.n)), c[2])
		idx := cg.outputIndex(k, dims, cg.splitRow(k, c[1]), feature)
		return idx, k.linearize(idx, dims)
	})
}

// blockRows splits the block's rows (clamped to the last pixel: rows past M are
// computed, not stored) into output batch and spatial indices.
func (cg convGEMM) blockRows(k *kernel, row0 spirv.ID, rm int64) [][]spirv.ID {
	rows := make([][]spirv.ID, rm)
	for i := range rows {
		rows[i] = cg.splitRow(k, k.clampHigh(k.f.IAdd(row0, k.ic(int64(i))), cg.m-1))
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
func (l *lowering) convLoaders(t gemmTile, cg convGEMM, group spirv.ID, rows [][]spirv.ID, pos []spirv.ID) gemmLoad {
	var ld gemmLoad
	l.convALoaders(t, cg, group, rows, pos, &ld)
	l.convBLoaders(t, cg, group, pos, &ld)
	return ld
}

// featBase is the first input feature group reads: group·kIn for feature
// groups, 0 for batch groups.
func (cg convGEMM) featBase(k *kernel, group spirv.ID) spirv.ID {
	if cg.byBatch {
		return k.ic(0)
	}
	return k.f.IMul(group, k.ic(cg.kIn))
}

// lhsBatch is the input batch output batch b of group reads: b, offset by the
// group's batches for batch groups.
func (cg convGEMM) lhsBatch(k *kernel, group, b spirv.ID) spirv.ID {
	if !cg.byBatch {
		return b
	}
	return k.f.IAdd(b, k.f.IMul(group, k.ic(cg.rowDims[0])))
}

// sharedPixel: every block of rm rows is rm batches of one output pixel (rows
// batch-minor, the batch a multiple of rm), so a tap's input position and
// validity are the same for the whole block, computed once (a filter gradient's
// per-tap set-up, paid for as few as one input feature, otherwise costs rm).
func (cg convGEMM) sharedPixel(rm int64) bool { return cg.batchMinor && cg.rowDims[0]%rm == 0 }

// tapInputs is, per row, the input index that row reads at tap pos and the
// group's first input feature (spatial indices clamped into the input, so that
// every read is in bounds) and whether the tap lies inside the input (0:
// always).
func (cg convGEMM) tapInputs(k *kernel, group spirv.ID, rows [][]spirv.ID, pos []spirv.ID) (idx [][]spirv.ID, valid []spirv.ID) {
	cd, dims := cg.cd, cg.lhs.Shape.Dims
	idx, valid = make([][]spirv.ID, len(rows)), make([]spirv.ID, len(rows))
	for i, r := range rows {
		if i > 0 && cg.sharedPixel(int64(len(rows))) { // row 0's pixel, batch + i
			idx[i] = append([]spirv.ID(nil), idx[0]...)
			idx[i][cd.InputBatch] = k.f.IAdd(idx[0][cd.InputBatch], k.ic(int64(i)))
			valid[i] = valid[0]
			continue
		}
		li := make([]spirv.ID, len(dims))
		li[cd.InputBatch], li[cd.InputFeature] = cg.lhsBatch(k, group, r[0]), cg.featBase(k, group)
		var conds []spirv.ID
		for s, d := range cd.InputSpatial {
			src, cs := k.windowSource(cg.w[s:s+1], dims[d:d+1], r[1+s:2+s], pos[s:s+1])
			li[d] = src[0]
			if len(cs) > 0 {
				conds = append(conds, cs...)
				li[d] = k.clampIndex(src[0], 0, dims[d]-1)
			}
		}
		idx[i] = li
		if len(conds) > 0 {
			valid[i] = k.all(conds...)
		}
	}
	return idx, valid
}

// convALoaders sets A's loaders of one tap: a vec4 of four rows (batch-minor
// rows), a vec4 of four input features per row (feature-minor input), or element
// by element through the emitter; taps outside the input read zero.
func (l *lowering) convALoaders(t gemmTile, cg convGEMM, group spirv.ID, rows [][]spirv.ID, pos []spirv.ID, ld *gemmLoad) {
	g, k, f := t.g, t.g.k, t.g.k.f
	cd, dims := cg.cd, cg.lhs.Shape.Dims
	featBase := cg.featBase(k, group)
	lidx, valid := cg.tapInputs(k, group, rows, pos)
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
	ld.aQuad = quadsFromCols(k, ld.aCol)
	if cg.batchMinor && len(rows)%4 == 0 { // checked first: vec4View declares an alias
		if v, ok := l.vec4View(k, cg.lhs, cd.InputBatch, cg.rowDims[0]); ok {
			ld.aCol = batchQuadCols(k, v, cd, dims, lidx, valid, cg.sharedPixel(int64(len(rows))))
			ld.aQuad = quadsFromCols(k, ld.aCol)
			return
		}
	}
	if v, ok := l.vec4View(k, cg.lhs, cd.InputFeature, cg.kIn); ok {
		dims4 := quarterMinor(dims)
		bases := make([]spirv.ID, len(rows))
		for i, li := range lidx {
			at := append([]spirv.ID(nil), li...)
			at[cd.InputFeature] = f.SDiv(featBase, k.ic(4))
			bases[i] = k.linearize(at, dims4)
		}
		ld.aQuad = vec4RowQuads(k, v, bases, valid)
	}
}

// batchQuadCols reads A's column at k for batch-minor rows: rows 4q … 4q+3 are
// batches 4b … 4b+3 at one pixel, one vec4 of the input at the quad's base +
// k·(the feature dim's stride in vec4s). Where the quads share one pixel
// (shared), quad q's base is quad 0's + q.
func batchQuadCols(k *kernel, v vec4Source, cd *hlo.ConvDims, dims []int64, lidx [][]spirv.ID, valid []spirv.ID, shared bool) func(kv spirv.ID) []spirv.ID {
	f := k.f
	dims4 := quarterMinor(dims)
	stride := k.ic(product(dims4[cd.InputFeature+1:]))
	bases := make([]spirv.ID, len(lidx)/4)
	for q := range bases {
		if q > 0 && shared {
			bases[q] = f.IAdd(bases[0], k.ic(int64(q)))
			continue
		}
		at := append([]spirv.ID(nil), lidx[4*q]...)
		at[cd.InputBatch] = f.SDiv(at[cd.InputBatch], k.ic(4))
		bases[q] = k.linearize(at, dims4)
	}
	zero := k.m.ConstOf(k.m.TypeVector(k.m.TypeF32(), 4), 0)
	return func(kv spirv.ID) []spirv.ID {
		a := make([]spirv.ID, len(lidx))
		for q, base := range bases {
			vec := k.loadVec4(v, f.IAdd(base, f.IMul(kv, stride)))
			if valid[4*q] != 0 {
				vec = f.Select(valid[4*q], vec, zero)
			}
			for r := range 4 {
				a[4*q+r] = f.CompositeExtract(vec, uint32(r))
			}
		}
		return a
	}
}

// filterIndex is the filter's index at input feature in, output feature out and
// window position pos (reversed where the window is).
func (cg convGEMM) filterIndex(k *kernel, in, out spirv.ID, pos []spirv.ID) []spirv.ID {
	cd := cg.cd
	ri := make([]spirv.ID, cg.rhs.Shape.Rank())
	ri[cd.KernelInput], ri[cd.KernelOutput] = in, out
	for s, d := range cd.KernelSpatial {
		ri[d] = pos[s]
		if cg.w[s].WindowReversal {
			ri[d] = k.f.ISub(k.ic(cg.w[s].Size-1), pos[s])
		}
	}
	return ri
}

// convBLoaders sets B's loaders of one tap: B[(tap, c), col] is the filter at
// input feature c, output feature group·n + col and the tap's window position
// (reversed where the window is).
func (l *lowering) convBLoaders(t gemmTile, cg convGEMM, group spirv.ID, pos []spirv.ID, ld *gemmLoad) {
	k, f := t.g.k, t.g.k.f
	cd := cg.cd
	dims := cg.rhs.Shape.Dims
	colBase := f.IMul(group, k.ic(cg.n))
	index := func(kv, col spirv.ID) []spirv.ID { return cg.filterIndex(k, kv, col, pos) }
	if l.convQuantBLoaders(t, cg, group, pos, ld) && ld.bRow != nil {
		return // a quantised filter's rows as packed words (convquant.go)
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
