package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The GEMV: a dot with a few rows (M ≤ gemvMaxRows: a decode step's projections,
// attention of one query over a KV cache) is memory-bound, each element of B
// read once and used for M products. The GEMM's 16-row blocks would compute 16
// rows to store M (the rows past M are clamped copies), so the GEMV takes blocks
// of all M rows × gemvCols columns: per k, an invocation reads M values of A
// (uniform across the workgroup: one load broadcast to its lanes) and a block
// row of B, as vec4 along B's contiguous dimension in either layout: B [K,N]
// with N minor (x·W), a vec4 of 4 neighbouring columns, the workgroup's lanes
// reading consecutive blocks; B [N,K] with K minor (x·Wᵀ, q·Kᵀ), a vec4 of 4 k
// per column.
// It shares the GEMM's loaders, accumulators, output stage and epilogue hook
// (gemm.go, epilogue.go); only the block differs.
//
// Split K: with few blocks (a narrow output: attention's values, N = 64) the
// device would sit mostly idle, and a K past the target's loop bound cannot run
// in one invocation, and a one-row x·W reads W faster in short slices of K
// (gemvSliced), so K is split into parts of whole quads: a first kernel
// (gemv_partial) sums each part into a scratch buffer of f32 partial sums, C of
// part p at batch p·batches + b, and a second (gemv_sum) adds each element's parts
// in part order and applies the epilogue. Splitting changes the order of the
// sum (within the dot's tolerance, as XLA's split-K).

const (
	gemvMaxRows         = 4       // M up to which a dot is a GEMV
	gemvMinWork         = 1 << 12 // N·K from which the GEMV is used
	gemvSplitBlocks     = 128     // blocks below which K is split, for parallel work (as convSplitBlocks)
	gemvMinQuads        = 32      // quads of k per part at least, when split for that
	gemvSliceWork       = 1 << 18 // N·K from which a one-row GEMV with N minor slices K
	gemvSliceQuads      = 4       // quads of k per slice
	gemvQuantSliceQuads = 32      // quads of k per slice of a quantised B (gemm_quant.go)
)

// gemvCols is the columns of C per invocation: with B's k minor (each column's
// vec4 holds 4 k, regrouped into column quads in registers) 8; with N minor 4
// when K is sliced (gemvSliced), else 16 (a block's row at one k is a 64-byte
// cache line of f32). Measured fastest on lavapipe (BenchmarkGEMV: with N minor
// and K whole, 16 columns read 1.5-2× the bytes/s of 4 or 8 and as much as 32;
// with k minor, 8 and 4 are alike and 16 slower); a sliced one of a quantised B
// 32 where N allows, read as one RGBA32 texel per k for s4 (quantB.words4:
// 1.8–2.8× the speed of 16 columns in R32 words, which 32 columns of R32 words
// do not reach).
func gemvCols(gs gemmShape, t Target) int64 {
	switch {
	case kMinor(gs):
		return 8
	case gemvSliced(gs, t) && isQuantB(gs) && gs.n%32 == 0:
		return 32 // one RGBA32 texel of s4 per k (BenchmarkGEMVInt4: 32 ≈ 64 > 16 > 8 > 4)
	case gemvSliced(gs, t) && isQuantB(gs):
		return 16 // two u32 of s4 per k
	case gemvSliced(gs, t):
		return 4
	}
	return 16
}

// kMinor: B is stored with k minor (x·Wᵀ).
func kMinor(gs gemmShape) bool {
	return gs.d.RhsContracting[0] == int64(len(gs.rhsDims)-1)
}

// gemvSliced: a one-row GEMV over B stored with N minor, large enough, is split
// into slices of gemvSliceQuads quads of k (a split K with short parts), 4
// columns per invocation: a SIMD batch of lanes then reads gemvSliceQuads·4 rows
// side by side, 128 bytes of each, and the next batch the next 128 bytes of the
// same rows, where with K whole each batch read 512 bytes of a row and jumped to
// the next (9 KiB away for a 2304-wide W). BenchmarkGEMV, medians of 8 runs
// each in two sweeps: x·W 0.37-0.50 → 0.47-0.53 of a copy, bf16 x·W 0.71-0.77 →
// 0.89-1.02; with 4 rows the partial sums (4 per column) cost more than that
// gains (0.34-0.36 → 0.28-0.29), so only M = 1. The partial sums add 1/16 of W's
// f32 bytes (written and read once). Slices stay within the loop bound of the
// sum pass.
func gemvSliced(gs gemmShape, t Target) bool {
	if gs.m != 1 || kMinor(gs) || gs.n*gs.k < gemvSliceWork {
		return false
	}
	return t.MaxLoopIterations <= 0 || ceilDiv(gs.k/4, sliceQuads(gs)) <= t.MaxLoopIterations/4
}

// gemvView is the dot's GEMV view: its GEMM view when it has at most
// gemvMaxRows rows and at least 2 columns (x·W); or, when it has more rows and
// at most gemvMaxRows columns (W·x, the vector on the right), the view of its
// transpose Cᵀ = Bᵀ·Aᵀ, operands swapped, whose few rows are C's columns: the
// matrix is then the GEMV's B either way, read once as a block row per k.
func gemvView(root *hlo.Instruction) (gemvShape, bool) {
	gs, ok := gemmView(root)
	switch {
	case !ok:
		return gemvShape{}, false
	case gs.m <= gemvMaxRows && gs.n >= 2:
		return gemvShape{gemmShape: gs}, true
	case gs.m > gemvMaxRows && gs.n <= gemvMaxRows:
		return gemvShape{gemmShape: gs.swapped(), transposed: true, lhsFree: gs.rowDims()}, true
	}
	return gemvShape{}, false
}

// gemvShape is a GEMV's view: C = A·B, or (transposed) Cᵀ, stored as C.
type gemvShape struct {
	gemmShape
	transposed bool
	lhsFree    []int64 // transposed: the dot's lhs free dims, which Cᵀ's columns stand for
}

// swapped is the GEMM view of Cᵀ = Bᵀ·Aᵀ: the same operands with their roles
// exchanged (the contracting and batch dims are the same on both sides).
func (gs gemmShape) swapped() gemmShape {
	d := &hlo.DotDims{LhsBatch: gs.d.RhsBatch, RhsBatch: gs.d.LhsBatch,
		LhsContracting: gs.d.RhsContracting, RhsContracting: gs.d.LhsContracting}
	return gemmShape{dot: gs.dot, lhs: gs.rhs, rhs: gs.lhs, d: d, lFree: gs.rFree, rFree: gs.lFree,
		lhsDims: gs.rhsDims, rhsDims: gs.lhsDims, lhsGroups: gs.rhsGroups, rhsGroups: gs.lhsGroups,
		m: gs.n, n: gs.m, k: gs.k, batch: gs.batch}
}

// out places the view's block (row, col) of batch b (b counting parts × batches
// in the split GEMV's partial sums: each part a whole C) in C's row-major order:
// C itself, or for Cᵀ element (row, col) at C's (col, row).
func (gv gemvShape) out(k *kernel, b spirv.ID) gemmOut {
	f := k.f
	m, n := gv.m, gv.n
	if !gv.transposed {
		return gemmOut{m: m, n: n, colStride: 1, vec4: n%4 == 0, rowBase: func(_ int64, row spirv.ID) spirv.ID {
			return f.IMul(f.IAdd(f.IMul(b, k.ic(m)), row), k.ic(n))
		}}
	}
	// C is (batch, n, m) here: one column of Cᵀ is contiguous only when m = 1.
	return gemmOut{m: m, n: n, colStride: m, vec4: m == 1 && n%4 == 0, rowBase: func(_ int64, row spirv.ID) spirv.ID {
		return f.IAdd(f.IMul(b, k.ic(m*n)), row)
	}}
}

// useGEMV: a float dot with a GEMV view, enough of B to be worth a kernel of
// blocks, and partial sums, if split, that fit one binding.
func useGEMV(root *hlo.Instruction, t Target) bool {
	gv, ok := gemvView(root)
	if !ok || gv.n*gv.k < gemvMinWork {
		return false
	}
	parts := gemvParts(gv.gemmShape, t)
	return parts == 1 || t.MaxStorageBufferRange <= 0 || gv.partialBytes(parts) <= t.MaxStorageBufferRange
}

// gemvParts is the number of parts K is summed in (1: no split): enough for each
// part's loop (a quarter of its k, plus the grid's and the tail's) to stay within
// a quarter of the target's loop bound; slices of gemvSliceQuads quads where K
// is sliced; and, with fewer than gemvSplitBlocks blocks, enough to reach that
// many with at least gemvMinQuads quads per part.
func gemvParts(gs gemmShape, t Target) int64 {
	quads := gs.k / 4
	parts := int64(1)
	if lim := t.MaxLoopIterations; lim > 0 {
		parts = ceilDiv(quads+4, lim/4)
	}
	if gemvSliced(gs, t) {
		parts = max(parts, ceilDiv(quads, sliceQuads(gs)))
	}
	blocks := product(gs.batch) * ceilDiv(gs.n, gemvCols(gs, t))
	if blocks < gemvSplitBlocks {
		parts = max(parts, min(ceilDiv(gemvSplitBlocks, blocks), quads/gemvMinQuads))
	}
	return max(parts, 1)
}

// partialBytes is the size of the split GEMV's f32 partial sums: one C per part.
func (gs gemmShape) partialBytes(parts int64) int64 {
	return parts * product(gs.batch) * gs.m * gs.n * 4
}

func (l *lowering) lowerGEMV() error {
	gv, _ := gemvView(gemmDot(l.c))
	l.p.InPlace = l.epilogueInPlace(gv.dot)
	parts := gemvParts(gv.gemmShape, l.t)
	if parts == 1 {
		return l.gemvBlocks("gemv", gv, 1, l.outputDest())
	}
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, gv.partialBytes(parts))
	dest := gemmDest{arg: Arg{Kind: ArgScratch, Index: scratch}, dt: hlo.F32}
	if err := l.gemvBlocks("gemv_partial", gv, parts, dest); err != nil {
		return err
	}
	return l.gemvSum(gv.gemmShape, scratch, parts)
}

