package hlo

import (
	"errors"
	"fmt"
)

// Shape rules of gather and scatter, with XLA's full dimension numbers including the
// batching dims.

// indexDims are the dimension numbers gather and scatter share, with the attribute
// names each op gives them (for error messages).
type indexDims struct {
	collapsedName, operandBatchingName, indexMapName string
	collapsed, operandBatching, indexMap             []int64
	indicesBatching                                  []int64
	indicesBatchingName                              string
	indexVectorDim                                   int64
}

// checkIndexDims checks the operand-side and indices-side dimension numbers and
// returns the indices' batch dims: their dims without index_vector_dim (which may be
// rank(indices), an implicit trailing dimension of size 1).
func checkIndexDims(x, idx Shape, d indexDims) ([]int64, error) {
	if !idx.DType.IsInteger() {
		return nil, fmt.Errorf("indices %v are not integers", idx)
	}
	ivd := d.indexVectorDim
	if ivd < 0 || ivd > int64(idx.Rank()) {
		return nil, fmt.Errorf("index_vector_dim %d out of range [0, %d] for indices %v", ivd, idx.Rank(), idx)
	}
	batch, vecSize := indicesBatchDims(idx, ivd)
	if int64(len(d.indexMap)) != vecSize {
		return nil, fmt.Errorf("%s %v has %d entries, but the index vector of %v has %d",
			d.indexMapName, d.indexMap, len(d.indexMap), idx, vecSize)
	}
	if err := checkSortedDimSet(d.collapsedName, d.collapsed, x.Rank()); err != nil {
		return nil, err
	}
	if err := checkSortedDimSet(d.operandBatchingName, d.operandBatching, x.Rank()); err != nil {
		return nil, err
	}
	if err := checkDimSet(d.indexMapName, d.indexMap, x.Rank()); err != nil {
		return nil, err
	}
	for _, b := range d.operandBatching {
		if containsDim(d.collapsed, b) || containsDim(d.indexMap, b) {
			return nil, fmt.Errorf("%s %v overlap %s %v or %s %v", d.operandBatchingName, d.operandBatching,
				d.collapsedName, d.collapsed, d.indexMapName, d.indexMap)
		}
	}
	return batch, checkIndicesBatching(x, idx, d)
}

// indicesBatchDims returns the dims of idx other than index_vector_dim and the index
// vector's size.
func indicesBatchDims(idx Shape, ivd int64) ([]int64, int64) {
	if ivd == int64(idx.Rank()) {
		return append([]int64{}, idx.Dims...), 1
	}
	batch := append(append([]int64{}, idx.Dims[:ivd]...), idx.Dims[ivd+1:]...)
	return batch, idx.Dims[ivd]
}

// checkIndicesBatching pairs the indices' batching dims with the operand's: as many,
// not index_vector_dim, of equal sizes.
func checkIndicesBatching(x, idx Shape, d indexDims) error {
	if err := checkDimSet(d.indicesBatchingName, d.indicesBatching, idx.Rank()); err != nil {
		return err
	}
	if len(d.indicesBatching) != len(d.operandBatching) {
		return fmt.Errorf("%s %v and %s %v differ in length", d.indicesBatchingName, d.indicesBatching,
			d.operandBatchingName, d.operandBatching)
	}
	for i, ib := range d.indicesBatching {
		if ib == d.indexVectorDim {
			return fmt.Errorf("%s %v include index_vector_dim %d", d.indicesBatchingName, d.indicesBatching, ib)
		}
		if ob := d.operandBatching[i]; idx.Dims[ib] != x.Dims[ob] {
			return fmt.Errorf("indices %v batching dimension %d (size %d) and operand %v batching dimension %d (size %d) differ",
				idx, ib, idx.Dims[ib], x, ob, x.Dims[ob])
		}
	}
	return nil
}

// windowOperandDims lists the operand dims that are neither collapsed (inserted) nor
// batching: the ones a gather slice or scatter window spans in the result/update.
func windowOperandDims(rank int, collapsed, batching []int64) []int64 {
	var dims []int64
	for d := int64(0); d < int64(rank); d++ {
		if !containsDim(collapsed, d) && !containsDim(batching, d) {
			dims = append(dims, d)
		}
	}
	return dims
}

func inferGather(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, idx, g := a.operands[0], a.operands[1], a.attrs.Gather
	if g == nil {
		return Shape{}, errors.New("has no gather dimension numbers")
	}
	batch, err := checkIndexDims(x, idx, indexDims{
		collapsedName: "collapsed_slice_dims", collapsed: g.CollapsedSliceDims,
		operandBatchingName: "operand_batching_dims", operandBatching: g.OperandBatchingDims,
		indexMapName: "start_index_map", indexMap: g.StartIndexMap,
		indicesBatchingName: "start_indices_batching_dims", indicesBatching: g.StartIndicesBatchingDims,
		indexVectorDim: g.IndexVectorDim,
	})
	if err != nil {
		return Shape{}, err
	}
	sizes := a.attrs.SliceSizes
	if err := checkGatherSliceSizes(x, sizes, g); err != nil {
		return Shape{}, err
	}
	window := windowOperandDims(x.Rank(), g.CollapsedSliceDims, g.OperandBatchingDims)
	if len(g.OffsetDims) != len(window) {
		return Shape{}, fmt.Errorf("offset_dims %v must name one result dimension per operand dimension %v that is neither collapsed nor batching",
			g.OffsetDims, window)
	}
	outRank := len(g.OffsetDims) + len(batch)
	if err := checkSortedDimSet("offset_dims", g.OffsetDims, outRank); err != nil {
		return Shape{}, err
	}
	out := make([]int64, 0, outRank)
	for i := int64(0); i < int64(outRank); i++ {
		if containsDim(g.OffsetDims, i) {
			out = append(out, sizes[window[0]])
			window = window[1:]
		} else {
			out = append(out, batch[0])
			batch = batch[1:]
		}
	}
	return MakeShape(x.DType, out...), nil
}

