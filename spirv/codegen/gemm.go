package codegen

import (
	"fmt"
	"slices"

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

// gemmShape is a dot's GEMM view: each operand seen as if reshaped so that the
// lhs's free dims form one dim (M) and each side's contracting dims one dim (K),
// as XLA's DotDimensionMerger does: a dense layer over [batch, seq, features]
// (free dims 2) and its weight gradient (contracting dims 2) are GEMMs. Merged
// dims must be adjacent and in order, so that the view is the operand's own
// row-major memory; batch dims and the rhs's one free dim stay as they are.
type gemmShape struct {
	dot, lhs, rhs *hlo.Instruction
	d             *hlo.DotDims // in the merged views: one contracting dim a side
	lFree, rFree  int64        // the free dim of each merged view
	lhsDims       []int64      // the merged views' dims
	rhsDims       []int64
	lhsGroups     [][]int64 // the operand dims of each merged dim, in order
	rhsGroups     [][]int64
	m, n, k       int64
	batch         []int64 // batch sizes
}

// rowDims are the sizes of the lhs's free dims, which a row of C stands for.
func (gs gemmShape) rowDims() []int64 {
	var dims []int64
	for _, d := range gs.lhsGroups[gs.lFree] {
		dims = append(dims, gs.lhs.Shape.Dims[d])
	}
	return dims
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
	if d == nil || len(d.LhsContracting) == 0 {
		return gemmShape{}, false
	}
	lf := hlo.Complement(l.Shape.Rank(), d.LhsBatch, d.LhsContracting)
	rf := hlo.Complement(r.Shape.Rank(), d.RhsBatch, d.RhsContracting)
	if len(lf) == 0 || len(rf) != 1 {
		return gemmShape{}, false
	}
	lv, lok := mergeDims(l.Shape.Dims, d.LhsBatch, lf, d.LhsContracting)
	rv, rok := mergeDims(r.Shape.Dims, d.RhsBatch, rf, d.RhsContracting)
	if !lok || !rok {
		return gemmShape{}, false
	}
	gs := gemmShape{dot: root, lhs: l, rhs: r, lFree: lv.free, rFree: rv.free,
		d:       &hlo.DotDims{LhsBatch: lv.batch, RhsBatch: rv.batch, LhsContracting: []int64{lv.contracting}, RhsContracting: []int64{rv.contracting}},
		lhsDims: lv.dims, rhsDims: rv.dims, lhsGroups: lv.groups, rhsGroups: rv.groups,
		m: lv.dims[lv.free], n: rv.dims[rv.free], k: lv.dims[lv.contracting]}
	for _, b := range d.LhsBatch {
		gs.batch = append(gs.batch, l.Shape.Dims[b])
	}
	return gs, true
}

// mergedView is an operand seen with its free dims merged into one and its
// contracting dims into one: dims, the operand dims of each, and where the batch,
// free and contracting dims are.
type mergedView struct {
	dims              []int64
	groups            [][]int64
	batch             []int64
	free, contracting int64
}

// mergeDims merges free and contracting (each adjacent and ascending, else !ok).
func mergeDims(dims, batch, free, contracting []int64) (mergedView, bool) {
	adjacent := func(g []int64) bool {
		for i := range g {
			if g[i] != g[0]+int64(i) {
				return false
			}
		}
		return true
	}
	if !adjacent(free) || !adjacent(contracting) {
		return mergedView{}, false
	}
	v := mergedView{batch: make([]int64, len(batch))}
	for d := int64(0); d < int64(len(dims)); d++ {
		group := []int64{d}
		switch {
		case d == free[0]:
			group, v.free = free, int64(len(v.dims))
		case d == contracting[0]:
			group, v.contracting = contracting, int64(len(v.dims))
		case slices.Contains(free, d) || slices.Contains(contracting, d):
			continue
		default:
			v.batch[slices.Index(batch, d)] = int64(len(v.dims))
		}
		size := int64(1)
		for _, g := range group {
			size *= dims[g]
		}
		v.dims = append(v.dims, size)
		v.groups = append(v.groups, group)
	}
	return v, true
}

// operandIndex is the operand's multi-index of a merged view's index: merged dims
// delinearised over the dims they stand for.
func operandIndex(k *kernel, x *hlo.Instruction, groups [][]int64, idx []spirv.ID) []spirv.ID {
	if len(groups) == x.Shape.Rank() {
		return idx
	}
	out := make([]spirv.ID, x.Shape.Rank())
	for p, g := range groups {
		if len(g) == 1 {
			out[g[0]] = idx[p]
			continue
		}
		sizes := make([]int64, len(g))
		for i, d := range g {
			sizes[i] = x.Shape.Dims[d]
		}
		copy(out[g[0]:], k.delinearize(idx[p], sizes))
	}
	return out
}

func useGEMM(root *hlo.Instruction, t Target) bool {
	gs, ok := gemmView(root)
	return ok && gs.m >= 2 && gs.n >= 2 && gs.m*gs.n*gs.k >= gemmMinWork
}

func (l *lowering) lowerGEMM() error {
	rm, rn := gemmBlock(l.t)
	return l.lowerDotBlocks("gemm", rm, rn)
}

// lowerDotBlocks emits the kernel's dot (the GEMM's) in rm×rn
// blocks of C per invocation.
func (l *lowering) lowerDotBlocks(name string, rm, rn int64) error {
	// The dot is the root, or the one dot of a kernel whose root is its epilogue
	// (kOutput fusion, epilogue.go).
	gs, _ := gemmView(gemmDot(l.c))
	l.p.InPlace = l.epilogueInPlace(gs.dot)
	return l.gemmKernelBlocks(name, product(gs.batch), gs.m, gs.n, rm, rn, l.outputDest(), func(t gemmTile) {
		f := t.g.k.f
		batch := t.g.k.delinearize(t.b, gs.batch)
		acc := l.gemmBlockSum(t.g, gs, batch, t.row0, t.col0, t.rm, t.rn)
		// C is (batch, M, N) row-major.
		rowBase := func(_ int64, row spirv.ID) spirv.ID {
			return f.IMul(f.IAdd(f.IMul(t.b, t.g.k.ic(gs.m)), row), t.g.k.ic(gs.n))
		}
		o := gemmOut{m: gs.m, n: gs.n, colStride: 1, rowBase: rowBase, vec4: gs.n%4 == 0}
		if gs.dot != l.c.Root {
			o.epilogue, o.batch, o.rowDims = gs.dot, batch, gs.rowDims()
		}
		l.gemmStore(t, acc, o)
	})
}

// gemmDest is the buffer a GEMM kernel writes (bound after the inputs): the
// program's output, or a scratch buffer of f32 partial sums.
type gemmDest struct {
	arg Arg
	dt  hlo.DType
}

func (l *lowering) outputDest() gemmDest {
	return gemmDest{arg: Arg{Kind: ArgOutput}, dt: l.p.Outputs[0].DType}
}

// gemmTile is one block of C an invocation computes: batch b, rows row0 …
// row0+rm−1 and columns col0 … col0+rn−1 (row0 a multiple of rm, col0 of rn).
type gemmTile struct {
	g             *gen
	dest          gemmDest
	out           spirv.Buffer
	b, row0, col0 spirv.ID
	rm, rn        int64
}

// gemmKernel emits a kernel of the GEMM's grid: batches × m × n results in rm×rn
// blocks, block computing and storing each. The grid is 2-D: y walks the row
// blocks (with the batch), x the column blocks, gemmLocal of them per workgroup.
// A row block is the same for every invocation of a workgroup, so the A reads are
// uniform (one load for the workgroup's SIMD lanes on lavapipe) and only the B
// reads differ per lane. When the device's grid is smaller, invocations loop over
// blocks.
func (l *lowering) gemmKernel(name string, batches, m, n int64, dest gemmDest, block func(gemmTile)) error {
	rm, rn := gemmBlock(l.t)
	return l.gemmKernelBlocks(name, batches, m, n, rm, rn, dest, block)
}

// gemmKernelBlocks is gemmKernel with rm×rn blocks.
func (l *lowering) gemmKernelBlocks(name string, batches, m, n, rm, rn int64, dest gemmDest, block func(gemmTile)) error {
	tilesM, tilesN := (m+rm-1)/rm, (n+rn-1)/rn
	rowTiles := batches * tilesM // (batch, row block) pairs
	k := l.newKernel(name, gemmLocal)
	out := k.bind(dest.arg, dest.dt, 0)
	g := l.kernelGen(k)
	f := k.f
	groups := k.uniformRowGrid(rowTiles, tilesN, func(ty, tn spirv.ID) {
		g.scoped(func() {
			tm, b := ty, k.ic(0)
			if rowTiles != tilesM {
				tm, b = f.SRem(ty, k.ic(tilesM)), f.SDiv(ty, k.ic(tilesM))
			}
			block(gemmTile{g: g, dest: dest, out: out, b: b, row0: f.IMul(tm, k.ic(rm)), col0: f.IMul(tn, k.ic(rn)), rm: rm, rn: rn})
		})
	})
	return l.add(k, groups)
}

// uniformRowGrid runs body(y, x) for every y < ny and x < nx on a 2-D grid: y
// from the workgroup's y id (the same for all its invocations, so that what
// depends only on y is uniform: one load for the workgroup's SIMD lanes on
// lavapipe), x from its x id and the invocation, k.local per workgroup. Where the
// device's grid is smaller, invocations loop over both. It returns the grid.
func (k *kernel) uniformRowGrid(ny, nx int64, body func(y, x spirv.ID)) [3]uint32 {
	f := k.f
	local := int64(k.local)
	limX, limY := k.t.gridLimit(0), k.t.gridLimit(1)
	gx := min((nx+local-1)/local, limX)
	gy := min(ny, limY)
	wy := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 1))
	nwy := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 1))
	wx := k.toIndex(f.BuiltInComponent(spirv.BuiltInWorkgroupId, 0))
	nwx := k.toIndex(f.BuiltInComponent(spirv.BuiltInNumWorkgroups, 0))
	lid := k.toIndex(f.BuiltInComponent(spirv.BuiltInLocalInvocationId, 0))
	x0, xStride := f.IAdd(f.IMul(wx, k.ic(local)), lid), f.IMul(nwx, k.ic(local))
	cols := func(y spirv.ID) {
		switch {
		case gx*local == nx:
			body(y, x0) // one x per invocation, all in range
			return
		case gx*local > nx:
			f.If(f.Less(x0, k.ic(nx)), func() { body(y, x0) }, nil)
			return
		}
		k.countLoop((nx+gx*local-1)/(gx*local), func() {
			f.Range(x0, k.ic(nx), xStride, func(x spirv.ID) { body(y, x) })
		})
	}
	if gy == ny {
		cols(wy)
	} else {
		k.countLoop((ny+gy-1)/gy, func() {
			f.Range(wy, k.ic(ny), nwy, cols)
		})
	}
	return [3]uint32{uint32(gx), uint32(gy), 1}
}