// gemvFacts are lowerGEMV's dispatches and scratch buffer.
func (l *lowering) gemvFacts() {
	gv, _ := gemvView(gemmDot(l.c))
	l.p.InPlace = l.epilogueInPlace(gv.dot)
	parts := gemvParts(gv.gemmShape, l.t)
	if parts == 1 {
		l.dispatchFact("gemv", l.outputArgs())
		return
	}
	l.partialSumFacts("gemv_partial", "gemv_sum", gv.partialBytes(parts))
}

// gemvBlocks emits the GEMV's kernel of all-rows blocks: with parts = 1 the whole
// of K into dest (the output, through the epilogue); else part p's quads of k (and
// the last part the K%4 k after them) into the partial sums.
func (l *lowering) gemvBlocks(name string, gv gemvShape, parts int64, dest gemmDest) error {
	gs := gv.gemmShape
	batches := product(gs.batch)
	quads := gs.k / 4
	perPart := ceilDiv(quads, parts)
	return l.gemmKernelBlocks(name, parts*batches, gs.m, gs.n, gs.m, gemvCols(gs, l.t), dest, func(t gemmTile) {
		k, f := t.g.k, t.g.k.f
		part, b := k.ic(0), t.b
		if parts > 1 {
			part, b = f.SDiv(t.b, k.ic(batches)), f.SRem(t.b, k.ic(batches))
		}
		batch := k.delinearize(b, gs.batch)
		rows := gemmRows(k, t.row0, t.rm, gs.m)
		acc := newGemmAcc(k, t.rm, t.rn)
		ld := l.gemmLoaders(t.g, gs, batch, rows, t.col0, t.rn)
		if parts == 1 {
			acc.sumK(t.g, ld, gs.k)
		} else {
			start := f.IMul(part, k.ic(perPart))
			end := f.IAdd(start, k.ic(perPart))
			end = f.Select(f.Less(end, k.ic(quads)), end, k.ic(quads))
			// A part inside one scale group reads its scales once, before its quads.
			inGroup := ld.group > 0 && gs.k%ld.group == 0 && (ld.group/4)%perPart == 0
			if inGroup {
				ld.beginGroup(f.IMul(start, k.ic(4)))
			}
			if ld.bOctet != nil && perPart%2 == 0 && quads%2 == 0 { // parts of whole octets
				k.countLoop(perPart/2, func() {
					f.Range(f.SDiv(start, k.ic(2)), f.SDiv(end, k.ic(2)), k.ic(1), func(ko spirv.ID) { acc.sumOctet(t.g, ld, ko) })
				})
			} else {
				k.countLoop(perPart, func() {
					f.Range(start, end, k.ic(1), func(kk spirv.ID) { acc.sumQuad(t.g, ld, kk) })
				})
			}
			if inGroup {
				ld.endGroup()
			}
			if gs.k%4 != 0 {
				f.If(f.Equal(part, k.ic(parts-1)), func() { acc.sumTail(t.g, ld, gs.k) }, nil)
			}
		}
		o := gv.out(k, t.b)
		if parts == 1 && gs.dot != l.c.Root {
			gemvEpilogue(k, &o, gv, batch)
		}
		l.gemmStore(t, acc, o)
	})
}

