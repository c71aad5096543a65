package codegen

import (
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
// in one invocation, so K is split into parts of whole quads: a first kernel
// (gemv_partial) sums each part into a scratch buffer of f32 partial sums, C of
// part p at batch p·batches + b, and a second (gemv_sum) adds each element's parts
// in part order and applies the epilogue. Splitting changes the order of the
// sum (within the dot's tolerance, as XLA's split-K).

const (
	gemvMaxRows     = 4       // M up to which a dot is a GEMV
	gemvMinWork     = 1 << 12 // N·K from which the GEMV is used
	gemvSplitBlocks = 128     // blocks below which K is split, for parallel work (as convSplitBlocks)
	gemvMinQuads    = 32      // quads of k per part at least, when split for that
)

// gemvCols is the columns of C per invocation: with B's k minor (each column's
// vec4 holds 4 k, regrouped into column quads in registers) 8, else 16 (a block's
// row at one k is a 64-byte cache line of f32), measured fastest on lavapipe
// (BenchmarkGEMV: with N minor, 16 columns read 1.5-2× the bytes/s of 4 or 8 and
// as much as 32; with k minor, 8 and 4 are alike and 16 slower).
func gemvCols(gs gemmShape) int64 {
	if gs.d.RhsContracting[0] == int64(len(gs.rhsDims)-1) {
		return 8
	}
	return 16
}

// useGEMV: a float dot of the GEMM's view with at most gemvMaxRows rows, at
// least 2 columns and enough of B to be worth a kernel of blocks, whose partial
// sums, if split, fit one binding.
func useGEMV(root *hlo.Instruction, t Target) bool {
	gs, ok := gemmView(root)
	if !ok || gs.m > gemvMaxRows || gs.n < 2 || gs.n*gs.k < gemvMinWork {
		return false
	}
	parts := gemvParts(gs, t)
	return parts == 1 || t.MaxStorageBufferRange <= 0 || gs.partialBytes(parts) <= t.MaxStorageBufferRange
}

// gemvParts is the number of parts K is summed in (1: no split): enough for each
// part's loop (a quarter of its k, plus the grid's and the tail's) to stay within
// a quarter of the target's loop bound, and, with fewer than gemvSplitBlocks
// blocks, enough to reach that many with at least gemvMinQuads quads per part.
func gemvParts(gs gemmShape, t Target) int64 {
	quads := gs.k / 4
	parts := int64(1)
	if lim := t.MaxLoopIterations; lim > 0 {
		parts = ceilDiv(quads+4, lim/4)
	}
	blocks := product(gs.batch) * ceilDiv(gs.n, gemvCols(gs))
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
	gs, _ := gemmView(gemmDot(l.c))
	parts := gemvParts(gs, l.t)
	if parts == 1 {
		return l.lowerDotBlocks("gemv", gs.m, gemvCols(gs))
	}
	l.p.InPlace = l.epilogueInPlace(gs.dot)
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, gs.partialBytes(parts))
	if err := l.gemvPartial(gs, scratch, parts); err != nil {
		return err
	}
	return l.gemvSum(gs, scratch, parts)
}

// gemvFacts are lowerGEMV's dispatches and scratch buffer.
func (l *lowering) gemvFacts() {
	gs, _ := gemmView(gemmDot(l.c))
	l.p.InPlace = l.epilogueInPlace(gs.dot)
	parts := gemvParts(gs, l.t)
	if parts == 1 {
		l.dispatchFact("gemv", l.outputArgs())
		return
	}
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, gs.partialBytes(parts))
	l.dispatchFact("gemv_partial", scratchArgs(scratch, 1))
	l.dispatchFact("gemv_sum", scratchArgs(scratch, 1), l.outputArgs())
}

// gemvPartial sums part p's quads of k (and the last part the K%4 k after them)
// of every block into the partial sums.
func (l *lowering) gemvPartial(gs gemmShape, scratch int, parts int64) error {
	batches := product(gs.batch)
	quads := gs.k / 4
	perPart := ceilDiv(quads, parts)
	dest := gemmDest{arg: Arg{Kind: ArgScratch, Index: scratch}, dt: hlo.F32}
	return l.gemmKernelBlocks("gemv_partial", parts*batches, gs.m, gs.n, gs.m, gemvCols(gs), dest, func(t gemmTile) {
		k, f := t.g.k, t.g.k.f
		part := f.SDiv(t.b, k.ic(batches))
		batch := k.delinearize(f.SRem(t.b, k.ic(batches)), gs.batch)
		rows := gemmRows(k, t.row0, t.rm, gs.m)
		acc := newGemmAcc(k, t.rm, t.rn)
		ld := l.gemmLoaders(t.g, gs, batch, rows, t.col0, t.rn)
		start := f.IMul(part, k.ic(perPart))
		end := f.IAdd(start, k.ic(perPart))
		end = f.Select(f.Less(end, k.ic(quads)), end, k.ic(quads))
		k.countLoop(perPart, func() {
			f.Range(start, end, k.ic(1), func(kk spirv.ID) { acc.sumQuad(t.g, ld, kk) })
		})
		if gs.k%4 != 0 {
			f.If(f.Equal(part, k.ic(parts-1)), func() { acc.sumTail(t.g, ld, gs.k) }, nil)
		}
		rowBase := func(_ int64, row spirv.ID) spirv.ID {
			return f.IMul(f.IAdd(f.IMul(t.b, k.ic(gs.m)), row), k.ic(gs.n))
		}
		l.gemmStore(t, acc, gemmOut{m: gs.m, n: gs.n, colStride: 1, rowBase: rowBase, vec4: gs.n%4 == 0})
	})
}

// gemvSum is the split GEMV's second pass: each element of C is the sum of its
// parts' partial sums, in part order, rounded to the dot's type and handed to the
// epilogue.
func (l *lowering) gemvSum(gs gemmShape, scratch int, parts int64) error {
	k := l.newKernel("gemv_sum", defaultLocal)
	f := k.f
	partial := k.bind(Arg{Kind: ArgScratch, Index: scratch}, hlo.F32, spirv.ReadOnly)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	dt, ddt := l.p.Outputs[0].DType, gs.dot.Shape.DType // stored; the dot's
	total := product(gs.batch) * gs.m * gs.n
	groups := k.gridStride(total, func(e spirv.ID) {
		acc := k.variable(k.m.TypeF32(), k.m.F32(0), "gemv_sum")
		k.loop(parts, func(p spirv.ID) {
			f.Store(acc, f.FAdd(f.Load(acc), k.load(partial, f.IAdd(f.IMul(p, k.ic(total)), e), hlo.F32)))
		})
		// C is the dot's output in row-major order: e is its element's index.
		idx := k.delinearize(e, gs.dot.Shape.Dims)
		g.scoped(func() {
			k.store(out, e, l.gemmEpilogue(g, gs.dot, idx, k.round(k.sumFromZero(f.Load(acc), ddt), ddt)), dt)
		})
	})
	return l.add(k, groups)
}
