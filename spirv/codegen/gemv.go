package codegen

import "github.com/vkxla/vkxla/hlo"

// The GEMV: a dot with a few rows (M ≤ gemvMaxRows: a decode step's projections,
// attention of one query over a KV cache) is memory-bound, each element of B
// read once and used for M products. The GEMM's 16-row blocks would compute 16
// rows to store M (the rows past M are clamped copies), so the GEMV takes blocks
// of all M rows × gemvCols columns: per k, an invocation reads M values of A
// (uniform across the workgroup: one load broadcast to its lanes) and gemvCols
// of B, as vec4 along B's contiguous dimension in either layout — B [K,N] with N
// minor (x·W): a vec4 of 4 neighbouring columns, the workgroup's lanes reading
// consecutive quads; B [N,K] with K minor (x·Wᵀ, q·Kᵀ): a vec4 of 4 k per column.
// It shares the GEMM's loaders, accumulators, output stage and epilogue hook
// (gemm.go, epilogue.go); only the block differs.

const (
	gemvMaxRows = 4       // M up to which a dot is a GEMV
	gemvCols    = 4       // columns of C per invocation
	gemvMinWork = 1 << 12 // N·K from which the GEMV is used
)

// useGEMV: a float dot of the GEMM's view with at most gemvMaxRows rows, at
// least 2 columns and enough of B to be worth a kernel of blocks, whose k loop
// (a quarter of K: unrolled by 4) stays well inside the target's loop bound.
func useGEMV(root *hlo.Instruction, t Target) bool {
	gs, ok := gemmView(root)
	if !ok || gs.m > gemvMaxRows || gs.n < 2 || gs.n*gs.k < gemvMinWork {
		return false
	}
	return t.MaxLoopIterations <= 0 || ceilDiv(gs.k, 4) <= t.MaxLoopIterations/4
}

func (l *lowering) lowerGEMV() error {
	gs, _ := gemmView(gemmDot(l.c))
	return l.lowerDotBlocks("gemv", gs.m, gemvCols)
}