// checkGatherSliceSizes: one size per operand dimension within its bound, and at
// most 1 in collapsed and batching dims.
func checkGatherSliceSizes(x Shape, sizes []int64, g *GatherDims) error {
	if len(sizes) != x.Rank() {
		return fmt.Errorf("slice_sizes %v have %d entries for operand %v", sizes, len(sizes), x)
	}
	for i, s := range sizes {
		if s < 0 || s > x.Dims[i] {
			return fmt.Errorf("slice size %d out of range for dimension %d of operand %v", s, i, x)
		}
		if s > 1 && (containsDim(g.CollapsedSliceDims, int64(i)) || containsDim(g.OperandBatchingDims, int64(i))) {
			return fmt.Errorf("collapsed or batching dimension %d has slice size %d, want at most 1", i, s)
		}
	}
	return nil
}

// inferScatter: operands…, scatter_indices, updates…, with N operands of one dims and
// N updates of one dims; to_apply combines (current, update) scalars of the operand
// types. The result is the operand shape, or a tuple of them when N > 1.
func inferScatter(a *shapeArgs) (Shape, error) {
	n := (len(a.operands) - 1) / 2
	if n < 1 || len(a.operands) != 2*n+1 {
		return Shape{}, fmt.Errorf("takes N operands, indices and N updates; got %d operands", len(a.operands))
	}
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	sd := a.attrs.Scatter
	if sd == nil {
		return Shape{}, errors.New("has no scatter dimension numbers")
	}
	xs, idx, us := a.operands[:n], a.operands[n], a.operands[n+1:]
	if err := checkScatterOperands(xs, us); err != nil {
		return Shape{}, err
	}
	batch, err := checkIndexDims(xs[0], idx, indexDims{
		collapsedName: "inserted_window_dims", collapsed: sd.InsertedWindowDims,
		operandBatchingName: "input_batching_dims", operandBatching: sd.InputBatchingDims,
		indexMapName: "scatter_dims_to_operand_dims", indexMap: sd.ScatterDimsToOperandDims,
		indicesBatchingName: "scatter_indices_batching_dims", indicesBatching: sd.ScatterIndicesBatchingDims,
		indexVectorDim: sd.IndexVectorDim,
	})
	if err != nil {
		return Shape{}, err
	}
	if err := checkScatterUpdates(xs[0], us[0], sd, batch); err != nil {
		return Shape{}, err
	}
	types := make([]DType, n)
	for i, x := range xs {
		types[i] = x.DType
	}
	if err := checkReducer("to_apply", a.called[0], types); err != nil {
		return Shape{}, err
	}
	return resultOf(xs), nil
}

// checkScatterOperands: the operands share dims, the updates share dims, and each
// update has its operand's element type.
func checkScatterOperands(xs, us []Shape) error {
	for i := range xs {
		if !xs[i].SameDims(xs[0]) || !us[i].SameDims(us[0]) {
			return fmt.Errorf("operands %v and updates %v must each have one dims", xs, us)
		}
		if us[i].DType != xs[i].DType {
			return fmt.Errorf("update %v and operand %v differ in element type", us[i], xs[i])
		}
	}
	return nil
}

// checkScatterUpdates: the update's window dims are bounded by the operand's window
// dims, and its other dims are the indices' batch dims.
func checkScatterUpdates(x, u Shape, sd *ScatterDims, batch []int64) error {
	window := windowOperandDims(x.Rank(), sd.InsertedWindowDims, sd.InputBatchingDims)
	if len(sd.UpdateWindowDims) != len(window) {
		return fmt.Errorf("update_window_dims %v must name one update dimension per operand dimension %v that is neither inserted nor batching",
			sd.UpdateWindowDims, window)
	}
	if want := len(window) + len(batch); u.Rank() != want {
		return fmt.Errorf("updates %v must have rank %d", u, want)
	}
	if err := checkSortedDimSet("update_window_dims", sd.UpdateWindowDims, u.Rank()); err != nil {
		return err
	}
	for i := int64(0); i < int64(u.Rank()); i++ {
		if containsDim(sd.UpdateWindowDims, i) {
			if u.Dims[i] > x.Dims[window[0]] {
				return fmt.Errorf("updates %v window dimension %d exceeds operand %v dimension %d", u, i, x, window[0])
			}
			window = window[1:]
			continue
		}
		if u.Dims[i] != batch[0] {
			return fmt.Errorf("updates %v scatter dimension %d has size %d, but the indices give %d", u, i, u.Dims[i], batch[0])
		}
		batch = batch[1:]
	}
	return nil
}

// resultOf is the result of a variadic op: the one shape, or a tuple of them.
func resultOf(shapes []Shape) Shape {
	if len(shapes) == 1 {
		return shapes[0].Clone()
	}
	return MakeTuple(shapes...).Clone()
}
