package codegen

import (
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// emitGather follows XLA's gather: the output dims that are not offset_dims index
// the start indices (the batch); the start vector, read along index_vector_dim and
// clamped so the slice stays inside the operand, gives the operand start in the
// start_index_map dims; operand batching dims take the batch index of their paired
// indices dim; the offset_dims give the position inside the slice in the remaining
// operand dims.
func emitGather(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f := g.k, g.k.f
	x, ind := in.Operands[0], in.Operands[1]
	gd := in.Attrs.Gather
	if gd == nil {
		g.fail(in, "no gather dimension numbers")
		return 0
	}
	var batch []spirv.ID // output indices of the batch dims, in order
	for d := range idx {
		if !slices.Contains(gd.OffsetDims, int64(d)) {
			batch = append(batch, idx[d])
		}
	}
	src := make([]spirv.ID, x.Shape.Rank())
	for d := range src {
		src[d] = k.ic(0)
	}
	// Offsets in the window dims.
	j := 0
	for d := range src {
		if slices.Contains(gd.CollapsedSliceDims, int64(d)) || slices.Contains(gd.OperandBatchingDims, int64(d)) {
			continue
		}
		src[d] = idx[gd.OffsetDims[j]]
		j++
	}
	ivd := int(gd.IndexVectorDim)
	for i, ob := range gd.OperandBatchingDims {
		src[ob] = batch[batchPosition(int(gd.StartIndicesBatchingDims[i]), ivd)]
	}
	for c, od := range gd.StartIndexMap {
		start := g.indexComponent(ind, batch, ivd, c)
		start = k.clampToIndex(start, ind.Shape.DType, x.Shape.Dims[od]-in.Attrs.SliceSizes[od])
		src[od] = f.IAdd(src[od], start)
	}
	return g.emit(x, src)
}

// batchPosition is the position of indices dim d among the indices dims without
// the index vector dim.
func batchPosition(d, ivd int) int {
	if d > ivd {
		return d - 1
	}
	return d
}

// indexComponent reads component c of the index vector at batch position batch:
// the indices element whose dims are batch with c inserted at index_vector_dim (or
// batch alone when index_vector_dim is the implicit trailing dim).
func (g *gen) indexComponent(ind *hlo.Instruction, batch []spirv.ID, ivd, c int) spirv.ID {
	if ivd == ind.Shape.Rank() {
		return g.emit(ind, batch)
	}
	at := append(append(append([]spirv.ID{}, batch[:ivd]...), g.k.ic(int64(c))), batch[ivd:]...)
	return g.emit(ind, at)
}
