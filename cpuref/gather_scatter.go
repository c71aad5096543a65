package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// indexReader reads start-index vectors out of gather's start_indices or scatter's
// scatter_indices. The index array's dimensions other than index_vector_dim are the
// batch (scatter) dimensions; index_vector_dim equal to the rank means each index
// vector is a single scalar (an implicit trailing dimension of size 1).
type indexReader struct {
	indices   *hlo.Literal
	strides   []int64
	vectorDim int64
}

func newIndexReader(indices *hlo.Literal, vectorDim int64) (*indexReader, error) {
	if err := requireInts("indices", indices); err != nil {
		return nil, err
	}
	if vectorDim < 0 || int(vectorDim) > indices.Shape().Rank() {
		return nil, fmt.Errorf("index_vector_dim %d out of range for indices %v", vectorDim, indices.Shape())
	}
	return &indexReader{indices: indices, strides: indices.Shape().Strides(), vectorDim: vectorDim}, nil
}

// batchDims are the index array's dimensions without index_vector_dim, in order.
func (r *indexReader) batchDims() []int64 {
	return pick(r.indices.Shape().Dims, hlo.Complement(r.indices.Shape().Rank(), []int64{r.vectorDim}))
}

// vectorLen is the number of components of each index vector.
func (r *indexReader) vectorLen() int64 {
	if int(r.vectorDim) == r.indices.Shape().Rank() {
		return 1
	}
	return r.indices.Shape().Dims[r.vectorDim]
}

// component reads component k of the index vector at batch position batch. It
// is called from several goroutines at once (gatherInto fills ranges of a
// gather's result on every core), so it keeps no scratch index of its own: it
// sums the position directly. (A scratch index shared by the reader made the
// gather read other rows now and then.)
func (r *indexReader) component(batch []int64, k int64) int64 {
	var pos int64
	j := 0
	for d, stride := range r.strides {
		if int64(d) == r.vectorDim {
			pos += k * stride
			continue
		}
		pos += batch[j] * stride
		j++
	}
	return indexValue(r.indices, pos)
}

// batchPosition is where index-array dimension d sits among the batch dimensions.
func (r *indexReader) batchPosition(d int64) int64 {
	if d > r.vectorDim {
		return d - 1
	}
	return d
}

// startIndex builds the operand start index for one batch position: components
// placed by index_map, and operand batching dimensions taken from the batch position
// of their paired index dimension.
func (r *indexReader) startIndex(batch, indexMap, opBatching, idxBatching []int64, rank int) []int64 {
	start := make([]int64, rank)
	for k, d := range indexMap {
		start[d] = r.component(batch, int64(k))
	}
	for i, d := range opBatching {
		start[d] = batch[r.batchPosition(idxBatching[i])]
	}
	return start
}

// evalGather is XLA's gather. For output index Out: the batch dimensions of Out (those
// not in offset_dims) select an index vector S; the operand start is S placed by
// start_index_map (plus the operand batching dimensions), each component clamped so
// the slice of slice_sizes fits; the offset dimensions of Out then index within the
// slice over the operand dimensions that are neither collapsed nor batching.
func evalGather(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	operand, gd, sizes := ops[0], in.Attrs.Gather, in.Attrs.SliceSizes
	if gd == nil {
		return nil, fmt.Errorf("gather has no dimension numbers")
	}
	r, err := newIndexReader(ops[1], gd.IndexVectorDim)
	if err != nil {
		return nil, err
	}
	opShape, rank := operand.Shape(), operand.Shape().Rank()
	if err := checkGather(gd, r, opShape, sizes, in.Shape); err != nil {
		return nil, err
	}
	batchOut := hlo.Complement(in.Shape.Rank(), gd.OffsetDims)
	offsetOperand := hlo.Complement(rank, gd.CollapsedSliceDims, gd.OperandBatchingDims)
	opStrides := opShape.Strides()
	return gatherInto(in.Shape, operand, func(out []int64) int64 {
		start := r.startIndex(pick(out, batchOut), gd.StartIndexMap, gd.OperandBatchingDims, gd.StartIndicesBatchingDims, rank)
		for _, d := range gd.StartIndexMap {
			start[d] = clampInt64(start[d], 0, opShape.Dims[d]-sizes[d])
		}
		for k, d := range offsetOperand {
			start[d] += out[gd.OffsetDims[k]]
		}
		return linearIndex(opStrides, start)
	}), nil
}

