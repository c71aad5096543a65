package codegen

import (
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The tiled GEMM for an f32 dot at a kernel's root with one free dimension on each
// side and one contracting dimension (any number of batch dimensions): C[b] =
// A[b]·B[b] with A M×K and B K×N in whatever dimension order the operands have.
//
// Each invocation computes a block of RM rows × RN columns of C in RM·RN/4 vec4
// accumulators, with no shared memory and no barriers: per k it reads RM elements
// of A and RN of B and issues RM·RN/4 vec4 multiply-adds. This is the shape that
// measured fastest on lavapipe (DESIGN.md: 6.4–6.8 GFLOP/s at 1024³ against 2.0 for
// shared-memory tiling), and on real GPUs it is a sound register-blocked baseline.
// Neighbouring invocations take neighbouring column blocks, so their B reads are
// contiguous. Rows and columns past the edge are computed from clamped indices and
// not stored, so the inner loop has no tests. The k loop is unrolled by 4 (a
// quarter of the loop iterations, which also keeps K up to ~262k within lavapipe's
// loop limiter). Operands are read through the elemental emitter, so a fused
// operand (a transpose, a convert, a broadcast) costs nothing extra. Each element
// of C sums its products in k order, as cpuref does.

const (
	gemmMinWork = 1 << 15 // M·N·K from which the tiled kernel is used
	gemmLocal   = 32      // invocations per workgroup (one row, as measured on lavapipe)
)

// gemmBlock is the rows and columns (a multiple of 4) of C per invocation.
func gemmBlock(t Target) (rm, rn int64) {
	if t.GemmBlock[0] > 0 && t.GemmBlock[1] > 0 && t.GemmBlock[1]%4 == 0 {
		return int64(t.GemmBlock[0]), int64(t.GemmBlock[1])
	}
	return 8, 8
}

// gemmShape is a dot's GEMM view.
type gemmShape struct {
	lhs, rhs           *hlo.Instruction
	d                  *hlo.DotDims
	lFree, rFree       int // the single free dim of each operand
	m, n, k            int64
	batch              []int64 // batch sizes
	lhsBatch, rhsBatch []int64
}

func gemmView(root *hlo.Instruction) (gemmShape, bool) {
	if root.Op != hlo.OpDot || root.Shape.DType != hlo.F32 {
		return gemmShape{}, false
	}
	l, r := root.Operands[0], root.Operands[1]
	d := root.Attrs.Dot
	if d == nil || len(d.LhsContracting) != 1 {
		return gemmShape{}, false
	}
	lf := freeDimList(l.Shape.Rank(), d.LhsBatch, d.LhsContracting)
	rf := freeDimList(r.Shape.Rank(), d.RhsBatch, d.RhsContracting)
	if len(lf) != 1 || len(rf) != 1 {
		return gemmShape{}, false
	}
	gs := gemmShape{lhs: l, rhs: r, d: d, lFree: lf[0], rFree: rf[0],
		m: l.Shape.Dims[lf[0]], n: r.Shape.Dims[rf[0]], k: l.Shape.Dims[d.LhsContracting[0]]}
	for _, b := range d.LhsBatch {
		gs.batch = append(gs.batch, l.Shape.Dims[b])
	}
	return gs, true
}

func useGEMM(root *hlo.Instruction, t Target) bool {
	gs, ok := gemmView(root)
	return ok && gs.m >= 2 && gs.n >= 2 && gs.m*gs.n*gs.k >= gemmMinWork
}

func (l *lowering) lowerGEMM() error {
	gs, _ := gemmView(l.c.Root)
	rm, rn := gemmBlock(l.t)
	tilesM, tilesN := (gs.m+rm-1)/rm, (gs.n+rn-1)/rn
	tiles := product(gs.batch) * tilesM * tilesN
	k := l.newKernel("gemm", gemmLocal)
	out := l.bindOutputs(k)[0]
	g := l.kernelGen(k)
	f, m := k.f, k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	groups := k.grid(tiles)
	k.gridStride(tiles, groups, func(t spirv.ID) {
		g.scoped(func() {
			tn, rest := f.SRem(t, k.ic(tilesN)), f.SDiv(t, k.ic(tilesN))
			tm, b := f.SRem(rest, k.ic(tilesM)), f.SDiv(rest, k.ic(tilesM))
			batch := k.delinearize(b, gs.batch)
			row0, col0 := f.IMul(tm, k.ic(rm)), f.IMul(tn, k.ic(rn))
			rows := make([]spirv.ID, rm)
			for i := range rows {
				rows[i] = k.clampIndex(f.IAdd(row0, k.ic(int64(i))), 0, gs.m-1)
			}
			cols := make([]spirv.ID, rn)
			for j := range cols {
				cols[j] = k.clampIndex(f.IAdd(col0, k.ic(int64(j))), 0, gs.n-1)
			}
			acc := make([]spirv.ID, rm*rn/4)
			for i := range acc {
				acc[i] = k.variable(vec4, m.ConstOf(vec4, 0), "acc")
			}
			step := func(kv spirv.ID) {
				g.scoped(func() {
					bv := make([]spirv.ID, rn/4)
					for q := range bv {
						var parts []spirv.ID
						for j := range int64(4) {
							parts = append(parts, g.emit(gs.rhs, gs.rhsIndex(batch, kv, cols[4*int64(q)+j])))
						}
						bv[q] = f.CompositeConstruct(vec4, parts...)
					}
					for i := range rows {
						a := g.emit(gs.lhs, gs.lhsIndex(batch, rows[i], kv))
						for q := range bv {
							p := acc[int64(i)*rn/4+int64(q)]
							prod := f.Op(spirv.OpVectorTimesScalar, vec4, uint32(bv[q]), uint32(a))
							f.Store(p, f.FAdd(f.Load(p), prod))
						}
					}
				})
			}
			k4 := gs.k / 4
			if k4 > 0 {
				k.loop(k4, func(kk spirv.ID) {
					base := f.IMul(kk, k.ic(4))
					for u := range int64(4) {
						step(f.IAdd(base, k.ic(u)))
					}
				})
			}
			for kv := k4 * 4; kv < gs.k; kv++ {
				step(k.ic(kv))
			}
			l.gemmStore(g, gs, out, b, row0, col0, acc, rm, rn)
		})
	})
	return l.add(k, groups)
}

// lhsIndex and rhsIndex place batch, free and contracting indices in operand order.
func (gs gemmShape) lhsIndex(batch []spirv.ID, row, kv spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, gs.lhs.Shape.Rank())
	for i, d := range gs.d.LhsBatch {
		idx[d] = batch[i]
	}
	idx[gs.lFree] = row
	idx[gs.d.LhsContracting[0]] = kv
	return idx
}