// gemmAcc is a block's accumulators: rm×rn/4 vec4 (row-major, rn/4 per row), in
// f32 whatever the operands' type.
type gemmAcc struct {
	k   *kernel
	acc []spirv.ID
	rn  int64
}

func newGemmAcc(k *kernel, rm, rn int64) *gemmAcc {
	vec4 := k.m.TypeVector(k.m.TypeF32(), 4)
	a := &gemmAcc{k: k, acc: make([]spirv.ID, rm*rn/4), rn: rn}
	for i := range a.acc {
		a.acc[i] = k.variable(vec4, k.m.ConstOf(vec4, 0), "acc")
	}
	return a
}

// multiply adds A's values av (one per block row, at one k) times B's row at that
// k (bv: per column quad, a vec4) into the accumulators.
func (a *gemmAcc) multiply(bv, av []spirv.ID) {
	f := a.k.f
	vec4 := a.k.m.TypeVector(a.k.m.TypeF32(), 4)
	for i := range av {
		for q := range bv {
			p := a.acc[int64(i)*a.rn/4+int64(q)]
			prod := f.Op(spirv.OpVectorTimesScalar, vec4, uint32(bv[q]), uint32(av[i]))
			f.Store(p, f.FAdd(f.Load(p), prod))
		}
	}
}

