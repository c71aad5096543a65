package gomlx

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/vkxla/vkxla/hlo"
)

// The reductions: reduce, arg-min/max, reduce-window and select-and-scatter.

// reduction is one of GoMLX's reductions: the HLO op that combines two values
// and the identity it starts from.
type reduction struct {
	op       hlo.Opcode
	identity func(dt hlo.DType) *hlo.Literal
}

var (
	sumReduction  = reduction{hlo.OpAdd, func(dt hlo.DType) *hlo.Literal { return hlo.NewLiteral(hlo.Scalar(dt)) }}
	prodReduction = reduction{hlo.OpMultiply, one}
	maxReduction  = reduction{hlo.OpMaximum, lowest}
	minReduction  = reduction{hlo.OpMinimum, highest}
	andReduction  = reduction{hlo.OpAnd, allOnes}
	orReduction   = reduction{hlo.OpOr, func(dt hlo.DType) *hlo.Literal { return hlo.NewLiteral(hlo.Scalar(dt)) }}
	xorReduction  = reduction{hlo.OpXor, func(dt hlo.DType) *hlo.Literal { return hlo.NewLiteral(hlo.Scalar(dt)) }}
)

func one(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dt.IsFloat():
		l.SetFloat64(0, 1)
	default:
		l.SetBits(0, 1)
	}
	return l
}

// lowest is max's identity: -Inf, the most negative integer, 0 or false.
func lowest(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dt.IsFloat():
		l.SetFloat64(0, math.Inf(-1))
	case dt.IsSigned():
		l.SetBits(0, 1<<(dt.Bits()-1))
	}
	return l
}

// highest is min's identity: +Inf, the largest integer or true.
func highest(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	switch {
	case dt.IsFloat():
		l.SetFloat64(0, math.Inf(1))
	case dt.IsSigned():
		l.SetBits(0, 1<<(dt.Bits()-1)-1)
	default:
		l.SetBits(0, math.MaxUint64)
	}
	return l
}

func allOnes(dt hlo.DType) *hlo.Literal {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	l.SetBits(0, math.MaxUint64)
	if dt == hlo.Pred {
		l.SetBool(0, true)
	}
	return l
}

// reduce reduces x over axes (all of them when none are given).
func (b *Builder) reduce(what string, r reduction, x backends.Op, axes []int, ok func(dtypes.DType) bool) (backends.Op, error) {
	ns, err := b.nodes(what, x)
	if err != nil {
		return nil, err
	}
	if ok != nil && !ok(ns[0].shape.DType) {
		return nil, fmt.Errorf("vkxla backend: %s of %s: wrong element type", what, ns[0].shape)
	}
	in := ns[0].in
	dims := int64s(axes)
	if len(axes) == 0 {
		dims = iotaInts(in.Shape.Rank())
	}
	dt := in.Shape.DType
	comp := b.hb.Reducer(r.op, dt)
	if comp == nil {
		return b.wrap(what, nil)
	}
	init := b.hb.Constant(r.identity(dt))
	return b.wrap(what, b.hb.Reduce([]*hlo.Instruction{in}, []*hlo.Instruction{init}, comp, dims))
}

func (b *Builder) ReduceSum(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceSum", sumReduction, x, axes, nil)
}

func (b *Builder) ReduceProduct(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceProduct", prodReduction, x, axes, nil)
}

func (b *Builder) ReduceMax(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceMax", maxReduction, x, axes, nil)
}

func (b *Builder) ReduceMin(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceMin", minReduction, x, axes, nil)
}

func (b *Builder) ReduceBitwiseAnd(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceBitwiseAnd", andReduction, x, axes, dtypes.DType.IsInt)
}

func (b *Builder) ReduceBitwiseOr(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceBitwiseOr", orReduction, x, axes, dtypes.DType.IsInt)
}

func (b *Builder) ReduceBitwiseXor(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceBitwiseXor", xorReduction, x, axes, dtypes.DType.IsInt)
}

