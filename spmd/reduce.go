package spmd

import (
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// reduce partitions a reduce of one array: each device reduces its tile; where a
// reduced dimension is tiled, the devices holding the other tiles of it then
// all-reduce the partial results with the reduce's own to_apply, so every one of
// them holds the whole reduction. That counts the init value once per tile, so
// it is done only where init is the identity of to_apply (0 for add, 1 for
// multiply, ∓inf for max/min, …); otherwise, and for variadic reduces, the
// operand is gathered.
func (p *partitioner) reduce(in *hlo.Instruction) (value, error) {
	if len(in.Operands) != 2 {
		return p.whole(in)
	}
	x := p.operand(in, 0)
	reduced := in.Attrs.Dimensions
	var kept []int
	var across []int
	for k := range in.Operands[0].Shape.Rank() {
		switch {
		case !slices.Contains(reduced, int64(k)):
			kept = append(kept, k)
		case x.lay.tiles[k] > 1:
			across = append(across, k)
		}
	}
	if len(across) > 0 && !initIsIdentity(in) {
		return p.whole(in)
	}
	target := project(x.lay, kept)
	local, err := target.localShape(in.Shape, in.Name)
	if err != nil {
		return value{}, err
	}
	v, err := p.emit(in, []*hlo.Instruction{x.in, p.wholeOperand(in, 1)}, local, target)
	if err != nil || len(across) == 0 {
		return v, err
	}
	v.in = p.collective(hlo.OpAllReduce, v.in, x.lay.groups(across), nil, in.Called[0])
	return v, nil
}

// initIsIdentity reports whether a reduce's init is a constant that is the
// identity of its to_apply, a single add, multiply, maximum, minimum, and or or
// of the two parameters.
func initIsIdentity(in *hlo.Instruction) bool {
	init := in.Operands[1]
	c := in.Called[0]
	if init.Op != hlo.OpConstant || init.Attrs.Literal == nil || len(c.Params) != 2 || c.Root == nil {
		return false
	}
	r := c.Root
	if len(r.Operands) != 2 || !(r.Operands[0] == c.Params[0] && r.Operands[1] == c.Params[1] ||
		r.Operands[0] == c.Params[1] && r.Operands[1] == c.Params[0]) {
		return false
	}
	lit := init.Attrs.Literal
	dt := lit.Shape().DType
	if dt.IsComplex() {
		return false
	}
	v := lit.Float64(0)
	switch r.Op {
	case hlo.OpAdd, hlo.OpOr:
		return v == 0
	case hlo.OpMultiply:
		return v == 1
	case hlo.OpAnd:
		return dt == hlo.Pred && v == 1
	case hlo.OpMaximum:
		return dt.IsFloat() && math.IsInf(v, -1)
	case hlo.OpMinimum:
		return dt.IsFloat() && math.IsInf(v, 1)
	}
	return false
}