// sumK adds the products of k = 0 … kLen−1 read by ld, in k order: a loop over
// octets of k where ld reads B eight k at a time (sumOctet), else over quads of
// k (sumQuad), then the last kLen%4 one by one (sumTail).
func (a *gemmAcc) sumK(g *gen, ld gemmLoad, kLen int64) {
	if ld.group > 0 && kLen%ld.group == 0 {
		a.sumGroups(g, ld, kLen)
		return
	}
	switch k4 := kLen / 4; {
	case ld.bOctet != nil && kLen%8 == 0: // set only where it is
		a.k.loop(kLen/8, func(ko spirv.ID) { a.sumOctet(g, ld, ko) })
	case k4 > 0:
		a.k.loop(k4, func(kk spirv.ID) { a.sumQuad(g, ld, kk) })
	}
	a.sumTail(g, ld, kLen)
}

// sumGroups is sumK over whole scale groups of a quantised B: per group, its
// scales, then its octets (where ld reads them and the group holds whole ones)
// or quads in order.
func (a *gemmAcc) sumGroups(g *gen, ld gemmLoad, kLen int64) {
	k, f := a.k, a.k.f
	span, sum := int64(4), a.sumQuad
	if ld.bOctet != nil && ld.group%8 == 0 {
		span, sum = 8, a.sumOctet
	}
	steps := ld.group / span
	k.loop(kLen/ld.group, func(gi spirv.ID) {
		g.scoped(func() {
			ld.beginGroup(f.IMul(gi, k.ic(ld.group)))
			k.loop(steps, func(q spirv.ID) { sum(g, ld, f.IAdd(f.IMul(gi, k.ic(steps)), q)) })
			ld.endGroup()
		})
	})
}

