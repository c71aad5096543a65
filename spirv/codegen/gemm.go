package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// The tiled GEMM for an f32 (or f16/bf16: accumulated in f32, rounded once at the
// store, as cpuref) dot at a kernel's root with one free dimension on each
// side and one contracting dimension (any number of batch dimensions): C[b] =
// A[b]·B[b] with A M×K and B K×N in whatever dimension order the operands have.
//
// Each invocation computes a block of RM rows × RN columns of C (16×8 unless
// Target.GemmBlock says otherwise) in RM·RN/4 vec4 accumulators, with no shared
// memory and no barriers: per k it reads RM elements of A and RN of B and issues
// RM·RN/4 vec4 multiply-adds. The grid is 2-D: a workgroup's 32 invocations take
// 32 neighbouring column blocks of one row block, so their B reads are contiguous
// and their A reads are the same address for the whole workgroup (uniform: on
// lavapipe one load broadcast to the SIMD lanes, where a per-invocation address
// costs a load per lane). That is why a tall block pays: only B's RN/4 vec4 loads
// per k are per-lane, and 16 rows share them (16×8 measured 1.2-1.3× the
// hand-written 8×8 sgemm_vec4 at 1024³, 8×8 with the same layout about 1.05×).
// Rows and columns past the edge are computed from clamped indices and not
// stored, so the inner loop has no tests. The k loop is unrolled by 4 (a quarter
// of the loop iterations, which also keeps K up to ~262k within lavapipe's loop
// limiter). Operands are read through the elemental emitter, so a fused operand (a
// transpose, a convert, a broadcast) costs nothing extra. Each element of C sums
// its products in k order, as cpuref does.

const (
	gemmMinWork = 1 << 15 // M·N·K from which the tiled kernel is used
	gemmLocal   = 32      // invocations per workgroup (one row, as measured on lavapipe)
)

// gemmBlock is the rows and columns (a multiple of 4) of C per invocation.
func gemmBlock(t Target) (rm, rn int64) {
	if t.GemmBlock[0] > 0 && t.GemmBlock[1] > 0 && t.GemmBlock[1]%4 == 0 {
		return int64(t.GemmBlock[0]), int64(t.GemmBlock[1])
	}
	return 16, 8
}

// gemmShape is a dot's GEMM view.
type gemmShape struct {
	dot, lhs, rhs      *hlo.Instruction
	d                  *hlo.DotDims
	lFree, rFree       int64 // the single free dim of each operand
	m, n, k            int64
	batch              []int64 // batch sizes
	lhsBatch, rhsBatch []int64
}