func (gs gemmShape) rhsIndex(batch []spirv.ID, kv, col spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, gs.rhs.Shape.Rank())
	for i, d := range gs.d.RhsBatch {
		idx[d] = batch[i]
	}
	idx[gs.rFree] = col
	idx[gs.d.RhsContracting[0]] = kv
	return idx
}

// gemmStore writes the block's elements that lie inside C (batch, M, N row-major).
func (l *lowering) gemmStore(g *gen, gs gemmShape, out spirv.Buffer, b, row0, col0 spirv.ID, acc []spirv.ID, rm, rn int64) {
	k, f := g.k, g.k.f
	for i := range rm {
		row := f.IAdd(row0, k.ic(i))
		f.If(f.Less(row, k.ic(gs.m)), func() {
			rowBase := f.IMul(f.IAdd(f.IMul(b, k.ic(gs.m)), row), k.ic(gs.n))
			for q := range rn / 4 {
				v := f.Load(acc[i*rn/4+q])
				for j := range int64(4) {
					col := f.IAdd(col0, k.ic(4*q+j))
					f.If(f.Less(col, k.ic(gs.n)), func() {
						f.StoreElem(out, f.IAdd(rowBase, col), f.CompositeExtract(v, uint32(j)))
					}, nil)
				}
			}
		}, nil)
	}
}