// sumQuad adds the products of k = 4kk … 4kk+3: ld.aQuad, and ld.bQuad or
// ld.bRow per k.
func (a *gemmAcc) sumQuad(g *gen, ld gemmLoad, kk spirv.ID) {
	g.scoped(func() {
		var bq [4][]spirv.ID
		if ld.bQuad != nil {
			bq = ld.bQuad(kk)
		}
		a.sumQuadOf(g, ld, kk, bq)
	})
}

// sumOctet adds the products of k = 8ko … 8ko+7: two quads of A, and B's eight
// rows from one ld.bOctet (a word of eight s4 per column, read once).
func (a *gemmAcc) sumOctet(g *gen, ld gemmLoad, ko spirv.ID) {
	k, f := a.k, a.k.f
	g.scoped(func() {
		b8 := ld.bOctet(ko)
		kk := f.IMul(ko, k.ic(2))
		a.sumQuadOf(g, ld, kk, [4][]spirv.ID(b8[:4]))
		a.sumQuadOf(g, ld, f.IAdd(kk, k.ic(1)), [4][]spirv.ID(b8[4:]))
	})
}

// sumQuadOf adds the products of k = 4kk … 4kk+3 with B's rows bq where set,
// else ld.bRow's.
func (a *gemmAcc) sumQuadOf(g *gen, ld gemmLoad, kk spirv.ID, bq [4][]spirv.ID) {
	k, f := a.k, a.k.f
	quads := ld.aQuad(kk) // per row, the values at k = 4kk..4kk+3
	k0 := f.IMul(kk, k.ic(4))
	for u := range 4 {
		av := make([]spirv.ID, len(quads))
		for i, q := range quads {
			av[i] = q[u]
		}
		if bq[u] == nil {
			bq[u] = ld.bRow(f.IAdd(k0, k.ic(int64(u))))
		}
		a.multiply(bq[u], av)
	}
}

// sumTail adds the products of the last kLen%4 k, one by one.
func (a *gemmAcc) sumTail(g *gen, ld gemmLoad, kLen int64) {
	for kv := kLen / 4 * 4; kv < kLen; kv++ {
		g.scoped(func() { a.multiply(ld.bRow(a.k.ic(kv)), ld.aCol(a.k.ic(kv))) })
	}
}

// gemmBlockSum accumulates the rm×rn block of C at (row0, col0) of batch element
// batch.
func (l *lowering) gemmBlockSum(g *gen, gs gemmShape, batch []spirv.ID, row0, col0 spirv.ID, rm, rn int64) *gemmAcc {
	rows := gemmRows(g.k, row0, rm, gs.m)
	acc := newGemmAcc(g.k, rm, rn)
	acc.sumK(g, l.gemmLoaders(g, gs, batch, rows, col0, rn), gs.k)
	return acc
}

// gemmRows are a block's rm rows from row0, clamped to m−1: rows past M are
// computed, not stored.
func gemmRows(k *kernel, row0 spirv.ID, rm, m int64) []spirv.ID {
	rows := make([]spirv.ID, rm)
	for i := range rows {
		rows[i] = k.clampHigh(k.f.IAdd(row0, k.ic(int64(i))), m-1)
	}
	return rows
}

// lhsIndex and rhsIndex place batch, free and contracting indices in operand order.
func (gs gemmShape) lhsIndex(batch []spirv.ID, row, kv spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, len(gs.lhsDims))
	for i, d := range gs.d.LhsBatch {
		idx[d] = batch[i]
	}
	idx[gs.lFree] = row
	idx[gs.d.LhsContracting[0]] = kv
	return idx
}

func (gs gemmShape) rhsIndex(batch []spirv.ID, kv, col spirv.ID) []spirv.ID {
	idx := make([]spirv.ID, len(gs.rhsDims))
	for i, d := range gs.d.RhsBatch {
		idx[d] = batch[i]
	}
	idx[gs.rFree] = col
	idx[gs.d.RhsContracting[0]] = kv
	return idx
}

