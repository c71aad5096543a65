package hlo

import (
	"fmt"
	"slices"
)

// bitcast(x) reinterprets x's bytes as the result's shape: XLA's layout-level
// bitcast, whose meaning depends on the layouts the text gives the operand and the
// result ({1,0} row-major, {0,1} column-major, …). vkxla keeps every value
// row-major, so the parser records the two layouts on the instruction (Layouts),
// and BitcastExpander rewrites it: with the element sequence in memory order being
// x transposed to its major-to-minor order, the result is that sequence reshaped to
// the result's dimensions in its major-to-minor order and transposed back. Both
// row-major: a reshape. The byte size must not change; element types may differ
// only where their widths agree (the bits pass through a bitcast-convert).

// BitcastLayouts are a bitcast's layouts, each minor-to-major (XLA's order); nil
// stands for row-major.
type BitcastLayouts struct {
	Operand, Result []int64
}

func init() {
	shapeRules[OpBitcast] = inferBitcast
}

// RowMajor is the row-major layout of rank r, minor to major: r-1, …, 0.
func RowMajor(r int) []int64 {
	out := make([]int64, r)
	for i := range out {
		out[i] = int64(r - 1 - i)
	}
	return out
}

// bitcastLayouts keeps the written layouts of a bitcast, nil where both are the
// default (or unwritten).
func bitcastLayouts(operand, result []int64, operandRank, resultRank int) *BitcastLayouts {
	isDefault := func(l []int64, r int) bool { return l == nil || slices.Equal(l, RowMajor(r)) }
	if isDefault(operand, operandRank) && isDefault(result, resultRank) {
		return nil
	}
	if operand == nil {
		operand = RowMajor(operandRank)
	}
	if result == nil {
		result = RowMajor(resultRank)
	}
	return &BitcastLayouts{Operand: operand, Result: result}
}

func inferBitcast(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	out, err := needDeclaredArray(a)
	if err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	if xb, ob := x.ByteSize(), out.ByteSize(); xb != ob {
		return Shape{}, fmt.Errorf("changes the byte size from %d (%v) to %d (%v); a bitcast only reinterprets bytes", xb, x, ob, out)
	}
	if x.DType.StorageBits() != out.DType.StorageBits() {
		return Shape{}, fmt.Errorf("reinterprets %v elements as %v elements of another width, which vkxla does not lower", x.DType, out.DType)
	}
	if l := a.attrs.Layouts; l != nil {
		if err := checkLayout("operand", l.Operand, x.Rank()); err != nil {
			return Shape{}, err
		}
		if err := checkLayout("result", l.Result, out.Rank()); err != nil {
			return Shape{}, err
		}
	}
	return out, nil
}

func checkLayout(what string, l []int64, rank int) error {
	if len(l) != rank {
		return fmt.Errorf("%s layout {%s} does not have one entry per dimension of rank %d", what, joinInts(l, ","), rank)
	}
	return checkDimSet(what+" layout", l, rank)
}

// Bitcast adds bitcast(x) of the declared shape; nil layouts are row-major.
func (b *Builder) Bitcast(x *Instruction, shape Shape, operandLayout, resultLayout []int64) *Instruction {
	rank := 0
	if x != nil {
		rank = x.Shape.Rank()
	}
	declared := shape.Clone()
	return b.emit(opSpec{op: OpBitcast, operands: ins(x), result: func([]Shape) Shape { return declared },
		attrs: Attributes{Layouts: bitcastLayouts(cloneInts(operandLayout), cloneInts(resultLayout), rank, shape.Rank())}})
}

// majorToMinor is a layout's dimensions from major to minor (a transpose's
// permutation that puts x in memory order).
func majorToMinor(l []int64, rank int) []int64 {
	if l == nil {
		return Iota64(rank)
	}
	out := slices.Clone(l)
	slices.Reverse(out)
	return out
}

func decomposeBitcast(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	x, out := args[0], in.Shape
	var ol, rl []int64
	if l := in.Attrs.Layouts; l != nil {
		ol, rl = l.Operand, l.Result
	}
	if x.Shape.DType != out.DType {
		x = b.BitcastConvert(x, out.DType)
	}
	mem := majorToMinor(ol, x.Shape.Rank())
	if !slices.Equal(mem, Iota64(x.Shape.Rank())) {
		x = b.Transpose(x, mem...)
	}
	resMem := majorToMinor(rl, out.Rank())
	memDims := make([]int64, out.Rank())
	for i, d := range resMem {
		memDims[i] = out.Dims[d]
	}
	y := b.Reshape(x, memDims...)
	if !slices.Equal(resMem, Iota64(out.Rank())) {
		y = b.Transpose(y, inversePerm(resMem)...)
	}
	return buildNamed(b, in, y)
}

func inversePerm(p []int64) []int64 {
	out := make([]int64, len(p))
	for i, v := range p {
		out[v] = int64(i)
	}
	return out
}
