package codegen

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Row kernels. The fusion pass fuses a reduction over the minor dimensions of its
// input (a row reduction: softmax's max and sum, layernorm's mean and variance) into
// the elementwise kernel that reads it back through a broadcast along those
// dimensions. Emitted per output element, such a reduce would be recomputed for
// every element of its row; a row kernel instead gives each team (a subgroup, or
// one invocation) whole rows: it folds every reduction of the row once, keeps the
// results in registers, and then computes the row's outputs, whose reads of the
// reductions hit the emitter's cache. The row's elements are swept four at a time
// when the row length allows, so inputs of 32-bit types are read as vec4 loads,
// like the streaming kernels'.

// rowPlan is the shape of a row kernel.
type rowPlan struct {
	rowDims []int64            // R: the dims of every reduction's result, leading the output's dims
	reduces []*hlo.Instruction // the reductions, operands before users
	colDims []int64            // the output's dims after R (none: the output is one value per row)
}

// planRows recognises a row kernel: a computation whose root is an array that is
// not itself a reduction, holding reductions that all reduce the minor dims of their
// input and share their result dims R, which lead the root's dims.
func planRows(c *hlo.Computation) (rowPlan, bool) {
	var rp rowPlan
	out, ok := rowOutputDims(c.Root)
	if !ok {
		return rp, false
	}
	for _, in := range c.Instructions {
		if in.Op != hlo.OpReduce {
			continue
		}
		dims, ok := hlo.RowReduceDims(in)
		if !ok || (rp.reduces != nil && !slices.Equal(dims, rp.rowDims)) {
			return rp, false
		}
		rp.rowDims = dims
		rp.reduces = append(rp.reduces, in)
	}
	if rp.reduces == nil || len(out) < len(rp.rowDims) || !slices.Equal(out[:len(rp.rowDims)], rp.rowDims) {
		return rp, false
	}
	rp.colDims = out[len(rp.rowDims):]
	return rp, true
}

// rowOutputDims is the dims every output of a row kernel's root shares: the root
// is an array that is not a reduction, or a tuple of such arrays of one dims
// (sibling fusion), all swept together.
func rowOutputDims(root *hlo.Instruction) ([]int64, bool) {
	elems := []*hlo.Instruction{root}
	if root.Op == hlo.OpTuple {
		elems = root.Operands
	}
	for _, e := range elems {
		if !e.Shape.IsArray() || e.Op == hlo.OpReduce || !e.Shape.SameDims(elems[0].Shape) {
			return nil, false
		}
	}
	return elems[0].Shape.Dims, len(elems) > 0
}

// lowerRows emits the row kernel: a loop over rows, each folding the row's
// reductions and then sweeping its output elements. Where every reduction can be
// combined by subgroup arithmetic (rowSubgroupOps), a subgroup takes each row:
// its lanes sweep every SubgroupSize-th vec4 group (consecutive lanes read
// consecutive memory) and combine their partial folds; the order of the sum then
// differs from cpuref's, within the reduction tolerance. Otherwise one invocation
// takes each row and folds it in cpuref's order, exactly.
func (l *lowering) lowerRows(rp rowPlan) error {
	rows, cols := product(rp.rowDims), product(rp.colDims)
	if rows == 0 || cols == 0 {
		return nil // nothing to compute
	}
	k := l.newKernel("", defaultLocal)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	l.p.InPlace = inPlaceInputs(l.c, len(rp.rowDims))
	var team rowTeam
	row := func(r spirv.ID) {
		g.scoped(func() {
			rowIdx := k.delinearize(r, rp.rowDims)
			for _, red := range rp.reduces {
				g.define(red, rowIdx, l.rowFold(g, team, red, r, rowIdx))
			}
			l.rowOutputs(g, team, outs, r, rowIdx, rp.colDims)
		})
	}
	ops := rowSubgroupOps(rp, l.t)
	if ops == nil {
		team = rowTeam{lane: k.ic(0), size: k.ic(1)}
		return l.add(k, k.gridStride(rows, row))
	}
	f := k.f
	perGroup := int64(k.local) / int64(min(max(l.t.SubgroupSize, 1), k.local))
	groups := k.teamStride(rows, perGroup, func() (spirv.ID, spirv.ID) {
		team = rowTeam{ops: ops,
			lane: k.toIndex(f.LoadBuiltIn(spirv.BuiltInSubgroupLocalInvocationId)),
			size: k.toIndex(f.LoadBuiltIn(spirv.BuiltInSubgroupSize))}
		return k.toIndex(f.LoadBuiltIn(spirv.BuiltInSubgroupId)), k.toIndex(f.LoadBuiltIn(spirv.BuiltInNumSubgroups))
	}, row)
	return l.add(k, groups)
}