// gemvEpilogue sets o to apply the kernel's epilogue to the dot's product: at
// C's row and column, or for Cᵀ at block row i (C's column: Cᵀ has one block
// row) and column col (C's row, over the lhs's free dims).
func gemvEpilogue(k *kernel, o *gemmOut, gv gemvShape, batch []spirv.ID) {
	o.epilogue, o.batch = gv.dot, batch
	if !gv.transposed {
		o.rowDims = gv.rowDims()
		return
	}
	o.vec4 = false
	o.index = func(i int64, col spirv.ID) []spirv.ID {
		idx := append(slices.Clone(batch), k.delinearize(col, gv.lhsFree)...)
		return append(idx, k.ic(i))
	}
}

// gemvSum is the split GEMV's second pass (splitSum): C is the dot's output in
// row-major order, so element e is at e.
func (l *lowering) gemvSum(gs gemmShape, scratch int, parts int64) error {
	total := product(gs.batch) * gs.m * gs.n
	return l.splitSum("gemv_sum", gs.dot, scratch, parts, total, func(k *kernel, e spirv.ID) ([]spirv.ID, spirv.ID) {
		return k.delinearize(e, gs.dot.Shape.Dims), e
	})
}

// splitSum is the second pass of a contraction split into parts (the GEMV, the
// implicit GEMM): each of its total elements e is the sum of its parts' partial
// sums partial[p·total + e], in part order, rounded to prod's type and handed to
// the kernel's epilogue, if any; place gives e's index in prod's dims and its
// linear index in the output.
func (l *lowering) splitSum(name string, prod *hlo.Instruction, scratch int, parts, total int64,
	place func(k *kernel, e spirv.ID) (idx []spirv.ID, at spirv.ID)) error {
	k := l.newKernel(name, defaultLocal)
	f := k.f
	partial := k.bind(Arg{Kind: ArgScratch, Index: scratch}, hlo.F32, spirv.ReadOnly)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	dt, pdt := l.p.Outputs[0].DType, prod.Shape.DType // stored; the product's
	groups := k.gridStride(total, func(e spirv.ID) {
		acc := k.variable(k.m.TypeF32(), k.m.F32(0), name)
		k.loop(parts, func(p spirv.ID) {
			f.Store(acc, f.FAdd(f.Load(acc), k.load(partial, f.IAdd(f.IMul(p, k.ic(total)), e), hlo.F32)))
		})
		idx, at := place(k, e)
		g.scoped(func() {
			k.store(out, at, l.gemmEpilogue(g, prod, idx, k.round(k.sumFromZero(f.Load(acc), pdt), pdt)), dt)
		})
	})
	return l.add(k, groups)
}

// isQuantB: B is a dequantised weight read packed (gemm_quant.go).
func isQuantB(gs gemmShape) bool { _, ok := quantView(gs); return ok }

// sliceQuads is the quads of k per slice of a sliced GEMV: longer for a
// quantised B, whose f32 partial sums would otherwise cost half of its bytes
// again (at 4 quads per slice, 1/2 of an s4 W's bytes; at 32, 1/16), and whose
// slices then lie inside one scale group of 128 k (read once per slice).
func sliceQuads(gs gemmShape) int64 {
	if isQuantB(gs) {
		return gemvQuantSliceQuads
	}
	return gemvSliceQuads
}
