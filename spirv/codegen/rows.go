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
	outs := &rowBufs{k: k, bufs: l.bindOutputs(k), shapes: l.p.Outputs, vec: make([]spirv.Buffer, len(l.p.Outputs))}
	g := l.kernelGen(k)
	l.p.InPlace = inPlaceInputs(l.c, len(rp.rowDims))
	keeps := planKeeps(l.c, rp, l.p.Outputs, l.p.InPlace)
	var team rowTeam
	row := func(r spirv.ID) {
		g.scoped(func() {
			rowIdx := k.delinearize(r, rp.rowDims)
			var kept []keptValue // what this row's earlier sweeps stored
			for _, red := range rp.reduces {
				keep, keeping := keeps[red]
				sw := rowSweep{team: team, r: r, rowIdx: rowIdx, outs: outs, kept: kept}
				g.define(red, rowIdx, l.rowFold(g, sw, red, keep, keeping))
				if keeping {
					kept = append(kept, keptValue{value: red.Operands[0], out: keep})
				}
			}
			l.rowOutputs(g, rowSweep{team: team, r: r, rowIdx: rowIdx, outs: outs, kept: kept}, rp.colDims)
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

// rowSweep is one sweep of a row: who sweeps it, which row (linear r, multi-index
// rowIdx), and the values earlier sweeps of the row kept in the output buffers.
type rowSweep struct {
	team   rowTeam
	r      spirv.ID
	rowIdx []spirv.ID
	outs   *rowBufs
	kept   []keptValue
}

// rowFold folds the row of reduction red. A team of one folds in row-major order
// from the init value, as emitReduce does; a subgroup's lanes fold their elements
// from the reducer's identity, the subgroup combines them, and the init value is
// applied once, first. When keeping, the sweep also stores each element of red's
// operand in output keep's buffer, for the later sweeps to read back.
func (l *lowering) rowFold(g *gen, sw rowSweep, red *hlo.Instruction, keep int, keeping bool) []spirv.ID {
	k, f := g.k, g.k.f
	team, r, rowIdx := sw.team, sw.r, sw.rowIdx
	x, init, dt := red.Operands[0], red.Operands[1], red.Shape.DType
	op := team.ops[red]
	start := g.emit(init, scalarIndex)
	if op != nil {
		start = op.identity(k, dt)
	}
	acc := k.variable(k.regType(dt), start, "acc")
	colDims := x.Shape.Dims[len(rowIdx):]
	sweepRow(g, team, r, rowIdx, x.Shape.Dims, colDims, func(elems []rowElem) {
		sw.outs.defineKept(g, sw.kept, x.Shape.Dims, elems)
		vals := make([]spirv.ID, len(elems))
		for i, e := range elems {
			vals[i] = g.emit(x, e.idx)
			f.Store(acc, g.call(red.Called[0], []spirv.ID{f.Load(acc), vals[i]})[0])
		}
		if keeping {
			sw.outs.store(keep, elems, vals)
		}
	})
	v := f.Load(acc)
	if op == nil {
		return []spirv.ID{v}
	}
	return g.call(red.Called[0], []spirv.ID{g.emit(init, scalarIndex), op.combine(k, v)})
}

// rowOutputs computes and stores the output elements of the row, every output's
// (a multi-output root's outputs share their dims) in one sweep, reading the kept
// values back from the buffers it then overwrites: every element's values are
// computed before any is stored.
func (l *lowering) rowOutputs(g *gen, sw rowSweep, colDims []int64) {
	dims := l.p.Outputs[0].Dims
	sweepRow(g, sw.team, sw.r, sw.rowIdx, dims, colDims, func(elems []rowElem) {
		sw.outs.defineKept(g, sw.kept, dims, elems)
		vals := make([][]spirv.ID, len(l.p.Outputs)) // per output, per element
		for j := range vals {
			vals[j] = make([]spirv.ID, len(elems))
		}
		for i, e := range elems {
			for j, v := range g.emitN(l.c.Root, e.idx) {
				vals[j][i] = v
			}
		}
		for j := range l.p.Outputs {
			sw.outs.store(j, elems, vals[j])
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

// Kept values. Each sweep of a row re-emits what its expressions read, so a value
// that a reduction folds and a later sweep reads again (softmax's exp(x − max):
// summed by the second sweep, divided by the sum in the third) would be computed
// once per sweep. Where that value computes an expensive op per element (the op
// table's Expensive column), the sweep that folds it also stores it in an output
// buffer of its dims and type, and the later sweeps load it back instead; the
// output sweep overwrites the buffer last. Each lane reads back only the elements
// it stored itself (every sweep of a row splits it among the team's lanes alike),
// and the buffer holds the value's own type, so the results are unchanged.

// keptValue is a reduction's operand that its sweep stored in output out's buffer.
type keptValue struct {
	value *hlo.Instruction
	out   int
}

// planKeeps picks, per reduction, the output (if any) whose buffer keeps its operand
// for later sweeps: an operand that computes an expensive op per element, that a
// later sweep reads at the same element, and that has the dims and type of an output
// not already keeping another value. An input that may share its buffer with an
// output (inPlace) must not be read by a later sweep other than through the kept
// values: the early store would overwrite elements before that read.
func planKeeps(c *hlo.Computation, rp rowPlan, outs []hlo.Shape, inPlace []bool) map[*hlo.Instruction]int {
	keeps := map[*hlo.Instruction]int{}
	used := make([]bool, len(outs))
	stops := map[*hlo.Instruction]bool{} // where a sweep's reads end: registers and kept values
	for _, red := range rp.reduces {
		stops[red] = true
	}
	for i, red := range rp.reduces {
		v := red.Operands[0]
		later := []*hlo.Instruction{c.Root}
		for _, r := range rp.reduces[i+1:] {
			later = append(later, r.Operands[0])
		}
		j := freeOutput(outs, used, v.Shape)
		if j < 0 || !expensivePerElement(v, stops, len(rp.rowDims)) || !readAtSameElement(later, v) {
			continue
		}
		stops[v] = true
		if readsInPlaceInput(later, stops, inPlace) {
			delete(stops, v)
			continue
		}
		keeps[red], used[j] = j, true
	}
	return keeps
}

// freeOutput is the first output of shape s not keeping a value yet, or -1.
func freeOutput(outs []hlo.Shape, used []bool, s hlo.Shape) int {
	for j, o := range outs {
		if !used[j] && o.Equal(s) {
			return j
		}
	}
	return -1
}

// expensivePerElement reports whether emitting an element of v computes an
// expensive op: one reached from v before the stops (values in registers) and the
// broadcasts of per-row values along the row (computed once per row).
func expensivePerElement(v *hlo.Instruction, stops map[*hlo.Instruction]bool, rows int) bool {
	found := false
	walkOperands([]*hlo.Instruction{v}, func(in *hlo.Instruction) bool {
		if stops[in] || isRowBroadcast(in, rows) {
			return false
		}
		found = found || in.Info().Expensive
		return !found
	})
	return found
}

// readAtSameElement reports whether a sweep emitting the roots reads v at the
// element it sweeps (through elementwise ops of one dims, and a tuple root's
// elements), where it finds the value kept at that element.
func readAtSameElement(roots []*hlo.Instruction, v *hlo.Instruction) bool {
	found := false
	walkOperands(roots, func(in *hlo.Instruction) bool {
		found = found || in == v
		if found || in.Op == hlo.OpTuple {
			return !found
		}
		return isElementwise(in) && slices.IndexFunc(in.Operands, func(x *hlo.Instruction) bool { return !x.Shape.SameDims(in.Shape) }) < 0
	})
	return found
}

// readsInPlaceInput reports whether emitting the roots reads, before the stops, an
// input that may share its buffer with an output.
func readsInPlaceInput(roots []*hlo.Instruction, stops map[*hlo.Instruction]bool, inPlace []bool) bool {
	found := false
	walkOperands(roots, func(in *hlo.Instruction) bool {
		if stops[in] {
			return false
		}
		if n := int(in.Attrs.ParameterNumber); in.Op == hlo.OpParameter && n >= 0 && n < len(inPlace) && inPlace[n] {
			found = true
		}
		return !found
	})
	return found
}

// walkOperands visits the roots and, depth first, the operands of every visited
// instruction for which visit returns true, each instruction once.
func walkOperands(roots []*hlo.Instruction, visit func(*hlo.Instruction) bool) {
	seen := map[*hlo.Instruction]bool{}
	var walk func(in *hlo.Instruction)
	walk = func(in *hlo.Instruction) {
		if seen[in] {
			return
		}
		seen[in] = true
		if visit(in) {
			for _, x := range in.Operands {
				walk(x)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
}

// rowBufs are a row kernel's output buffers, with vec4 views made on first use
// (through the buffer itself, so split and addressed outputs have them too).
type rowBufs struct {
	k      *kernel
	bufs   []spirv.Buffer
	shapes []hlo.Shape
	vec    []spirv.Buffer
}

// vectorized reports whether output j's elems are written and read as one vec4.
func (o *rowBufs) vectorized(j int, elems []rowElem) bool {
	if len(elems) < 4 || !is32(o.shapes[j].DType) {
		return false
	}
	if o.vec[j].Var == 0 {
		o.vec[j] = o.k.f.View(o.bufs[j], fmt.Sprintf("out%d_vec4", j), o.k.vec4Type(o.shapes[j].DType))
	}
	return true
}

// store writes vals, one per element of elems, to output j.
func (o *rowBufs) store(j int, elems []rowElem, vals []spirv.ID) {
	k, dt := o.k, o.shapes[j].DType
	if !o.vectorized(j, elems) {
		for i, e := range elems {
			k.store(o.bufs[j], e.lin, vals[i], dt)
		}
		return
	}
	group := make([]spirv.ID, len(elems))
	for i, v := range vals {
		group[i] = k.toStore(v, dt)
	}
	k.f.StoreElem(o.vec[j], elems[0].group, k.f.CompositeConstruct(k.vec4Type(dt), group...))
}

// defineKept hands a sweep of an array of dims the kept values of that dims at its
// elems, loaded from their outputs' buffers, in place of recomputing them.
func (o *rowBufs) defineKept(g *gen, kept []keptValue, dims []int64, elems []rowElem) {
	k := o.k
	for _, kv := range kept {
		if !slices.Equal(kv.value.Shape.Dims, dims) {
			continue
		}
		j, dt := kv.out, kv.value.Shape.DType
		var vec spirv.ID
		if o.vectorized(j, elems) {
			vec = k.f.LoadElem(o.vec[j], elems[0].group)
		}
		for u, e := range elems {
			var v spirv.ID
			if vec != 0 {
				v = k.f.CompositeExtract(vec, uint32(u))
			} else {
				v = k.f.LoadElem(o.bufs[j], e.lin)
			}
			g.define(kv.value, e.idx, []spirv.ID{k.fromStore(v, dt)})
		}
	}
}