// rowTeam is who sweeps a row: one invocation (lane 0 of a team of 1), or a
// subgroup, whose lanes take every size-th element group and whose partial folds
// ops combines (per reduction).
type rowTeam struct {
	lane, size spirv.ID // index-typed
	ops        map[*hlo.Instruction]*subgroupOp
}

// loop runs body(i) for the i in [0, n) that are the lane's: all of them for a
// team of one.
func (t rowTeam) loop(g *gen, n int64, body func(i spirv.ID)) {
	if t.ops == nil {
		g.loop(n, body)
		return
	}
	k := g.k
	// Counted as if the team had one lane: the subgroup size is known at run time only.
	k.countLoop(n, func() {
		k.f.Range(t.lane, k.ic(n), t.size, func(i spirv.ID) { g.scoped(func() { body(i) }) })
	})
}

// rowSubgroupOps returns, per reduction of a row kernel, the subgroup operation
// that combines the lanes' partial folds, or nil when the target lacks subgroup
// arithmetic or some reduction has a reducer it cannot combine (then each row is
// one invocation's).
func rowSubgroupOps(rp rowPlan, t Target) map[*hlo.Instruction]*subgroupOp {
	ops := map[*hlo.Instruction]*subgroupOp{}
	for _, red := range rp.reduces {
		op := rowSubgroupOp(red.Called[0], red.Shape.DType, t)
		if op == nil {
			return nil
		}
		ops[red] = op
	}
	return ops
}

// rowSubgroupOp is subgroupReducer's operation, and also f32 maximum and minimum,
// which combine as integer max/min of an order-preserving key (orderedKey) so that
// NaN propagates and -0 < +0, as the reducer orders them.
func rowSubgroupOp(c *hlo.Computation, dt hlo.DType, t Target) *subgroupOp {
	if op := subgroupReducer(c, []hlo.DType{dt}, t); op != nil || dt != hlo.F32 {
		return op
	}
	// The same reducer shape, asked as s32, admits maximum and minimum (and add,
	// which f32 already had).
	if op := subgroupReducer(c, []hlo.DType{hlo.S32}, t); op != nil && op.op != hlo.OpAdd {
		return &subgroupOp{op: op.op, keyed: true}
	}
	return nil
}

// rowFold folds the row rowIdx (linear r) of reduction red. A team of one folds
// in row-major order from the init value, as emitReduce does; a subgroup's lanes
// fold their elements from the reducer's identity, the subgroup combines them,
// and the init value is applied once, first.
func (l *lowering) rowFold(g *gen, team rowTeam, red *hlo.Instruction, r spirv.ID, rowIdx []spirv.ID) []spirv.ID {
	k, f := g.k, g.k.f
	x, init, dt := red.Operands[0], red.Operands[1], red.Shape.DType
	op := team.ops[red]
	start := g.emit(init, scalarIndex)
	if op != nil {
		start = op.identity(k, dt)
	}
	acc := k.variable(k.regType(dt), start, "acc")
	colDims := x.Shape.Dims[len(rowIdx):]
	sweepRow(g, team, r, rowIdx, x.Shape.Dims, colDims, func(elems []rowElem) {
		for _, e := range elems {
			v := g.emit(x, e.idx)
			f.Store(acc, g.call(red.Called[0], []spirv.ID{f.Load(acc), v})[0])
		}
	})
	v := f.Load(acc)
	if op == nil {
		return []spirv.ID{v}
	}
	return g.call(red.Called[0], []spirv.ID{g.emit(init, scalarIndex), op.combine(k, v)})
}