// gemmOut places C in the output: element (row, col) of a block's batch is at
// rowBase(i, row) + col·colStride, for row = row0 + i < m and col < n. i is the
// block's row, known at code generation, except in an epilogue's row loop (a dot
// GEMM's, whose rowBase reads only row), where it is -1.
type gemmOut struct {
	m, n      int64
	colStride int64
	rowBase   func(i int64, row spirv.ID) spirv.ID
	// vec4: the columns are contiguous (colStride 1) and every rowBase a multiple
	// of 4, so that the output takes a vec4 per column quad.
	vec4 bool
	// rowIndex and quad0, when set, place a vec4 store's epilogue (a convolution's,
	// whose output features are its minor dim): block row i's index in the
	// epilogue's leading dims, and the feature quad of the block's column 0.
	rowIndex func(i int64) []spirv.ID
	quad0    spirv.ID
	// epilogue is the dot whose product the kernel's epilogue reads (epilogue.go),
	// with the block's batch indices; nil: C is stored as it is.
	epilogue *hlo.Instruction
	batch    []spirv.ID
	rowDims  []int64 // the sizes of the dims a row stands for, when more than one
	// index, when set, is the epilogue's multi-index of block row i and column col
	// (a convolution's output): the rows are then stored unrolled, not in a loop,
	// since rowBase needs i.
	index func(i int64, col spirv.ID) []spirv.ID
	// rowValid, when set, is whether row < m stands for an element of C (a
	// phase-ordered convolution's padding rows do not).
	rowValid func(row spirv.ID) spirv.ID
}