func (b *Builder) ReduceLogicalAnd(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceLogicalAnd", andReduction, x, axes, isBool)
}

func (b *Builder) ReduceLogicalOr(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceLogicalOr", orReduction, x, axes, isBool)
}

func (b *Builder) ReduceLogicalXor(x backends.Op, axes ...int) (backends.Op, error) {
	return b.reduce("ReduceLogicalXor", xorReduction, x, axes, isBool)
}

// ArgMinMax is a two-operand reduce over (values, iota indices) along axis: the
// first index of the smallest (largest) value, a NaN winning (its first index).
func (b *Builder) ArgMinMax(x backends.Op, axis int, outDType dtypes.DType, isMin bool) (backends.Op, error) {
	ns, err := b.nodes("ArgMinMax", x)
	if err != nil {
		return nil, err
	}
	idt, err := hloDType(outDType)
	if err != nil {
		return nil, err
	}
	in := ns[0].in
	if axis < 0 || axis >= in.Shape.Rank() {
		return nil, fmt.Errorf("vkxla backend: ArgMinMax of %s: axis %d out of range", ns[0].shape, axis)
	}
	vdt := in.Shape.DType
	comp, err := argMinMaxReducer(vdt, idt, isMin)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: ArgMinMax: %w", err)
	}
	r := maxReduction
	if isMin {
		r = minReduction
	}
	idx := b.hb.Iota(in.Shape.WithDType(idt), int64(axis))
	inits := []*hlo.Instruction{b.hb.Constant(r.identity(vdt)), b.hb.Constant(hlo.NewLiteral(hlo.Scalar(idt)))}
	red := b.hb.Reduce([]*hlo.Instruction{in, idx}, inits, comp, []int64{int64(axis)})
	return b.wrap("ArgMinMax", b.hb.GetTupleElement(red, 1))
}

// argMinMaxReducer takes (acc value, acc index, value, index) and keeps the
// better pair: lhs when it is strictly better or NaN, the smaller index on a tie.
func argMinMaxReducer(vdt, idt hlo.DType, isMin bool) (*hlo.Computation, error) {
	c := hlo.NewBuilder(fmt.Sprintf("argminmax_%v_%v", vdt, idt))
	lv, li := c.Parameter(hlo.Scalar(vdt), "lhs_v"), c.Parameter(hlo.Scalar(idt), "lhs_i")
	rv, ri := c.Parameter(hlo.Scalar(vdt), "rhs_v"), c.Parameter(hlo.Scalar(idt), "rhs_i")
	dir, pick := hlo.CmpGT, c.Max(lv, rv)
	if isMin {
		dir, pick = hlo.CmpLT, c.Min(lv, rv)
	}
	left := c.Compare(lv, rv, dir)
	if vdt.IsFloat() {
		left = c.Or(left, c.Compare(lv, lv, hlo.CmpNE))
	}
	tie := c.Select(c.Compare(lv, rv, hlo.CmpEQ), c.Min(li, ri), ri)
	return c.BuildComputation(c.Tuple(pick, c.Select(left, li, tie)))
}

// window makes HLO window dims; missing sizes are 1, missing strides the
// window's size, missing dilations 1 and missing paddings 0 (GoMLX's defaults,
// shapeinference.ReduceWindowOp).
func window(rank int, sizes, strides, baseDil, winDil []int, pads [][2]int) ([]hlo.WindowDim, error) {
	for name, xs := range map[string][]int{"window dimensions": sizes, "strides": strides,
		"base dilations": baseDil, "window dilations": winDil} {
		if len(xs) != 0 && len(xs) != rank {
			return nil, fmt.Errorf("%d %s for rank %d", len(xs), name, rank)
		}
	}
	if len(pads) != 0 && len(pads) != rank {
		return nil, fmt.Errorf("%d paddings for rank %d", len(pads), rank)
	}
	w := make([]hlo.WindowDim, rank)
	for i := range w {
		w[i] = hlo.NewWindowDim(1)
		if len(sizes) > 0 {
			w[i].Size = int64(sizes[i])
		}
		w[i].Stride = w[i].Size
		if len(strides) > 0 {
			w[i].Stride = int64(strides[i])
		}
		if len(baseDil) > 0 {
			w[i].BaseDilation = int64(baseDil[i])
		}
		if len(winDil) > 0 {
			w[i].WindowDilation = int64(winDil[i])
		}
		if len(pads) > 0 {
			w[i].PadLow, w[i].PadHigh = int64(pads[i][0]), int64(pads[i][1])
		}
	}
	return w, nil
}