func gemmView(root *hlo.Instruction) (gemmShape, bool) {
	if root == nil {
		return gemmShape{}, false
	}
	if dt := root.Shape.DType; root.Op != hlo.OpDot || (dt != hlo.F32 && dt != hlo.F16 && dt != hlo.BF16) {
		return gemmShape{}, false
	}
	l, r := root.Operands[0], root.Operands[1]
	d := root.Attrs.Dot
	if d == nil || len(d.LhsContracting) != 1 {
		return gemmShape{}, false
	}
	lf := hlo.Complement(l.Shape.Rank(), d.LhsBatch, d.LhsContracting)
	rf := hlo.Complement(r.Shape.Rank(), d.RhsBatch, d.RhsContracting)
	if len(lf) != 1 || len(rf) != 1 {
		return gemmShape{}, false
	}
	gs := gemmShape{dot: root, lhs: l, rhs: r, d: d, lFree: lf[0], rFree: rf[0],
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
	gs, _ := gemmView(gemmDot(l.c))
	rm, rn := gemmBlock(l.t)
	tilesM, tilesN := (gs.m+rm-1)/rm, (gs.n+rn-1)/rn
	rowTiles := product(gs.batch) * tilesM // (batch, row block) pairs
	k := l.newKernel("gemm", gemmLocal)
	out := l.bindOutputs(k)[0]
	l.p.InPlace = l.epilogueInPlace(gs.dot)
	g := l.kernelGen(k)
	f := k.f
	local := int64(gemmLocal)
	limX, limY := int64(l.t.MaxWorkgroupCount[0]), int64(l.t.MaxWorkgroupCount[1])
	if limX <= 0 {
		limX = 65535
	}
	if limY <= 0 {
		limY = 65535
	}
	gx := min((tilesN+local-1)/local, limX)
	gy := min(rowTiles, limY)
	// The grid is 2-D: y walks the row blocks (with the batch), x the column
	// blocks, gemmLocal of them per workgroup. A row block is the same for every
	// invocation of a workgroup, so the A reads are uniform (one load for the
	// workgroup's SIMD lanes on lavapipe) and only the B reads differ per lane.
	wy := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 1))
	ny := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 1))
	wx := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 0))
	nx := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 0))
	lid := k.toIndex(f.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0))
	x0, xStride := f.IAdd(f.IMul(wx, k.ic(local)), lid), f.IMul(nx, k.ic(local))
	block := func(ty, tn spirv.ID) {
		g.scoped(func() {
			tm, b := ty, k.ic(0)
			if rowTiles != tilesM {
				tm, b = f.SRem(ty, k.ic(tilesM)), f.SDiv(ty, k.ic(tilesM))
			}
			row0, col0 := f.IMul(tm, k.ic(rm)), f.IMul(tn, k.ic(rn))
			batch := k.delinearize(b, gs.batch)
			acc := l.gemmBlockSum(g, gs, batch, row0, col0, rm, rn)
			l.gemmStore(g, gs, out, b, batch, row0, col0, acc, rm, rn)
		})
	}
	cols := func(ty spirv.ID) {
		switch {
		case gx*local == tilesN:
			block(ty, x0) // one column block per invocation, all in range
			return
		case gx*local > tilesN:
			f.If(f.Less(x0, k.ic(tilesN)), func() { block(ty, x0) }, nil)
			return
		}
		k.countLoop((tilesN+gx*local-1)/(gx*local), func() {
			f.Range(x0, k.ic(tilesN), xStride, func(tn spirv.ID) { block(ty, tn) })
		})
	}
	if gy == rowTiles {
		cols(wy)
	} else {
		k.countLoop((rowTiles+gy-1)/gy, func() {
			f.Range(wy, k.ic(rowTiles), ny, cols)
		})
	}
	return l.add(k, [3]uint32{uint32(gx), uint32(gy), 1})
}