// gemmStore is the GEMM's output stage: it writes the block's elements that lie
// inside C, through the epilogue when the kernel has one, a vec4 per row and
// column quad where gemmOut allows it (four f32, or four f16/bf16 rounded: one
// vector store, where lavapipe pays a loop over the SIMD lanes per store), else
// element by element. Every element is a sum from zero (sumFromZero).
func (l *lowering) gemmStore(t gemmTile, acc *gemmAcc, o gemmOut) {
	k, f, m := t.g.k, t.g.k.f, t.g.k.m
	dt, pdt := t.dest.dt, t.dest.dt // the stored type and the product's
	if o.epilogue != nil {
		pdt = o.epilogue.Shape.DType
	}
	var out4 spirv.Buffer
	if (dt == hlo.F32 || isNarrowFloat(dt)) && o.vec4 && o.colStride == 1 {
		out4 = f.View(t.out, t.dest.arg.String()+"_vec4", k.vec4Type(dt))
	}
	q0 := f.SDiv(t.col0, k.ic(4)) // col0 is a multiple of 4
	storeRow := func(i int64, row spirv.ID, accAt func(q int64) spirv.ID) {
		inside := f.Less(row, k.ic(o.m))
		if o.rowValid != nil {
			inside = f.LogicalAnd(inside, o.rowValid(row))
		}
		f.If(inside, func() {
			rowBase := o.rowBase(i, row)
			rowIdx := slices.Clone(o.batch)
			switch {
			case o.rowIndex != nil:
				rowIdx = o.rowIndex(i)
			case len(o.rowDims) > 1: // the lhs's free dims, merged into rows
				rowIdx = append(rowIdx, k.delinearize(row, o.rowDims)...)
			default:
				rowIdx = append(rowIdx, row)
			}
			for q := range t.rn / 4 {
				v := accAt(q)
				var lanes [4]spirv.ID
				for j := range lanes {
					lanes[j] = k.sumFromZero(f.CompositeExtract(v, uint32(j)), pdt)
				}
				if out4.Var != 0 {
					quad := f.IAdd(q0, k.ic(q))
					f.If(f.Less(quad, k.ic(o.n/4)), func() {
						group := f.IAdd(f.SDiv(rowBase, k.ic(4)), quad)
						st := lanes
						if o.epilogue != nil {
							equad := quad
							if o.quad0 != 0 {
								equad = f.IAdd(o.quad0, quad)
							}
							st = l.gemmEpilogue4(t.g, o.epilogue, rowIdx, group, equad, lanes)
						} else {
							for j := range st {
								st[j] = k.round(st[j], pdt)
							}
						}
						k.storeVec4(out4, group, st, dt)
					}, nil)
					continue
				}
				for j := range int64(4) {
					col := f.IAdd(t.col0, k.ic(4*q+j))
					f.If(f.Less(col, k.ic(o.n)), func() {
						at := col
						if o.colStride != 1 {
							at = f.IMul(col, k.ic(o.colStride))
						}
						at = f.IAdd(rowBase, at)
						v := k.round(lanes[j], pdt)
						if o.epilogue == nil {
							k.store(t.out, at, v, dt)
							return
						}
						t.g.scoped(func() {
							idx := append(slices.Clone(rowIdx), col)
							if o.index != nil {
								idx = o.index(i, col)
							}
							k.store(t.out, at, l.gemmEpilogue(t.g, o.epilogue, idx, v), dt)
						})
					}, nil)
				}
			}
		}, nil)
	}
	if o.epilogue == nil || o.index != nil {
		for i := range t.rm {
			storeRow(i, f.IAdd(t.row0, k.ic(i)), func(q int64) spirv.ID { return f.Load(acc.acc[i*t.rn/4+q]) })
		}
		return
	}
	// An epilogue is emitted once, in a loop over the block's rows, rather than for
	// each of its rm rows: a large one (a gelu, f16 rounding) unrolled rm times made
	// the driver's compile of the kernel take seconds.
	vec4 := m.TypeVector(m.TypeF32(), 4)
	arr := f.Var(m.TypeArray(vec4, uint32(len(acc.acc))), "block")
	for j, a := range acc.acc {
		f.Store(f.AccessChain(arr, k.ic(int64(j))), f.Load(a))
	}
	k.loop(t.rm, func(i spirv.ID) {
		t.g.scoped(func() {
			storeRow(-1, f.IAdd(t.row0, i), func(q int64) spirv.ID {
				return f.Load(f.AccessChain(arr, f.IAdd(f.IMul(i, k.ic(t.rn/4)), k.ic(q))))
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
	// bOctet, when set, is bRow(8ko+u) for u = 0..7 at once (a quantised B whose
	// word holds 8 k of a column, gemm_quant.go): sumK then steps by octets.
	bOctet func(ko spirv.ID) [8][]spirv.ID
	// group, when set, is the k per scale group of a quantised B (gemm_quant.go):
	// the k loop then runs over groups, calling beginGroup with each group's first
	// k before its quads (so that B's scales are read once per group) and
	// endGroup after them.
	group      int64
	beginGroup func(k0 spirv.ID)
	endGroup   func()
}

func (l *lowering) gemmLoaders(g *gen, gs gemmShape, batch, rows []spirv.ID, col0 spirv.ID, rn int64) gemmLoad {
	k, f := g.k, g.k.f
	var ld gemmLoad
	ld.aCol = func(kv spirv.ID) []spirv.ID {
		a := make([]spirv.ID, len(rows))
		for i, r := range rows {
			a[i] = g.emit(gs.lhs, operandIndex(k, gs.lhs, gs.lhsGroups, gs.lhsIndex(batch, r, kv)))
		}
		return a
	}
	if v, ok := l.mergedVec4View(k, gs.lhs, gs.lhsDims, gs.lFree); ok && len(rows)%4 == 0 {
		ld.aQuad = l.gemmAColumnQuads(k, gs, v, batch, rows)
	} else if v, ok := l.mergedVec4View(k, gs.lhs, gs.lhsDims, gs.d.LhsContracting[0]); ok {
		// The vec4 index of A[row, 4kk] is row's base (in vec4 units) + kk.
		dims4 := quarterMinor(gs.lhsDims)
		bases := make([]spirv.ID, len(rows))
		for i, r := range rows {
			bases[i] = k.linearize(gs.lhsIndex(batch, r, k.ic(0)), dims4)
		}
		ld.aQuad = vec4RowQuads(k, v, bases, nil)
	} else {
		ld.aQuad = quadsFromCols(k, ld.aCol)
	}
	if v, ok := l.mergedVec4View(k, gs.rhs, gs.rhsDims, gs.d.RhsContracting[0]); ok {
		dims4 := quarterMinor(gs.rhsDims)
		bases := make([]spirv.ID, rn)
		for j := range bases {
			col := k.clampHigh(f.IAdd(col0, k.ic(int64(j))), gs.n-1)
			bases[j] = k.linearize(gs.rhsIndex(batch, k.ic(0), col), dims4)
		}
		ld.bQuad = vec4ColumnQuads(k, v, bases)
	}
	if v, ok := l.mergedVec4View(k, gs.rhs, gs.rhsDims, gs.rFree); ok {
		// The vec4 index of B[kv, 4c] is kv's row base (in vec4 units) + c.
		dims4 := quarterMinor(gs.rhsDims)
		cs := columnQuads(k, col0, rn, gs.n)
		ld.bRow = func(kv spirv.ID) []spirv.ID {
			return vec4Row(k, v, k.linearize(gs.rhsIndex(batch, kv, k.ic(0)), dims4), cs)
		}
		return ld
	}
	ld.bRow = rowFromElems(k, col0, rn, gs.n, func(kv, col spirv.ID) spirv.ID {
		return g.emit(gs.rhs, operandIndex(k, gs.rhs, gs.rhsGroups, gs.rhsIndex(batch, kv, col)))
	})
	if q, ok := quantView(gs); ok {
		l.quantLoaders(g, gs, q, &ld, col0, rn)
	}
	return ld
}

// quadsFromCols reads A's quads of k one k at a time (aCol), for operands with no
// vec4 view.
func quadsFromCols(k *kernel, aCol func(kv spirv.ID) []spirv.ID) func(kk spirv.ID) [][4]spirv.ID {
	f := k.f
	return func(kk spirv.ID) [][4]spirv.ID {
		var q [][4]spirv.ID
		for u := range 4 {
			col := aCol(f.IAdd(f.IMul(kk, k.ic(4)), k.ic(int64(u))))
			if q == nil {
				q = make([][4]spirv.ID, len(col))
			}
			for i := range col {
				q[i][u] = col[i]
			}
		}
		return q
	}
}

// vec4RowQuads reads, per block row, the vec4 at bases[i] + kk of a view whose
// vec4 holds 4 consecutive k; valid (when set) marks rows whose vec4 is read, the
// others are zero.
func vec4RowQuads(k *kernel, v vec4Source, bases, valid []spirv.ID) func(kk spirv.ID) [][4]spirv.ID {
	f := k.f
	zero := k.m.ConstOf(k.m.TypeVector(k.m.TypeF32(), 4), 0)
	return func(kk spirv.ID) [][4]spirv.ID {
		q := make([][4]spirv.ID, len(bases))
		for i, base := range bases {
			vec := k.loadVec4(v, f.IAdd(base, kk))
			if valid != nil && valid[i] != 0 {
				vec = f.Select(valid[i], vec, zero)
			}
			for u := range 4 {
				q[i][u] = f.CompositeExtract(vec, uint32(u))
			}
		}
		return q
	}
}

// columnQuads are the block's column quads (col0/4 + q), clamped to the last
// full quad of n columns.
func columnQuads(k *kernel, col0 spirv.ID, rn, n int64) []spirv.ID {
	first := k.f.SDiv(col0, k.ic(4))
	cs := make([]spirv.ID, rn/4)
	for q := range cs {
		cs[q] = k.clampHigh(k.f.IAdd(first, k.ic(int64(q))), n/4-1)
	}
	return cs
}

// vec4Row reads B's row at one k from a view whose vec4 holds 4 columns: the vec4
// at base + c for each column quad c.
func vec4Row(k *kernel, v vec4Source, base spirv.ID, cs []spirv.ID) []spirv.ID {
	out := make([]spirv.ID, len(cs))
	for q, c := range cs {
		out[q] = k.loadVec4(v, k.f.IAdd(base, c))
	}
	return out
}

// rowFromElems reads B's row at one k element by element (columns clamped to
// n−1), as vec4 column quads.
func rowFromElems(k *kernel, col0 spirv.ID, rn, n int64, elem func(kv, col spirv.ID) spirv.ID) func(kv spirv.ID) []spirv.ID {
	f := k.f
	vec4 := k.m.TypeVector(k.m.TypeF32(), 4)
	cols := make([]spirv.ID, rn)
	for j := range cols {
		cols[j] = k.clampHigh(f.IAdd(col0, k.ic(int64(j))), n-1)
	}
	return func(kv spirv.ID) []spirv.ID {
		out := make([]spirv.ID, rn/4)
		for q := range out {
			parts := make([]spirv.ID, 4)
			for j := range parts {
				parts[j] = elem(kv, cols[4*q+j])
			}
			out[q] = f.CompositeConstruct(vec4, parts...)
		}
		return out
	}
}

// gemmAColumnQuads reads A stored with its free (row) dimension minor: for each k
// of a quad, one vec4 per 4 block rows (row quads clamped to the last full quad;
// the block's rows start at a multiple of RM, a multiple of 4).
func (l *lowering) gemmAColumnQuads(k *kernel, gs gemmShape, v vec4Source, batch, rows []spirv.ID) func(kk spirv.ID) [][4]spirv.ID {
	f := k.f
	dims4 := quarterMinor(gs.lhsDims)
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
				vec := k.loadVec4(v, f.IAdd(base, off))
				for r := range 4 {
					q[4*i+r][u] = f.CompositeExtract(vec, uint32(r))
				}
			}
		}
		return q
	}
}

// vec4ColumnQuads reads B stored with k minor: one vec4 of 4 k per block column
// (at bases[j] + kk), regrouped into the vec4 column quads of each of the 4 k.
func vec4ColumnQuads(k *kernel, v vec4Source, bases []spirv.ID) func(kk spirv.ID) [4][]spirv.ID {
	f, m := k.f, k.m
	vec4 := m.TypeVector(m.TypeF32(), 4)
	return func(kk spirv.ID) [4][]spirv.ID {
		vecs := make([]spirv.ID, len(bases))
		for j, base := range bases {
			vecs[j] = k.loadVec4(v, f.IAdd(base, kk))
		}
		var out [4][]spirv.ID
		for u := range 4 {
			for q := 0; q < len(bases)/4; q++ {
				parts := make([]spirv.ID, 4)
				for r := range parts {
					parts[r] = f.CompositeExtract(vecs[4*q+r], uint32(u))
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

// vec4View is where a kernel reads operand x four elements at a time, when x is a
// kernel input whose minor dimension is dim and has a multiple of 4 elements (so
// every vec4 read is aligned and inside one row), of f32 or, where the target
// stores 16-bit types, f16 or bf16 (4 u16, widened by loadVec4): its texel buffer
// where the target and the input allow one (kernel.texelInput: a texel fetch costs
// llvmpipe a fraction of a storage-buffer load, docs/codegen.md "Texel reads"),
// else a vec4 alias of its binding. Not a texel buffer for an input the program may
// write in place: the texel view is read-only. x may also be a convert of such an
// f16 or bf16 input to f32 (a mixed-precision dot's fused operand convert):
// loadVec4's widening is that convert, exactly.
func (l *lowering) vec4View(k *kernel, x *hlo.Instruction, dim, size int64) (vec4Source, bool) {
	n, dt, ok := vec4Param(x, dim, size)
	if !ok {
		return vec4Source{}, false
	}
	return l.vec4Source(k, n, dt), true
}

// vec4Param is the parameter number and dtype of the input vec4View reads.
func vec4Param(x *hlo.Instruction, dim, size int64) (int, hlo.DType, bool) {
	if x.Op == hlo.OpConvert && x.Shape.DType == hlo.F32 && isNarrowFloat(x.Operands[0].Shape.DType) {
		x = x.Operands[0]
	}
	dt := x.Shape.DType
	if x.Op != hlo.OpParameter || !(dt == hlo.F32 || isNarrowFloat(dt)) || dim != int64(x.Shape.Rank()-1) || size%4 != 0 {
		return 0, 0, false
	}
	return int(x.Attrs.ParameterNumber), dt, true
}

// mergedVec4View is vec4View for dim of a merged view (dims): its last dim is the
// operand's minor dims, contiguous in memory.
func (l *lowering) mergedVec4View(k *kernel, x *hlo.Instruction, dims []int64, dim int64) (vec4Source, bool) {
	if dim != int64(len(dims)-1) {
		return vec4Source{}, false
	}
	return l.vec4View(k, x, int64(x.Shape.Rank()-1), dims[dim])
}

// vec4Input is the vec4 alias of input n's binding (holding dt), declared once
// per kernel.
func (k *kernel) vec4Input(n int, dt hlo.DType) spirv.Buffer {
	if buf, ok := k.vec4s[n]; ok {
		return buf
	}
	buf := k.view(n, fmt.Sprintf("in%d_vec4", n), k.vec4Type(dt))
	k.vec4s[n] = buf
	k.vec4DTs[buf.Var] = dt
	return buf
}

// loadVec4 reads vec4 i of a vec4 view as 4 f32 register values: f32 as stored,
// f16 and bf16 widened exactly.
func (k *kernel) loadVec4Buffer(v spirv.Buffer, i spirv.ID) spirv.ID {
	vec := k.f.LoadElem(v, i)
	dt := k.vec4DTs[v.Var]
	if !isNarrowFloat(dt) {
		return vec
	}
	m := k.m
	return k.widenVec4(k.f.Convert(m.TypeVector(m.TypeU32(), 4), vec), dt)
}

// widenVec4 is the f32 vec4 of four f16 or bf16 values whose bits are the low
// halves of wide (a u32 vec4).
func (k *kernel) widenVec4(wide spirv.ID, dt hlo.DType) spirv.ID {
	f, m := k.f, k.m
	u4 := m.TypeVector(m.TypeU32(), 4)
	if dt == hlo.BF16 {
		return f.Bitcast(m.TypeVector(m.TypeF32(), 4), f.Shl(wide, m.ConstOf(u4, 16)))
	}
	parts := make([]spirv.ID, 4)
	for u := range parts {
		parts[u] = k.f16ToF32(f.CompositeExtract(wide, uint32(u)))
	}
	return f.CompositeConstruct(m.TypeVector(m.TypeF32(), 4), parts...)
}
