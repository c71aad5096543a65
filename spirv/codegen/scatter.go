package codegen

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Scatter runs as two dispatches: the operands are copied to the outputs (through
// the elemental emitter, so a fused operand costs nothing extra), then the updates
// are applied. How they are applied depends on what makes the result deterministic:
//
//   - a plain add, max or min of one 32-bit integer operand: one invocation per
//     update element with an atomic read-modify-write (integer add/max/min commute,
//     so any order gives cpuref's result);
//   - unique_indices: one invocation per update element, no atomics (no two update
//     elements meet);
//   - otherwise the updates are applied in cpuref's order (scatter positions in
//     row-major order, then window elements in row-major order), which matches
//     cpuref exactly, duplicates and non-commutative combiners included. When every
//     indexed operand dim is an inserted (size-1) window dim — rows of an embedding
//     table, say — an update's window offset alone fixes its position in the window
//     dims, so updates at different offsets never meet: one invocation per window
//     element then loops over the scatter positions in order. Otherwise one
//     invocation applies everything. Both loop serially over scatter positions; on a
//     target with a loop-iteration bound that bounds their number.
//
// A scatter position whose whole window does not fit in the operand is skipped
// (cpuref and XLA's evaluator; no clamping).

// scatterOperands is the number of operands (and of updates) of a scatter root,
// which Lower and Facts both check before sizing anything.
func scatterOperands(root *hlo.Instruction) (int, error) {
	n := (len(root.Operands) - 1) / 2
	if n == 0 || root.Attrs.Scatter == nil {
		return 0, fmt.Errorf("%s: scatter needs operands, indices, updates and dimension numbers", root.Name)
	}
	return n, nil
}

func (l *lowering) lowerScatter() error {
	root := l.c.Root
	n, err := scatterOperands(root)
	if err != nil {
		return err
	}
	l.p.InPlace = operandInPlace(l.c, n)
	if err := l.copyOperands("scatter_copy", root, n); err != nil {
		return err
	}
	upd := root.Operands[n+1]
	if upd.Shape.NumElements() == 0 {
		return nil
	}
	switch {
	case n == 1 && atomicCombiner(root.Called[0], root.Shape.DType) != 0:
		return l.scatterUpdates(root, n, true)
	case root.Attrs.Scatter.UniqueIndices:
		return l.scatterUpdates(root, n, false)
	}
	return l.scatterSerial(root, n, windowsDisjoint(root.Attrs.Scatter))
}

// operandInPlace marks the input of the root's operand (a scatter's or a
// dynamic-update-slice's) when the output may be written over it: the copy reads
// it only at the index it writes, and the updates read the output. The operand must
// be a parameter that nothing else in the computation reads (not the updates too,
// say), and there must be one operand: with several, the copy stores output j
// before it reads operand j+1.
func operandInPlace(c *hlo.Computation, n int) []bool {
	root := c.Root
	x := root.Operands[0]
	if n != 1 || x.Op != hlo.OpParameter || slices.Index(root.Operands[1:], x) >= 0 {
		return nil
	}
	for _, in := range c.Instructions {
		if in != root && slices.Contains(in.Operands, x) {
			return nil
		}
	}
	marks := make([]bool, len(c.Params))
	marks[x.Attrs.ParameterNumber] = true
	return marks
}

// copyOperands writes operand j of the root to output j, j < n. When the program's
// operand is marked InPlace the dispatch is marked CopiesInPlaceInput: the runtime
// skips it when the output shares the operand's buffer, and only the updates are
// written.
func (l *lowering) copyOperands(name string, root *hlo.Instruction, n int) error {
	x := root.Operands[0]
	count := x.Shape.NumElements()
	if count == 0 {
		return nil
	}
	k := l.newKernel(name, defaultLocal)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	groups := k.gridStride(count, func(i spirv.ID) {
		g.scoped(func() {
			idx := k.delinearize(i, x.Shape.Dims)
			for j := range n {
				k.store(outs[j], i, g.emit(root.Operands[j], idx), l.p.Outputs[j].DType)
			}
		})
	})
	if err := l.add(k, groups); err != nil {
		return err
	}
	l.p.Dispatches[len(l.p.Dispatches)-1].CopiesInPlaceInput = l.p.InPlace != nil
	return nil
}

// atomicCombiner returns the atomic opcode for a combiner that is a plain add, max
// or min of (current, update) on a 32-bit integer type, or 0.
func atomicCombiner(c *hlo.Computation, dt hlo.DType) spirv.Op {
	if dt != hlo.S32 && dt != hlo.U32 {
		return 0
	}
	if sub := subgroupReducer(c, []hlo.DType{dt}, Target{SubgroupArithmetic: true}); sub != nil {
		switch {
		case sub.op == hlo.OpAdd:
			return spirv.OpAtomicIAdd
		case sub.op == hlo.OpMaximum && dt == hlo.S32:
			return spirv.OpAtomicSMax
		case sub.op == hlo.OpMaximum:
			return spirv.OpAtomicUMax
		case dt == hlo.S32:
			return spirv.OpAtomicSMin
		}
		return spirv.OpAtomicUMin
	}
	return 0
}

// scatterTarget maps an update index to the operand index it updates, with the
// condition that its scatter position's whole window fits in the operand.
func (g *gen) scatterTarget(root *hlo.Instruction, n int, uidx []spirv.ID) (idx []spirv.ID, fits spirv.ID) {
	k, f := g.k, g.k.f
	sd := root.Attrs.Scatter
	x, ind, upd := root.Operands[0], root.Operands[n], root.Operands[n+1]
	var pos []spirv.ID // update indices of the scatter dims, in order
	for d := range uidx {
		if !slices.Contains(sd.UpdateWindowDims, int64(d)) {
			pos = append(pos, uidx[d])
		}
	}
	rank := x.Shape.Rank()
	start := make([]spirv.ID, rank)
	offset := make([]spirv.ID, rank)
	window := make([]int64, rank)
	for d := range rank {
		start[d], offset[d], window[d] = k.ic(0), k.ic(0), 1
	}
	j := 0
	for d := range rank {
		if slices.Contains(sd.InsertedWindowDims, int64(d)) || slices.Contains(sd.InputBatchingDims, int64(d)) {
			continue
		}
		ud := sd.UpdateWindowDims[j]
		offset[d], window[d] = uidx[ud], upd.Shape.Dims[ud]
		j++
	}
	ivd := int(sd.IndexVectorDim)
	for i, ob := range sd.InputBatchingDims {
		start[ob] = pos[batchPosition(int(sd.ScatterIndicesBatchingDims[i]), ivd)]
	}
	var conds []spirv.ID
	for c, od := range sd.ScatterDimsToOperandDims {
		v := g.indexComponent(ind, pos, ivd, c)
		st, ok := k.indexInRange(v, ind.Shape.DType, x.Shape.Dims[od]-window[od])
		start[od] = st
		conds = append(conds, ok)
	}
	idx = make([]spirv.ID, rank)
	for d := range rank {
		idx[d] = f.IAdd(start[d], offset[d])
	}
	return idx, k.all(conds...)
}

// indexInRange converts an integer register value of type dt to the index type and
// reports whether it lies in [0, hi], testing in the value's own type so that no
// value of any width wraps into range.
func (k *kernel) indexInRange(v spirv.ID, dt hlo.DType, hi int64) (spirv.ID, spirv.ID) {
	f, m := k.f, k.m
	t := m.TypeOf(v)
	ok := m.ConstBool(hi >= 0)
	if hi >= 0 {
		maxOf := uint64(1)<<(dt.Bits()-1) - 1
		if dt.IsUnsigned() {
			maxOf = maxOf<<1 | 1
		}
		if uint64(hi) < maxOf {
			ok = f.LessEqual(v, m.ConstUint(t, uint64(hi)))
		}
		if dt.IsSigned() {
			ok = f.LogicalAnd(ok, f.GreaterEqual(v, m.ConstOf(t, 0)))
		}
	}
	// In range, the value fits the index type; out of range it is not used.
	safe := f.Select(ok, v, m.ConstOf(t, 0))
	return k.toIndex(safe), ok
}

// scatterUpdates applies every update element in its own invocation, atomically or
// (unique indices) with a plain read-modify-write.
func (l *lowering) scatterUpdates(root *hlo.Instruction, n int, atomic bool) error {
	upd := root.Operands[n+1]
	count := upd.Shape.NumElements()
	k := l.newKernel("scatter_update", defaultLocal)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	f := k.f
	x := root.Operands[0]
	groups := k.gridStride(count, func(i spirv.ID) {
		g.scoped(func() {
			uidx := k.delinearize(i, upd.Shape.Dims)
			idx, fits := g.scatterTarget(root, n, uidx)
			f.If(fits, func() {
				g.scoped(func() {
					at := k.linearize(idx, x.Shape.Dims)
					if atomic {
						v := g.emit(upd, uidx)
						f.AtomicElem(atomicCombiner(root.Called[0], root.Shape.DType), outs[0], at, v)
						return
					}
					l.applyUpdate(g, root, n, outs, at, uidx)
				})
			}, nil)
		})
	})
	return l.add(k, groups)
}

// applyUpdate is out[at] = to_apply(out[at]…, update[uidx]…) for every operand.
func (l *lowering) applyUpdate(g *gen, root *hlo.Instruction, n int, outs []spirv.Buffer, at spirv.ID, uidx []spirv.ID) {
	k := g.k
	args := make([]spirv.ID, 0, 2*n)
	for j := range n {
		args = append(args, k.load(outs[j], at, l.p.Outputs[j].DType))
	}
	for j := range n {
		args = append(args, g.emit(root.Operands[n+1+j], uidx))
	}
	res := g.call(root.Called[0], args)
	for j := range n {
		k.store(outs[j], at, res[j], l.p.Outputs[j].DType)
	}
}

// windowsDisjoint reports scatter dimension numbers under which updates at different
// window offsets never update the same operand element: every indexed operand dim
// is an inserted window dim, so the other dims' positions are the window offsets.
func windowsDisjoint(sd *hlo.ScatterDims) bool {
	for _, d := range sd.ScatterDimsToOperandDims {
		if !slices.Contains(sd.InsertedWindowDims, d) {
			return false
		}
	}
	return true
}

// scatterSerial applies the updates in cpuref's order: in one invocation, or, when
// byWindow, in one invocation per window element, each looping over the scatter
// positions in order.
func (l *lowering) scatterSerial(root *hlo.Instruction, n int, byWindow bool) error {
	upd := root.Operands[n+1]
	sd := root.Attrs.Scatter
	var posDims, winDims []int64
	for d, size := range upd.Shape.Dims {
		if slices.Contains(sd.UpdateWindowDims, int64(d)) {
			winDims = append(winDims, size)
		} else {
			posDims = append(posDims, size)
		}
	}
	x := root.Operands[0]
	rank := upd.Shape.Rank()
	apply := func(g *gen, outs []spirv.Buffer, win, pos []spirv.ID) {
		idx, fits := g.scatterTarget(root, n, updateIndex(rank, sd.UpdateWindowDims, win, pos))
		g.k.f.If(fits, func() {
			g.scoped(func() {
				uidx := updateIndex(rank, sd.UpdateWindowDims, win, pos)
				l.applyUpdate(g, root, n, outs, g.k.linearize(idx, x.Shape.Dims), uidx)
			})
		}, nil)
	}
	winCount, posCount := product(winDims), product(posDims)
	if byWindow && winCount > 1 {
		k := l.newKernel("scatter_window", defaultLocal)
		outs := l.bindOutputs(k)
		g := l.kernelGen(k)
		groups := k.gridStride(winCount, func(w spirv.ID) {
			g.scoped(func() {
				win := k.delinearize(w, winDims)
				g.loop(posCount, func(p spirv.ID) { apply(g, outs, win, k.delinearize(p, posDims)) })
			})
		})
		return l.add(k, groups)
	}
	k := l.newKernel("scatter_serial", 1)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	g.loop(posCount, func(p spirv.ID) {
		pos := k.delinearize(p, posDims)
		g.loop(winCount, func(w spirv.ID) { apply(g, outs, k.delinearize(w, winDims), pos) })
	})
	return l.add(k, [3]uint32{1, 1, 1})
}

// updateIndex assembles an update index from window-dim and scatter-dim parts.
func updateIndex(rank int, windowDims []int64, win, pos []spirv.ID) []spirv.ID {
	return scatterIndex(rank, windowDims, win, pos)
}

// zeros is n index-typed zeros.
func (k *kernel) zeros(n int) []spirv.ID {
	z := make([]spirv.ID, n)
	for i := range z {
		z[i] = k.ic(0)
	}
	return z
}
