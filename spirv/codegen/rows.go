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
// every element of its row; a row kernel instead gives each invocation whole rows:
// it folds every reduction of the row once (in cpuref's order, so results are
// exact), keeps the results in registers, and then computes the row's outputs,
// whose reads of the reductions hit the emitter's cache. The row's elements are
// swept four at a time when the row length allows, so inputs of 32-bit types are
// read as vec4 loads, like the streaming kernels'.

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
	root := c.Root
	if !root.Shape.IsArray() || root.Op == hlo.OpReduce {
		return rp, false
	}
	for _, in := range c.Instructions {
		if in.Op != hlo.OpReduce {
			continue
		}
		dims, ok := rowReduceDims(in)
		if !ok || (rp.reduces != nil && !slices.Equal(dims, rp.rowDims)) {
			return rp, false
		}
		rp.rowDims = dims
		rp.reduces = append(rp.reduces, in)
	}
	out := root.Shape.Dims
	if rp.reduces == nil || len(out) < len(rp.rowDims) || !slices.Equal(out[:len(rp.rowDims)], rp.rowDims) {
		return rp, false
	}
	rp.colDims = out[len(rp.rowDims):]
	return rp, true
}

// rowReduceDims returns the result dims of a reduction of one input over its minor
// dims (a row reduction), and whether it is one.
func rowReduceDims(in *hlo.Instruction) ([]int64, bool) {
	if len(in.Operands) != 2 || !in.Shape.IsArray() {
		return nil, false
	}
	x := in.Operands[0].Shape
	dims := sortedDims(in.Attrs.Dimensions)
	keep := x.Rank() - len(dims)
	for i, d := range dims {
		if d != int64(keep+i) {
			return nil, false
		}
	}
	return x.Dims[:keep], true
}

// lowerRows emits the row kernel: a grid-stride loop over rows, each folding the
// row's reductions and then sweeping its output elements.
func (l *lowering) lowerRows(rp rowPlan) error {
	rows, cols := product(rp.rowDims), product(rp.colDims)
	if rows == 0 || cols == 0 {
		return nil // nothing to compute
	}
	k := l.newKernel("", defaultLocal)
	outs := l.bindOutputs(k)
	g := l.kernelGen(k)
	out := l.p.Outputs[0]
	l.p.InPlace = inPlaceInputs(l.c, len(rp.rowDims))
	groups := k.gridStride(rows, func(r spirv.ID) {
		g.scoped(func() {
			rowIdx := k.delinearize(r, rp.rowDims)
			for _, red := range rp.reduces {
				g.define(red, rowIdx, l.rowFold(g, red, r, rowIdx))
			}
			l.rowOutputs(g, outs[0], out, r, rowIdx, rp.colDims)
		})
	})
	return l.add(k, groups)
}

// rowFold folds the row rowIdx (linear r) of reduction red, in row-major order
// starting from the init value, as emitReduce does.
func (l *lowering) rowFold(g *gen, red *hlo.Instruction, r spirv.ID, rowIdx []spirv.ID) []spirv.ID {
	k, f := g.k, g.k.f
	x, init := red.Operands[0], red.Operands[1]
	acc := k.variable(k.regType(init.Shape.DType), g.emit(init, scalarIndex), "acc")
	colDims := x.Shape.Dims[len(rowIdx):]
	sweepRow(g, r, rowIdx, x.Shape.Dims, colDims, func(elems []rowElem) {
		for _, e := range elems {
			v := g.emit(x, e.idx)
			f.Store(acc, g.call(red.Called[0], []spirv.ID{f.Load(acc), v})[0])
		}
	})
	return []spirv.ID{f.Load(acc)}
}

// rowOutputs computes and stores the output elements of row r.
func (l *lowering) rowOutputs(g *gen, buf spirv.Buffer, out hlo.Shape, r spirv.ID, rowIdx []spirv.ID, colDims []int64) {
	k, f := g.k, g.k.f
	var vecBuf spirv.Buffer
	sweepRow(g, r, rowIdx, out.Dims, colDims, func(elems []rowElem) {
		vals := make([]spirv.ID, len(elems))
		for i, e := range elems {
			vals[i] = g.emit(l.c.Root, e.idx)
		}
		if len(elems) < 4 || !is32(out.DType) {
			for i, e := range elems {
				k.store(buf, e.lin, vals[i], out.DType)
			}
			return
		}
		if vecBuf.Var == 0 {
			b := len(l.p.Inputs)
			vecBuf = k.m.StorageBuffer("out0_vec4", 0, uint32(b), k.vec4Type(out.DType), 0)
		}
		for i, v := range vals {
			vals[i] = k.toStore(v, out.DType)
		}
		f.StoreElem(vecBuf, elems[0].group, f.CompositeConstruct(k.vec4Type(out.DType), vals...))
	})
}

// rowElem is one element of a row sweep: its multi-index in the swept array, its
// linear index there, and (in groups of four) the vec4 group holding it.
type rowElem struct {
	idx        []spirv.ID
	lin, group spirv.ID
}

// sweepRow calls body for the elements of row r (multi-index rowIdx ++ column
// index) of an array of dims, in row-major order: four consecutive elements per
// call when the minor dim is a multiple of 4, with their linear indices registered
// as lanes of a vec4 group, so that inputs read at them (of the swept dims, or of
// the column dims alone, as a broadcast row of weights) become vec4 loads.
func sweepRow(g *gen, r spirv.ID, rowIdx []spirv.ID, dims, colDims []int64, body func([]rowElem)) {
	k, f := g.k, g.k.f
	cols := product(colDims)
	rowBase := f.IMul(r, k.ic(cols))
	if len(colDims) == 0 || colDims[len(colDims)-1]%4 != 0 {
		g.loop(cols, func(j spirv.ID) {
			idx := append(slices.Clone(rowIdx), k.delinearize(j, colDims)...)
			lin := f.IAdd(rowBase, j)
			k.linear[fmt.Sprint(idx, dims)] = lin
			body([]rowElem{{idx: idx, lin: lin}})
		})
		return
	}
	last := len(colDims) - 1
	rowGroups := f.IMul(r, k.ic(cols/4))
	g.loop(cols/4, func(q spirv.ID) {
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
