package hlo

import (
	"fmt"
	"slices"
)

// map(x0, …, xn), dimensions={0,…,r-1}, to_apply=f applies the scalar computation
// f(x0[i], …, xn[i]) at every index i (XLA's Map). The operands share their
// dimensions (element types may differ); f takes one scalar per operand, of its
// element type, and returns one scalar, whose type is the result's. dimensions
// must list every dimension in order, as XLA requires. MapInliner copies f's body
// over whole arrays (XLA's MapInliner), so f may hold only elementwise ops and
// constants.

func init() {
	shapeRules[OpMap] = inferMap
	opAttrs[OpMap] = []attrUse{{name: "dimensions",
		codec: intListCodec(func(a *Attributes) *[]int64 { return &a.Dimensions }, func(d []int64) bool { return d != nil })},
		req("to_apply")}
}

func inferMap(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	if len(a.operands) == 0 {
		return Shape{}, fmt.Errorf("needs at least one operand")
	}
	x := a.operands[0]
	for i, s := range a.operands {
		if !s.SameDims(x) {
			return Shape{}, fmt.Errorf("operand %d %v and operand 0 %v differ in dimensions", i, s, x)
		}
	}
	if d := a.attrs.Dimensions; len(d) > 0 && !slices.Equal(d, Iota64(x.Rank())) {
		return Shape{}, fmt.Errorf("dimensions=%v must list every dimension of %v in order", d, x)
	}
	f := a.called[0]
	if len(f.Params) != len(a.operands) {
		return Shape{}, fmt.Errorf("to_apply %s takes %d parameters for %d operands", f.Name, len(f.Params), len(a.operands))
	}
	for i, p := range f.Params {
		if !p.Shape.Equal(Scalar(a.operands[i].DType)) {
			return Shape{}, fmt.Errorf("to_apply %s parameter %d is %v, want %v[] for operand %d %v",
				f.Name, i, p.Shape, a.operands[i].DType, i, a.operands[i])
		}
	}
	if f.Root == nil || !f.Root.Shape.IsScalar() {
		return Shape{}, fmt.Errorf("to_apply %s must return a scalar", f.Name)
	}
	return MakeShape(f.Root.Shape.DType, x.Dims...), nil
}

// Iota64 is 0, 1, …, n-1.
func Iota64(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// Map adds map(xs…), dimensions={0,…}, to_apply=f.
func (b *Builder) Map(f *Computation, xs ...*Instruction) *Instruction {
	rank := 0
	if len(xs) > 0 && xs[0] != nil {
		rank = xs[0].Shape.Rank()
	}
	return b.emit(opSpec{op: OpMap, operands: ins(xs...), called: []*Computation{f},
		attrs: Attributes{Dimensions: Iota64(rank)}})
}

// decomposeMap copies to_apply's instructions over whole arrays: parameters become
// the operands, scalar constants are broadcast, and every elementwise op is
// re-emitted on the arrays.
func decomposeMap(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	f, dims := in.Called[0], in.Shape.Dims
	root, err := b.inlineWith(f, args, func(x *Instruction, ops []*Instruction) (*Instruction, error) {
		switch {
		case x.Op == OpConstant:
			return b.BroadcastScalar(b.Constant(x.Attrs.Literal), dims...), nil
		case x.Op == OpConvert:
			return b.Convert(ops[0], x.Shape.DType), nil
		case x.Op == OpBitcastConvert:
			return b.BitcastConvert(ops[0], x.Shape.DType), nil
		case mapsElementwise(x.Op):
			return b.Reemit(x, ops), nil
		}
		return nil, fmt.Errorf("%s %s: to_apply %s holds %s %s, which is not elementwise; only elementwise "+
			"ops and constants can be mapped", in.Op, in.Name, f.Name, x.Op, x.Name)
	})
	if err != nil {
		return nil, err
	}
	c, err := b.BuildComputation(root)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", in.Op, in.Name, err)
	}
	return c, nil
}

// mapsElementwise reports the ops whose array form computes the scalar form at
// every index: the elementwise ops and the expanded ops defined per element.
func mapsElementwise(op Opcode) bool {
	return op.Info().Elementwise || op == OpMulHi || op == OpReducePrecision
}