// rowOutputs computes and stores the output elements of row r, every output's
// (a multi-output root's outputs share their dims) in one sweep.
func (l *lowering) rowOutputs(g *gen, team rowTeam, bufs []spirv.Buffer, r spirv.ID, rowIdx []spirv.ID, colDims []int64) {
	k, f := g.k, g.k.f
	vecBufs := make([]spirv.Buffer, len(bufs))
	sweepRow(g, team, r, rowIdx, l.p.Outputs[0].Dims, colDims, func(elems []rowElem) {
		vals := make([][]spirv.ID, len(elems)) // per element, per output
		for i, e := range elems {
			vals[i] = g.emitN(l.c.Root, e.idx)
		}
		for j, out := range l.p.Outputs {
			if len(elems) < 4 || !is32(out.DType) {
				for i, e := range elems {
					k.store(bufs[j], e.lin, vals[i][j], out.DType)
				}
				continue
			}
			if vecBufs[j].Var == 0 { // through the output's own buffer: split or addressed too
				vecBufs[j] = k.f.View(bufs[j], fmt.Sprintf("out%d_vec4", j), k.vec4Type(out.DType))
			}
			group := make([]spirv.ID, len(elems))
			for i := range elems {
				group[i] = k.toStore(vals[i][j], out.DType)
			}
			f.StoreElem(vecBufs[j], elems[0].group, f.CompositeConstruct(k.vec4Type(out.DType), group...))
		}
	})
}

// rowElem is one element of a row sweep: its multi-index in the swept array, its
// linear index there, and (in groups of four) the vec4 group holding it.
type rowElem struct {
	idx        []spirv.ID
	lin, group spirv.ID
}

// sweepRow calls body for the team lane's elements of row r (multi-index rowIdx ++
// column index) of an array of dims, in row-major order: four consecutive elements per
// call when the minor dim is a multiple of 4, with their linear indices registered
// as lanes of a vec4 group, so that inputs read at them (of the swept dims, or of
// the column dims alone, as a broadcast row of weights) become vec4 loads.
func sweepRow(g *gen, team rowTeam, r spirv.ID, rowIdx []spirv.ID, dims, colDims []int64, body func([]rowElem)) {
	k, f := g.k, g.k.f
	cols := product(colDims)
	rowBase := f.IMul(r, k.ic(cols))
	if len(colDims) == 0 || colDims[len(colDims)-1]%4 != 0 {
		team.loop(g, cols, func(j spirv.ID) {
			idx := append(slices.Clone(rowIdx), k.delinearize(j, colDims)...)
			lin := f.IAdd(rowBase, j)
			k.linear[fmt.Sprint(idx, dims)] = lin
			body([]rowElem{{idx: idx, lin: lin}})
		})
		return
	}
	last := len(colDims) - 1
	rowGroups := f.IMul(r, k.ic(cols/4))
	team.loop(g, cols/4, func(q spirv.ID) {
		colBase := f.IMul(q, k.ic(4))
		col0 := k.delinearize(colBase, colDims)
		group := f.IAdd(rowGroups, q)
		elems := make([]rowElem, 4)
		for u := range int64(4) {
			col := slices.Clone(col0)
			col[last] = f.IAdd(col0[last], k.ic(u))
			colLin := f.IAdd(colBase, k.ic(u))
			lin := f.IAdd(f.IAdd(rowBase, colBase), k.ic(u))
			idx := append(slices.Clone(rowIdx), col...)
			k.linear[fmt.Sprint(idx, dims)] = lin
			k.linear[fmt.Sprint(col, colDims)] = colLin
			k.lanes[lin] = lane{group: group, u: uint32(u)}
			k.lanes[colLin] = lane{group: q, u: uint32(u)}
			elems[u] = rowElem{idx: idx, lin: lin, group: group}
		}
		body(elems)
	})
}