// gemmBlockSum accumulates the rm×rn block of C at (row0, col0) of batch element
// batch and returns its vec4 accumulators (row-major, rn/4 per row).
func (l *lowering) gemmBlockSum(g *gen, gs gemmShape, batch []spirv.ID, row0, col0 spirv.ID, rm, rn int64) []spirv.ID {
	k, f, m := g.k, g.k.f, g.k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	rows := make([]spirv.ID, rm) // clamped: rows past M are computed, not stored
	for i := range rows {
		rows[i] = k.clampHigh(f.IAdd(row0, k.ic(int64(i))), gs.m-1)
	}
	acc := make([]spirv.ID, rm*rn/4)
	for i := range acc {
		acc[i] = k.variable(vec4, m.ConstOf(vec4, 0), "acc")
	}
	ld := l.gemmLoaders(g, gs, batch, rows, col0, rn)
	// multiply adds A's values a (one per block row, at one k) times B's row at
	// that k (bv: per column quad, a vec4) into the accumulators; step reads B's
	// row kv first.
	multiply := func(bv, a []spirv.ID) {
		for i := range a {
			for q := range bv {
				p := acc[int64(i)*rn/4+int64(q)]
				prod := f.Op(spirv.OpVectorTimesScalar, vec4, uint32(bv[q]), uint32(a[i]))
				f.Store(p, f.FAdd(f.Load(p), prod))
			}
		}
	}
	step := func(kv spirv.ID, a []spirv.ID) { multiply(ld.bRow(kv), a) }
	k4 := gs.k / 4
	if k4 > 0 {
		k.loop(k4, func(kk spirv.ID) {
			g.scoped(func() {
				quads := ld.aQuad(kk) // per row, the values at k = 4kk..4kk+3
				var bq [4][]spirv.ID
				if ld.bQuad != nil {
					bq = ld.bQuad(kk)
				}
				k0 := f.IMul(kk, k.ic(4))
				for u := range 4 {
					a := make([]spirv.ID, len(quads))
					for i, q := range quads {
						a[i] = q[u]
					}
					if bq[u] != nil {
						multiply(bq[u], a)
						continue
					}
					step(f.IAdd(k0, k.ic(int64(u))), a)
				}
			})
		})
	}
	for kv := k4 * 4; kv < gs.k; kv++ {
		g.scoped(func() { step(k.ic(kv), ld.aCol(k.ic(kv))) })
	}
	return acc
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

// gemmStore writes the block's elements that lie inside C (batch, M, N row-major),
// through the epilogue when the kernel has one (epilogue.go): a vec4 per row and
// column quad where the output is f32 with N%4 == 0, else element by element.
func (l *lowering) gemmStore(g *gen, gs gemmShape, out spirv.Buffer, b spirv.ID, batch []spirv.ID, row0, col0 spirv.ID, acc []spirv.ID, rm, rn int64) {
	k, f, m := g.k, g.k.f, g.k.m
	dt, outDT := gs.dot.Shape.DType, l.p.Outputs[0].DType
	var out4 spirv.Buffer
	if outDT == hlo.F32 && gs.n%4 == 0 {
		out4 = m.StorageBuffer("out0_vec4", 0, uint32(len(l.p.Inputs)), m.TypeVector(m.TypeF32(), 4), 0)
	}
	q0 := f.SDiv(col0, k.ic(4)) // col0 is a multiple of 4
	storeRow := func(row spirv.ID, accAt func(q int64) spirv.ID) {
		f.If(f.Less(row, k.ic(gs.m)), func() {
			rowBase := f.IAdd(f.IMul(b, k.ic(gs.m)), row)
			rowIdx := append(append([]spirv.ID{}, batch...), row)
			for q := range rn / 4 {
				v := accAt(q)
				var lanes [4]spirv.ID
				for j := range lanes {
					lanes[j] = k.sumFromZero(f.CompositeExtract(v, uint32(j)), dt)
				}
				v = f.CompositeConstruct(m.TypeOf(v), lanes[:]...)
				if out4.Var != 0 {
					quad := f.IAdd(q0, k.ic(q))
					f.If(f.Less(quad, k.ic(gs.n/4)), func() {
						group := f.IAdd(f.IMul(rowBase, k.ic(gs.n/4)), quad)
						st := v
						if gs.dot != l.c.Root {
							st = l.gemmEpilogue4(g, gs, rowIdx, group, quad, lanes)
						}
						f.StoreElem(out4, group, st)
					}, nil)
					continue
				}
				for j := range int64(4) {
					col := f.IAdd(col0, k.ic(4*q+j))
					f.If(f.Less(col, k.ic(gs.n)), func() {
						g.scoped(func() {
							idx := append(append([]spirv.ID{}, rowIdx...), col)
							k.store(out, f.IAdd(f.IMul(rowBase, k.ic(gs.n)), col),
								l.gemmEpilogue(g, gs.dot, idx, k.round(f.CompositeExtract(v, uint32(j)), dt)), outDT)
						})
					}, nil)
				}
			}
		}, nil)
	}
	if gs.dot == l.c.Root {
		for i := range rm {
			storeRow(f.IAdd(row0, k.ic(i)), func(q int64) spirv.ID { return f.Load(acc[i*rn/4+q]) })
		}
		return
	}
	// An epilogue is emitted once, in a loop over the block's rows, rather than for
	// each of its rm rows: a large one (a gelu, f16 rounding) unrolled rm times made
	// the driver's compile of the kernel take seconds.
	vec4 := m.TypeVector(m.TypeF32(), 4)
	arr := f.Var(m.TypeArray(vec4, uint32(len(acc))), "block")
	for j, a := range acc {
		f.Store(f.AccessChain(arr, k.ic(int64(j))), f.Load(a))
	}
	k.loop(rm, func(i spirv.ID) {
		g.scoped(func() {
			storeRow(f.IAdd(row0, i), func(q int64) spirv.ID {
				return f.Load(f.AccessChain(arr, f.IAdd(f.IMul(i, k.ic(rn/4)), k.ic(q))))
			})
		})
	})
}

// gemmLoad reads A and B for one block: through vec4 views of the input bindings
// where the operand is an input whose contiguous (minor) dimension is one the block
// reads 4 at a time, else element by element through the emitter. A's minor
// dimension may be k (K%4 == 0: a vec4 per row holds 4 k) or m (M%4 == 0 and RM%4
// == 0: a vec4 per k holds 4 rows); B's may be n (N%4 == 0: a vec4 per k and
// column quad) or k (K%4 == 0: a vec4 per column holds 4 k, turned into column
// quads in registers). The last two are the layouts of JAX's transposed products
// (dot_general contracting A's first or B's last dimension).
type gemmLoad struct {
	aQuad func(kk spirv.ID) [][4]spirv.ID // per block row, A[row, 4kk+u]
	aCol  func(kv spirv.ID) []spirv.ID    // per block row, A[row, kv]
	bRow  func(kv spirv.ID) []spirv.ID    // per column quad, B[kv, col0+4q..] as vec4
	bQuad func(kk spirv.ID) [4][]spirv.ID // when set: bRow(4kk+u) for u = 0..3 at once
}

func (l *lowering) gemmLoaders(g *gen, gs gemmShape, batch, rows []spirv.ID, col0 spirv.ID, rn int64) gemmLoad {
	k, f, m := g.k, g.k.f, g.k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	var ld gemmLoad
	ld.aCol = func(kv spirv.ID) []spirv.ID {
		a := make([]spirv.ID, len(rows))
		for i, r := range rows {
			a[i] = g.emit(gs.lhs, gs.lhsIndex(batch, r, kv))
		}
		return a
	}
	if v, ok := l.vec4View(k, gs.lhs, gs.lFree, gs.m); ok && len(rows)%4 == 0 {
		ld.aQuad = l.gemmAColumnQuads(k, gs, v, batch, rows)
	} else if v, ok := l.vec4View(k, gs.lhs, gs.d.LhsContracting[0], gs.k); ok {
		// The vec4 index of A[row, 4kk] is row's base (in vec4 units) + kk.
		dims4 := quarterMinor(gs.lhs.Shape.Dims)
		bases := make([]spirv.ID, len(rows))
		for i, r := range rows {
			bases[i] = k.linearize(gs.lhsIndex(batch, r, k.ic(0)), dims4)
		}
		ld.aQuad = func(kk spirv.ID) [][4]spirv.ID {
			q := make([][4]spirv.ID, len(rows))
			for i := range rows {
				vec := f.LoadElem(v, f.IAdd(bases[i], kk))
				for u := range 4 {
					q[i][u] = f.CompositeExtract(vec, uint32(u))
				}
			}
			return q
		}
	} else {
		ld.aQuad = func(kk spirv.ID) [][4]spirv.ID {
			q := make([][4]spirv.ID, len(rows))
			for u := range 4 {
				col := ld.aCol(f.IAdd(f.IMul(kk, k.ic(4)), k.ic(int64(u))))
				for i := range rows {
					q[i][u] = col[i]
				}
			}
			return q
		}
	}
	quads := rn / 4
	if v, ok := l.vec4View(k, gs.rhs, gs.d.RhsContracting[0], gs.k); ok {
		ld.bQuad = l.gemmBColumnQuads(k, gs, v, batch, col0, rn)
	}
	if v, ok := l.vec4View(k, gs.rhs, gs.rFree, gs.n); ok {
		// The vec4 index of B[kv, 4c] is kv's row base (in vec4 units) + c, with
		// the column quads clamped once per block.
		dims4 := quarterMinor(gs.rhs.Shape.Dims)
		first := f.SDiv(col0, k.ic(4))
		cs := make([]spirv.ID, quads)
		for q := range cs {
			cs[q] = k.clampHigh(f.IAdd(first, k.ic(int64(q))), gs.n/4-1)
		}
		ld.bRow = func(kv spirv.ID) []spirv.ID {
			base := k.linearize(gs.rhsIndex(batch, kv, k.ic(0)), dims4)
			out := make([]spirv.ID, quads)
			for q := range out {
				out[q] = f.LoadElem(v, f.IAdd(base, cs[q]))
			}
			return out
		}
		return ld
	}
	cols := make([]spirv.ID, rn)
	for j := range cols {
		cols[j] = k.clampHigh(f.IAdd(col0, k.ic(int64(j))), gs.n-1)
	}
	ld.bRow = func(kv spirv.ID) []spirv.ID {
		out := make([]spirv.ID, quads)
		for q := range out {
			parts := make([]spirv.ID, 4)
			for j := range parts {
				parts[j] = g.emit(gs.rhs, gs.rhsIndex(batch, kv, cols[4*int64(q)+int64(j)]))
			}
			out[q] = f.CompositeConstruct(vec4, parts...)
		}
		return out
	}
	return ld
}

// gemmAColumnQuads reads A stored with its free (row) dimension minor: for each k
// of a quad, one vec4 per 4 block rows (row quads clamped to the last full quad;
// the block's rows start at a multiple of RM, a multiple of 4).
func (l *lowering) gemmAColumnQuads(k *kernel, gs gemmShape, v spirv.Buffer, batch, rows []spirv.ID) func(kk spirv.ID) [][4]spirv.ID {
	f := k.f
	dims4 := quarterMinor(gs.lhs.Shape.Dims)
	strideK := product(dims4[gs.d.LhsContracting[0]+1:]) // vec4 units per step of k
	first := f.SDiv(rows[0], k.ic(4))
	bases := make([]spirv.ID, len(rows)/4)
	for i := range bases {
		rq := k.clampHigh(f.IAdd(first, k.ic(int64(i))), gs.m/4-1)
		bases[i] = k.linearize(gs.lhsIndex(batch, rq, k.ic(0)), dims4)
	}
	return func(kk spirv.ID) [][4]spirv.ID {
		q := make([][4]spirv.ID, len(rows))
		k0 := f.IMul(kk, k.ic(4))
		for u := range 4 {
			off := f.IMul(f.IAdd(k0, k.ic(int64(u))), k.ic(strideK))
			for i, base := range bases {
				vec := f.LoadElem(v, f.IAdd(base, off))
				for r := range 4 {
					q[4*i+r][u] = f.CompositeExtract(vec, uint32(r))
				}
			}
		}
		return q
	}
}

// gemmBColumnQuads reads B stored with k minor: one vec4 of 4 k per block column
// (columns clamped), regrouped into the vec4 column quads of each of the 4 k.
func (l *lowering) gemmBColumnQuads(k *kernel, gs gemmShape, v spirv.Buffer, batch []spirv.ID, col0 spirv.ID, rn int64) func(kk spirv.ID) [4][]spirv.ID {
	f, m := k.f, k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	dims4 := quarterMinor(gs.rhs.Shape.Dims)
	bases := make([]spirv.ID, rn)
	for j := range bases {
		col := k.clampHigh(f.IAdd(col0, k.ic(int64(j))), gs.n-1)
		bases[j] = k.linearize(gs.rhsIndex(batch, k.ic(0), col), dims4)
	}
	return func(kk spirv.ID) [4][]spirv.ID {
		vecs := make([]spirv.ID, rn)
		for j, base := range bases {
			vecs[j] = f.LoadElem(v, f.IAdd(base, kk))
		}
		var out [4][]spirv.ID
		for u := range 4 {
			for q := int64(0); q < rn/4; q++ {
				parts := make([]spirv.ID, 4)
				for r := range parts {
					parts[r] = f.CompositeExtract(vecs[4*q+int64(r)], uint32(u))
				}
				out[u] = append(out[u], f.CompositeConstruct(vec4, parts...))
			}
		}
		return out
	}
}

// quarterMinor is dims with the minor dimension divided by 4: the dims of a vec4
// view of an array whose minor dimension is a multiple of 4.
func quarterMinor(dims []int64) []int64 {
	d := append([]int64(nil), dims...)
	d[len(d)-1] /= 4
	return d
}

// clampHigh is min(v, hi) for a non-negative index value v.
func (k *kernel) clampHigh(v spirv.ID, hi int64) spirv.ID {
	return k.f.Select(k.f.Greater(v, k.ic(hi)), k.ic(hi), v)
}

// vec4View declares a vec4 alias of the binding of operand x when x is a kernel
// input whose minor dimension is dim and has a multiple of 4 elements (so every
// vec4 the block reads is aligned and inside one row).
func (l *lowering) vec4View(k *kernel, x *hlo.Instruction, dim, size int64) (spirv.Buffer, bool) {
	if x.Op != hlo.OpParameter || x.Shape.DType != hlo.F32 || dim != int64(x.Shape.Rank()-1) || size%4 != 0 {
		return spirv.Buffer{}, false
	}
	n := int(x.Attrs.ParameterNumber)
	vec4 := k.m.TypeVector(k.m.TypeF32(), 4)
	return k.m.StorageBuffer(fmt.Sprintf("in%d_vec4", n), 0, uint32(n), vec4, spirv.ReadOnly), true
}