var reductions = map[backends.ReduceOpType]reduction{
	backends.ReduceOpSum: sumReduction, backends.ReduceOpProduct: prodReduction,
	backends.ReduceOpMax: maxReduction, backends.ReduceOpMin: minReduction,
}

func (b *Builder) ReduceWindow(x backends.Op, kind backends.ReduceOpType,
	sizes, strides, baseDil, winDil []int, pads [][2]int) (backends.Op, error) {
	ns, err := b.nodes("ReduceWindow", x)
	if err != nil {
		return nil, err
	}
	r, ok := reductions[kind]
	if !ok {
		return nil, fmt.Errorf("vkxla backend: ReduceWindow: reduction %s", kind)
	}
	in := ns[0].in
	w, err := window(in.Shape.Rank(), sizes, strides, baseDil, winDil, pads)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: ReduceWindow of %s: %w", ns[0].shape, err)
	}
	dt := in.Shape.DType
	comp := b.hb.Reducer(r.op, dt)
	if comp == nil {
		return b.wrap("ReduceWindow", nil)
	}
	init := b.hb.Constant(r.identity(dt))
	return b.wrap("ReduceWindow", b.hb.ReduceWindow([]*hlo.Instruction{in}, []*hlo.Instruction{init}, comp, w))
}

// selectAndScatter scatters source onto the element each window selects (>= for
// max, <= for min: the first of equals), summing, from zeros.
func (b *Builder) selectAndScatter(what string, dir hlo.ComparisonDirection, operand, source backends.Op,
	sizes, strides []int, pads [][2]int) (backends.Op, error) {
	ns, err := b.nodes(what, operand, source)
	if err != nil {
		return nil, err
	}
	in := ns[0].in
	w, err := window(in.Shape.Rank(), sizes, strides, nil, nil, pads)
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: %s of %s: %w", what, ns[0].shape, err)
	}
	dt := in.Shape.DType
	sel := hlo.NewBuilder(fmt.Sprintf("select_%v_%v", dir, dt))
	l, r := sel.Parameter(hlo.Scalar(dt), "lhs"), sel.Parameter(hlo.Scalar(dt), "rhs")
	selComp, err := sel.BuildComputation(sel.Compare(l, r, dir))
	if err != nil {
		return nil, fmt.Errorf("vkxla backend: %s: %w", what, err)
	}
	add := b.hb.Reducer(hlo.OpAdd, dt)
	if add == nil {
		return b.wrap(what, nil)
	}
	zero := b.hb.Constant(hlo.NewLiteral(hlo.Scalar(dt)))
	return b.wrap(what, b.hb.SelectAndScatter(in, ns[1].in, zero, selComp, add, w))
}

func (b *Builder) SelectAndScatterMax(operand, source backends.Op, sizes, strides []int, pads [][2]int) (backends.Op, error) {
	return b.selectAndScatter("SelectAndScatterMax", hlo.CmpGE, operand, source, sizes, strides, pads)
}

func (b *Builder) SelectAndScatterMin(operand, source backends.Op, sizes, strides []int, pads [][2]int) (backends.Op, error) {
	return b.selectAndScatter("SelectAndScatterMin", hlo.CmpLE, operand, source, sizes, strides, pads)
}