func checkGather(gd *hlo.GatherDims, r *indexReader, opShape hlo.Shape, sizes []int64, out hlo.Shape) error {
	rank := opShape.Rank()
	if len(sizes) != rank {
		return fmt.Errorf("gather slice_sizes %v for operand %v", sizes, opShape)
	}
	for d, s := range sizes {
		if s < 0 || s > opShape.Dims[d] {
			return fmt.Errorf("gather slice size %d does not fit dimension %d of %v", s, d, opShape)
		}
	}
	if int64(len(gd.StartIndexMap)) != r.vectorLen() {
		return fmt.Errorf("gather start_index_map %v for index vectors of %d components", gd.StartIndexMap, r.vectorLen())
	}
	if len(gd.OperandBatchingDims) != len(gd.StartIndicesBatchingDims) {
		return fmt.Errorf("gather batching dimensions %v and %v differ in count", gd.OperandBatchingDims, gd.StartIndicesBatchingDims)
	}
	for _, c := range []struct {
		what string
		dims []int64
		rank int
	}{{"start_index_map", gd.StartIndexMap, rank}, {"collapsed_slice_dims", gd.CollapsedSliceDims, rank},
		{"operand_batching_dims", gd.OperandBatchingDims, rank}, {"offset_dims", gd.OffsetDims, out.Rank()},
		{"start_indices_batching_dims", gd.StartIndicesBatchingDims, r.indices.Shape().Rank()}} {
		if err := checkDimList("gather "+c.what, c.dims, c.rank); err != nil {
			return err
		}
	}
	offsetOperand := hlo.Complement(rank, gd.CollapsedSliceDims, gd.OperandBatchingDims)
	batch := r.batchDims()
	if len(offsetOperand) != len(gd.OffsetDims) || out.Rank() != len(gd.OffsetDims)+len(batch) {
		return fmt.Errorf("gather result %v does not match %d offset and %d batch dimensions", out, len(offsetOperand), len(batch))
	}
	batchOut := hlo.Complement(out.Rank(), gd.OffsetDims)
	for i, d := range batchOut {
		if out.Dims[d] != batch[i] {
			return fmt.Errorf("gather result %v: batch dimension %d has size %d, indices give %d", out, d, out.Dims[d], batch[i])
		}
	}
	for k, d := range offsetOperand {
		if out.Dims[gd.OffsetDims[k]] != sizes[d] {
			return fmt.Errorf("gather result %v: offset dimension %d has size %d, slice size is %d", out, gd.OffsetDims[k], out.Dims[gd.OffsetDims[k]], sizes[d])
		}
	}
	return nil
}

// evalScatter is XLA's scatter with N operands and N updates. The update dimensions
// not in update_window_dims are the scatter dimensions; each scatter position selects
// an index vector, placed by scatter_dims_to_operand_dims (plus the input batching
// dimensions) to give the window's start in the operand. A window that does not fit
// entirely inside the operand is skipped whole (as XLA does); otherwise, for each
// window element, out = to_apply(out_0 … out_N-1, update_0 … update_N-1). Scatter
// positions are taken in row-major order and, within one, window elements in
// row-major order, so repeated indices combine in that order.
func evalScatter(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	sd, operands, updates, r, err := scatterArgs(in, ops)
	if err != nil {
		return nil, err
	}
	n := len(operands)
	f, shapes, err := combiner(ev, in, n)
	if err != nil {
		return nil, err
	}
	s, err := newScatterPlan(sd, r, operands, updates)
	if err != nil {
		return nil, err
	}
	out := make([][]uint64, n)
	for k, op := range operands {
		out[k] = make([]uint64, op.NumElements())
		for i := range out[k] {
			out[k][i] = op.Bits(i)
		}
	}
	if err := s.run(f, out); err != nil {
		return nil, err
	}
	return literalsFromBits(in.Shape, shapes, out), nil
}

// scatterPlan is scatter's geometry, resolved once.
type scatterPlan struct {
	sd              *hlo.ScatterDims
	r               *indexReader
	updates         []*hlo.Literal
	opDims          []int64
	opStrides       []int64
	updStrides      []int64
	scatterDims     []int64 // update dimensions that select index vectors
	windowOperand   []int64 // operand dimension of each update window dimension
	windowSizes     []int64
	operandWinSizes []int64 // per operand dimension: window extent (1 if inserted/batching)
}

func newScatterPlan(sd *hlo.ScatterDims, r *indexReader, operands, updates []*hlo.Literal) (*scatterPlan, error) {
	opShape, updShape := operands[0].Shape(), updates[0].Shape()
	for k := range operands {
		if !operands[k].Shape().Equal(operands[0].Shape().WithDType(operands[k].DType())) ||
			!updates[k].Shape().SameDims(updShape) || updates[k].DType() != operands[k].DType() {
			return nil, fmt.Errorf("scatter operand %d (%v) or update %d (%v) does not match", k, operands[k].Shape(), k, updates[k].Shape())
		}
	}
	rank := opShape.Rank()
	for _, c := range []struct {
		what string
		dims []int64
		rank int
	}{{"update_window_dims", sd.UpdateWindowDims, updShape.Rank()}, {"inserted_window_dims", sd.InsertedWindowDims, rank},
		{"scatter_dims_to_operand_dims", sd.ScatterDimsToOperandDims, rank}, {"input_batching_dims", sd.InputBatchingDims, rank},
		{"scatter_indices_batching_dims", sd.ScatterIndicesBatchingDims, r.indices.Shape().Rank()}} {
		if err := checkDimList("scatter "+c.what, c.dims, c.rank); err != nil {
			return nil, err
		}
	}
	p := &scatterPlan{sd: sd, r: r, updates: updates, opDims: opShape.Dims, opStrides: opShape.Strides(),
		updStrides: updShape.Strides(), scatterDims: hlo.Complement(updShape.Rank(), sd.UpdateWindowDims),
		windowOperand: hlo.Complement(rank, sd.InsertedWindowDims, sd.InputBatchingDims),
		windowSizes:   pick(updShape.Dims, sd.UpdateWindowDims)}
	return p, p.check()
}

