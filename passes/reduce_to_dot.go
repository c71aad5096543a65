package passes

import (
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// ReduceToDot rewrites a sum of products of two broadcasts,
//
//	reduce(multiply(broadcast(a), broadcast(b)), +0), dimensions=R, to_apply=add
//
// as the dot it is: a result dimension of the product that both broadcasts fill
// is a batch dimension if kept and a contracting one if reduced, one that only a
// (only b) fills is a free dimension of the lhs (rhs); a transpose puts the dot's
// dimensions (batch, lhs free, rhs free) back in the reduce's order where they
// differ. It is how GoMLX writes the gradient of DotGeneral (xᵀ·g as
// reduce(x·g) over the batch), and a GEMM reads a and b where the reduce kernel
// reads the whole broadcast product (on the MLP's first layer, a 256×32×256
// product for a 32×256 result). Only f32 and f64, whose dot adds the same rounded
// products one at a time as the reduce (the order within the sum may differ on the
// device, as any reduction's does); a product dimension that only one broadcast
// fills and that is reduced, or that neither fills, is left alone (it would need a
// reduce or broadcast of its own), and so is a product no larger than one of its
// sources (see outerProduct).
func ReduceToDot(m *hlo.Module, _ Config) (bool, error) {
	names := moduleNames(m)
	return anyComputation(m, func(c *hlo.Computation) bool {
		changed, _ := replaceInOrder(c, func(in *hlo.Instruction) ([]*hlo.Instruction, *hlo.Instruction, error) {
			insert := productDot(in, names)
			if insert == nil {
				return nil, nil, nil
			}
			return insert, insert[len(insert)-1], nil
		})
		return changed
	}), nil
}

// productDot returns the dot (and the transpose after it, if any) that replaces
// reduce in, or nil.
func productDot(in *hlo.Instruction, names *nameSet) []*hlo.Instruction {
	if in.Op != hlo.OpReduce || len(in.Operands) != 2 || !isAddReducer(in) || !isPositiveZero(in.Operands[1]) {
		return nil
	}
	p := in.Operands[0]
	if dt := p.Shape.DType; p.Op != hlo.OpMultiply || (dt != hlo.F32 && dt != hlo.F64) || len(in.Attrs.Dimensions) == 0 {
		return nil
	}
	a, aDims := broadcastSource(p.Operands[0])
	b, bDims := broadcastSource(p.Operands[1])
	if !outerProduct(p, a, b) {
		return nil
	}
	dims, ok := classifyProduct(p.Shape.Rank(), aDims, bDims, in.Attrs.Dimensions)
	if !ok {
		return nil
	}
	dot := &hlo.Instruction{Name: names.fresh(in.Name + ".dot"), Op: hlo.OpDot, Operands: []*hlo.Instruction{a, b},
		Shape: hlo.MakeShape(p.Shape.DType, sizesOf(p.Shape.Dims, dims.order)...)}
	dot.Attrs.Dot = &dims.dot
	kept := hlo.Complement(p.Shape.Rank(), in.Attrs.Dimensions)
	if slices.Equal(dims.order, kept) {
		return []*hlo.Instruction{dot}
	}
	perm := make([]int64, len(kept))
	for j, d := range kept {
		perm[j] = int64(slices.Index(dims.order, d))
	}
	t := &hlo.Instruction{Name: names.fresh(in.Name + ".transpose"), Op: hlo.OpTranspose,
		Shape: in.Shape.Clone(), Operands: []*hlo.Instruction{dot}}
	t.Attrs.Dimensions = perm
	return []*hlo.Instruction{dot, t}
}

// outerProduct reports a product larger than each of its sources: a GEMM then
// reads far fewer bytes than the reduce reads of the product. Without it (each
// row of y times the same row of dy, summed: a row-wise dot product) the reduce
// streams its operands once and fuses with its producers and consumers, which a
// dot cannot.
func outerProduct(p, a, b *hlo.Instruction) bool {
	n := p.Shape.NumElements()
	return n > a.Shape.NumElements() && n > b.Shape.NumElements()
}

// broadcastSource is x's operand and the product dimension each of its dimensions
// fills (x a broadcast), or x itself filling every dimension in order.
func broadcastSource(x *hlo.Instruction) (*hlo.Instruction, []int64) {
	if x.Op == hlo.OpBroadcast {
		return x.Operands[0], x.Attrs.Dimensions
	}
	all := make([]int64, x.Shape.Rank())
	for i := range all {
		all[i] = int64(i)
	}
	return x, all
}

// productDims is a broadcast product's reduce as a dot: its dimension numbers and
// the product dimension behind each dimension of the dot's result, in order.
type productDims struct {
	dot   hlo.DotDims
	order []int64
}

// classifyProduct sorts the product's dimensions into the dot's; ok is false when
// one is reduced but not filled by both broadcasts, or kept but filled by neither.
func classifyProduct(rank int, aDims, bDims, reduced []int64) (productDims, bool) {
	var d productDims
	var lhsFree, rhsFree []int64
	for p := range int64(rank) {
		ia, ib := slices.Index(aDims, p), slices.Index(bDims, p)
		red := slices.Contains(reduced, p)
		switch {
		case ia >= 0 && ib >= 0 && red:
			d.dot.LhsContracting = append(d.dot.LhsContracting, int64(ia))
			d.dot.RhsContracting = append(d.dot.RhsContracting, int64(ib))
		case ia >= 0 && ib >= 0:
			d.dot.LhsBatch = append(d.dot.LhsBatch, int64(ia))
			d.dot.RhsBatch = append(d.dot.RhsBatch, int64(ib))
			d.order = append(d.order, p)
		case red || (ia < 0 && ib < 0):
			return d, false
		}
	}
	// The dot lists each operand's free dimensions in operand order.
	for _, p := range aDims {
		if !slices.Contains(reduced, p) && !slices.Contains(bDims, p) {
			lhsFree = append(lhsFree, p)
		}
	}
	for _, p := range bDims {
		if !slices.Contains(reduced, p) && !slices.Contains(aDims, p) {
			rhsFree = append(rhsFree, p)
		}
	}
	d.order = append(append(d.order, lhsFree...), rhsFree...)
	return d, true
}

// isAddReducer reports a reduce whose to_apply is add of its two parameters.
func isAddReducer(in *hlo.Instruction) bool {
	if len(in.Called) != 1 {
		return false
	}
	c := in.Called[0]
	r := c.Root
	return len(c.Instructions) == 3 && r.Op == hlo.OpAdd && len(r.Operands) == 2 &&
		r.Operands[0].Op == hlo.OpParameter && r.Operands[1].Op == hlo.OpParameter && r.Operands[0] != r.Operands[1]
}

// isPositiveZero reports a scalar constant +0 (the dot's sum starts there too).
func isPositiveZero(x *hlo.Instruction) bool {
	return x.Shape.IsScalar() && isSplatOf(x, func(dt hlo.DType, bits uint64) bool {
		v := floatValue(dt, bits)
		return dt.IsFloat() && v == 0 && !math.Signbit(v)
	})
}

// sizesOf lists the sizes of the given dimensions.
func sizesOf(sizes, dims []int64) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = sizes[d]
	}
	return out
}
