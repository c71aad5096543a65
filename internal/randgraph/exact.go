package randgraph

import "github.com/vkxla/vkxla/hlo"

// Exact decodes the root's FuzzDifferential graphs: over parameters x and y of the
// f32 rank-2 shape s, each step reads an operand byte and an op byte and applies
// one of 14 ops whose f32 results are correctly rounded on every Vulkan device, so
// any difference from cpuref is a compiler bug, not a precision allowance. The
// last value is the root.
func Exact(ops []byte, s hlo.Shape) (*hlo.Module, error) {
	g := &graph{r: &reader{data: ops}, b: hlo.NewBuilder("fuzz")}
	g.vals = []*hlo.Instruction{g.b.Parameter(s, "x"), g.b.Parameter(s, "y")}
	for !g.r.done() {
		g.exactStep()
	}
	return g.b.Build(g.vals[len(g.vals)-1])
}

// ExactLoop runs Exact's graph of ops as a loop body three times: the state is
// (i, x, y); each iteration replaces x by the last value shaped like x and keeps y.
func ExactLoop(ops []byte, s hlo.Shape) (*hlo.Module, error) {
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), s, s)
	bb := hlo.NewBuilder("body")
	p := bb.Parameter(state, "state")
	g := &graph{r: &reader{data: ops}, b: bb, vals: []*hlo.Instruction{bb.GetTupleElement(p, 1), bb.GetTupleElement(p, 2)}}
	for !g.r.done() {
		g.exactStep()
	}
	next := g.vals[0]
	for _, v := range g.vals {
		if v.Shape.Equal(s) {
			next = v
		}
	}
	i1 := bb.Add(bb.GetTupleElement(p, 0), bb.ScalarConstant(hlo.S32, 1))
	body, err := bb.BuildComputation(bb.Tuple(i1, next, bb.GetTupleElement(p, 2)))
	if err != nil {
		return nil, err
	}
	cb := hlo.NewBuilder("cond")
	cp := cb.Parameter(state, "state")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(cp, 0), cb.ScalarConstant(hlo.S32, 3), hlo.CmpLT))
	if err != nil {
		return nil, err
	}
	b := hlo.NewBuilder("fuzz")
	x, y := b.Parameter(s, "x"), b.Parameter(s, "y")
	w := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, y))
	return b.Build(b.GetTupleElement(w, 1))
}

// sameShape returns a value shaped like x other than x, from a byte's choice, or x.
func (g *graph) sameShape(x *hlo.Instruction) *hlo.Instruction {
	if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(x.Shape) }); v != nil {
		return v
	}
	return x
}

// exactStep applies one of Exact's ops, chosen by the byte after the one that
// picks its operand (any earlier value).
func (g *graph) exactStep() {
	x := g.vals[g.r.next()%len(g.vals)]
	b := g.b
	var y *hlo.Instruction
	switch g.r.intn(14) {
	case 0:
		y = b.Add(x, g.sameShape(x))
	case 1:
		y = b.Mul(x, g.sameShape(x))
	case 2:
		y = b.Max(x, g.sameShape(x))
	case 3:
		y = b.Negate(x)
	case 4:
		y = b.Select(b.Compare(x, g.sameShape(x), hlo.CmpLT), x, b.Abs(x))
	case 5:
		y = b.Reverse(x, int64(g.r.intn(x.Shape.Rank())))
	case 6:
		y = b.Transpose(x, 1, 0)
	case 7:
		y = b.Reshape(x, x.Shape.Dims[1], x.Shape.Dims[0])
	case 8:
		y = b.Pad(x, b.ScalarConstant(hlo.F32, 0.5), []hlo.PadDim{{Low: 1, High: -1}, {Interior: 0}})
	case 9:
		y = b.Broadcast(b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)},
			b.Reducer(hlo.OpMaximum, hlo.F32), []int64{1}), x.Shape.Dims, []int64{0})
	case 10:
		y = b.Concatenate(int64(g.r.intn(2)), x, g.sameShape(x))
	case 11:
		d := x.Shape.Dims
		y = b.Slice(x, []int64{0, d[1] / 3}, d, []int64{1 + int64(g.r.intn(2)), 2})
	case 12:
		// Rounding to bf16 and back is exact arithmetic: both sides round to nearest even.
		y = b.Convert(b.Convert(x, hlo.BF16), hlo.F32)
	case 13:
		y = b.Clamp(b.ScalarConstant(hlo.F32, -0.25), x, b.ScalarConstant(hlo.F32, 0.5))
	}
	g.push(y)
}