func (p *scatterPlan) check() error {
	sd := p.sd
	if len(p.windowOperand) != len(sd.UpdateWindowDims) {
		return fmt.Errorf("scatter: %d update window dimensions for %d operand window dimensions", len(sd.UpdateWindowDims), len(p.windowOperand))
	}
	if int64(len(sd.ScatterDimsToOperandDims)) != p.r.vectorLen() || len(sd.InputBatchingDims) != len(sd.ScatterIndicesBatchingDims) {
		return fmt.Errorf("scatter: index vectors of %d components for scatter_dims_to_operand_dims %v", p.r.vectorLen(), sd.ScatterDimsToOperandDims)
	}
	batch := p.r.batchDims()
	if len(batch) != len(p.scatterDims) {
		return fmt.Errorf("scatter: %d update scatter dimensions for %d index batch dimensions", len(p.scatterDims), len(batch))
	}
	updDims := p.updates[0].Shape().Dims
	for i, d := range p.scatterDims {
		if updDims[d] != batch[i] {
			return fmt.Errorf("scatter: update dimension %d has size %d, indices give %d", d, updDims[d], batch[i])
		}
	}
	p.operandWinSizes = make([]int64, len(p.opDims))
	for d := range p.operandWinSizes {
		p.operandWinSizes[d] = 1
	}
	for k, d := range p.windowOperand {
		if p.windowSizes[k] > p.opDims[d] {
			return fmt.Errorf("scatter: update window dimension %d (size %d) exceeds operand dimension %d (size %d)", k, p.windowSizes[k], d, p.opDims[d])
		}
		p.operandWinSizes[d] = p.windowSizes[k]
	}
	return nil
}

// run applies every update to out (the operands' element bits, updated in place).
func (p *scatterPlan) run(f *scalarFn, out [][]uint64) error {
	n := len(out)
	args, res := make([]uint64, 2*n), make([]uint64, n)
	return p.forEachUpdate(func(o, u int64) error {
		for k := range out {
			args[k], args[n+k] = out[k][o], p.updates[k].Bits(int(u))
		}
		if err := f.call(args, res); err != nil {
			return err
		}
		for k := range out {
			out[k][o] = res[k]
		}
		return nil
	})
}

// forEachUpdate calls visit(operand position, update position) for every update
// element whose window fits, in scatter's order (scatter positions row-major, then
// window elements row-major), so that every element type combines alike.
func (p *scatterPlan) forEachUpdate(visit func(o, u int64) error) error {
	updIdx := make([]int64, len(p.updStrides))
	return forEachIndexErr(pick(p.updates[0].Shape().Dims, p.scatterDims), func(batch []int64) error {
		sd := p.sd
		start := p.r.startIndex(batch, sd.ScatterDimsToOperandDims, sd.InputBatchingDims, sd.ScatterIndicesBatchingDims, len(p.opDims))
		for d, s := range start {
			if s < 0 || s+p.operandWinSizes[d] > p.opDims[d] {
				return nil // the window does not fit: skipped whole
			}
		}
		for j, d := range p.scatterDims {
			updIdx[d] = batch[j]
		}
		return forEachIndexErr(p.windowSizes, func(w []int64) error {
			o := linearIndex(p.opStrides, start)
			for k, d := range p.windowOperand {
				o += w[k] * p.opStrides[d]
				updIdx[sd.UpdateWindowDims[k]] = w[k]
			}
			return visit(o, linearIndex(p.updStrides, updIdx))
		})
	})
}

// scatterArgs splits a scatter's operands: N operands, the indices (read through
// an index reader) and N updates.
func scatterArgs(in *hlo.Instruction, ops []*hlo.Literal) (*hlo.ScatterDims, []*hlo.Literal, []*hlo.Literal, *indexReader, error) {
	sd := in.Attrs.Scatter
	if sd == nil || len(ops) < 3 || len(ops)%2 == 0 {
		return nil, nil, nil, nil, fmt.Errorf("scatter needs dimension numbers, N operands, indices and N updates")
	}
	n := len(ops) / 2
	r, err := newIndexReader(ops[n], sd.IndexVectorDim)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return sd, ops[:n], ops[n+1:], r, nil
}
