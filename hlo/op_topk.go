package hlo

import "fmt"

// topk(x), k=K, largest=true|false returns (values, indices): along x's last
// dimension, the K greatest elements in descending order (largest=false: the K
// least, ascending) and their s32 positions, ties in index order. Floats order in
// IEEE total order (NaN above +inf, -0 below +0), as the sort comparator XLA's
// TopkDecomposer builds. TopKDecomposer lowers it to a stable sort of (x, iota)
// and two slices; the TopK custom-call expands through the same topK.

func init() {
	shapeRules[OpTopK] = inferTopK
	attrCodecs["k"] = intCodec(func(a *Attributes) *int64 { return &a.K }, anyInt)
	attrCodecs["largest"] = attrCodec{
		print: func(in *Instruction) (string, bool) { return fmt.Sprint(!in.Attrs.Smallest), true },
		parse: func(p *parser, in *Instruction) error {
			largest, err := p.parseBool()
			in.Attrs.Smallest = !largest
			return err
		},
	}
	opAttrs[OpTopK] = []attrUse{req("k"), opt("largest")}
}

func inferTopK(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, k := a.operands[0], a.attrs.K
	if x.Rank() == 0 || !x.DType.IsNumeric() {
		return Shape{}, fmt.Errorf("operand %v is not a numeric array of rank >= 1", x)
	}
	if last := x.Dims[x.Rank()-1]; k < 0 || k > last {
		return Shape{}, fmt.Errorf("k=%d is not in [0, %d], the last dimension of %v", k, last, x)
	}
	dims := append([]int64(nil), x.Dims...)
	dims[len(dims)-1] = k
	return MakeTuple(MakeShape(x.DType, dims...), MakeShape(S32, dims...)), nil
}

// TopK adds topk(x), k=k, largest=largest.
func (b *Builder) TopK(x *Instruction, k int64, largest bool) *Instruction {
	return b.emit(opSpec{op: OpTopK, operands: ins(x), attrs: Attributes{K: k, Smallest: !largest}})
}

func decomposeTopK(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	dir := CmpGT
	if in.Attrs.Smallest {
		dir = CmpLT
	}
	return b.BuildComputation(topK(b, args[0], in.Attrs.K, dir))
}

// topK is the tuple (values, indices) of the k first elements of each row of x's
// last dimension once stably sorted by dir (CmpGT: descending) with positions
// carried along.
func topK(b *Builder, x *Instruction, k int64, dir ComparisonDirection) *Instruction {
	rank := x.Shape.Rank()
	idx := b.Iota(x.Shape.WithDType(S32), int64(rank-1))
	sorted := b.Sort([]*Instruction{x, idx}, b.Comparator(dir, x.Shape.DType, S32), int64(rank-1), true)
	limits := append([]int64{}, x.Shape.Dims...)
	limits[rank-1] = k
	starts, strides := make([]int64, rank), make([]int64, rank)
	for i := range strides {
		strides[i] = 1
	}
	values := b.Slice(b.GetTupleElement(sorted, 0), starts, limits, strides)
	indices := b.Slice(b.GetTupleElement(sorted, 1), starts, limits, strides)
	return b.Tuple(values, indices)
}
