package randgraph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Input is a literal of small, exactly representable values.
func Input(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := 0; i < lit.NumElements(); i++ {
		setValue(lit, i, rng.IntN(9))
	}
	return lit
}

// setValue stores value number k (0…8): -2…2 in halves for f32, -4…4 for s32.
func setValue(lit *hlo.Literal, i, k int) {
	k = k%9 - 4
	if lit.DType() == hlo.F32 {
		lit.SetFloat64(i, float64(k)/2)
	} else {
		lit.SetInt64(i, int64(k))
	}
}

const (
	maxSteps  = 28  // steps in the entry
	maxNested = 5   // steps in a loop body or branch
	maxDim    = 24  // largest dimension a step may make
	maxElems  = 144 // largest value a step may make
)

// graph grows one computation. Every step appends the values it makes to vals,
// so later steps can use them again: values with several users are the rule.
type graph struct {
	r        *reader
	b        *hlo.Builder
	vals     []*hlo.Instruction // array values, parameters first
	preds    []*hlo.Instruction // compare results, for select
	nested   bool               // inside a loop body or branch: no more control flow
	reducers map[string]*hlo.Computation
	err      *error // the first error of a sub-builder
}

// Header is the pipeline configuration FromBytes decodes before the graph: the
// fusion bound and the passes to switch off (by name, as passes.Config reads them).
type Header struct {
	MaxFusionParams int
	Disabled        []string
}

// FromBytes decodes a module and a pipeline configuration from fuzz bytes (the
// passes' FuzzPipeline): an 8-byte header (dims, fusion bound, disabled passes,
// parameter count, root shape), one byte per parameter, then one op per step (an
// op byte, an operand byte, then whatever the op reads); past the end every byte
// reads 0. Every module is valid by construction; an error is a generator bug.
func FromBytes(data []byte) (*hlo.Module, Header, error) {
	r := &reader{data: data}
	rows, cols := int64(1+r.intn(6)), int64(1+r.intn(6))
	cfg := Header{MaxFusionParams: 2 + r.intn(7)}
	switch r.intn(10) {
	case 6:
		cfg.Disabled = []string{"fusion"}
	case 7:
		cfg.Disabled = []string{"dce"}
	case 8:
		cfg.Disabled = []string{"dce-after-fusion"}
	case 9:
		cfg.Disabled = []string{"dce", "dce-after-fusion"}
	}
	nParams, rootN, rootPicks := 1+r.intn(3), r.intn(4), []int{r.next(), r.next()}

	var sub error
	g := &graph{r: r, b: hlo.NewBuilder("fuzz"), reducers: map[string]*hlo.Computation{}, err: &sub}
	for i := 0; i < nParams; i++ {
		spec := r.next()
		dt := hlo.F32
		if (spec>>3)%4 == 3 {
			dt = hlo.S32
		}
		var dims []int64
		switch spec % 8 {
		case 0, 1, 5:
			dims = []int64{rows, cols}
		case 2:
			dims = []int64{cols, rows}
		case 3:
			dims = []int64{rows}
		case 4:
			dims = []int64{cols}
		case 6:
			dims = nil
		case 7:
			dims = []int64{rows, 1}
		}
		g.vals = append(g.vals, g.b.Parameter(hlo.MakeShape(dt, dims...), fmt.Sprintf("p%d", i)))
	}
	for steps := 0; steps < maxSteps && !r.done() && g.ok(); steps++ {
		g.step()
	}
	if !g.ok() {
		return nil, cfg, g.error()
	}
	// One of the latest values (it may have users), or a tuple of it and others.
	root := g.vals[len(g.vals)-1-rootPicks[0]%min(3, len(g.vals))]
	if rootN > 0 {
		root = g.vals[len(g.vals)-1]
		elems := []*hlo.Instruction{root}
		for _, p := range rootPicks[:rootN-1] {
			elems = append(elems, g.vals[p%len(g.vals)])
		}
		root = g.b.Tuple(elems...)
	}
	m, err := g.b.Build(root)
	return m, cfg, err
}

func (g *graph) ok() bool { return g.b.Err() == nil && *g.err == nil }

func (g *graph) error() error {
	if *g.err != nil {
		return *g.err
	}
	return g.b.Err()
}

// push records v as a value later steps may use and returns it.
func (g *graph) push(v *hlo.Instruction) *hlo.Instruction {
	if v != nil {
		g.vals = append(g.vals, v)
	}
	return v
}

// pick returns an earlier value: one of the latest three when the byte is odd (so
// chains and fan-out are common), any otherwise.
func (g *graph) pick() *hlo.Instruction {
	v := g.r.next()
	if v&1 == 1 {
		return g.vals[len(g.vals)-1-(v>>1)%min(3, len(g.vals))]
	}
	return g.vals[(v>>1)%len(g.vals)]
}

// find returns a value other than x satisfying ok, starting the search at a byte's
// choice, or nil.
func (g *graph) find(x *hlo.Instruction, ok func(v *hlo.Instruction) bool) *hlo.Instruction {
	start, n := g.r.next(), len(g.vals)
	for i := range n {
		if v := g.vals[(start+i)%n]; v != x && ok(v) {
			return v
		}
	}
	return nil
}

// like returns a value of x's shape: another one, a conversion of one with x's dims,
// x itself, or a constant.
func (g *graph) like(x *hlo.Instruction) *hlo.Instruction {
	if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(x.Shape) }); v != nil {
		return v
	}
	switch g.r.intn(3) {
	case 0:
		return x
	case 1:
		if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(x.Shape) }); v != nil {
			return g.push(g.b.Convert(v, x.Shape.DType))
		}
	}
	return g.push(g.constant(x.Shape, g.r.intn(2) == 0))
}

// coerce returns a value of shape s: the latest one, a conversion of the latest with
// s's dims, or a broadcast of a reduction of the latest value.
func (g *graph) coerce(s hlo.Shape) *hlo.Instruction {
	for i := len(g.vals) - 1; i >= 0; i-- {
		if g.vals[i].Shape.Equal(s) {
			return g.vals[i]
		}
	}
	for i := len(g.vals) - 1; i >= 0; i-- {
		if g.vals[i].Shape.SameDims(s) {
			return g.push(g.b.Convert(g.vals[i], s.DType))
		}
	}
	v := g.vals[len(g.vals)-1]
	if !v.Shape.IsScalar() {
		v = g.reduce(v, true)
	}
	if v.Shape.DType != s.DType {
		v = g.push(g.b.Convert(v, s.DType))
	}
	if s.IsScalar() {
		return v
	}
	return g.push(g.b.BroadcastScalar(v, s.Dims...))
}

// constant makes a constant of shape s: uniform (a splat) or not.
func (g *graph) constant(s hlo.Shape, uniform bool) *hlo.Instruction {
	lit := hlo.NewLiteral(s)
	k := g.r.next()
	for i := 0; i < lit.NumElements(); i++ {
		setValue(lit, i, k)
		if !uniform {
			k = (k*5 + 3) % 251
		}
	}
	return g.b.Constant(lit)
}

func (g *graph) scalarConst(dt hlo.DType) *hlo.Instruction {
	return g.constant(hlo.Scalar(dt), true)
}

// reducer returns the shared add or max computation for dt.
func (g *graph) reducer(op hlo.Opcode, dt hlo.DType) *hlo.Computation {
	key := fmt.Sprint(op, dt)
	if c, ok := g.reducers[key]; ok {
		return c
	}
	c, err := hlo.ScalarReducer(op, dt)
	if err != nil && *g.err == nil {
		*g.err = err
	}
	g.reducers[key] = c
	return c
}

func fits(dims ...int64) bool {
	n := int64(1)
	for _, d := range dims {
		if d < 1 || d > maxDim {
			return false
		}
		n *= d
	}
	return n <= maxElems
}

func otherType(dt hlo.DType) hlo.DType {
	if dt == hlo.F32 {
		return hlo.S32
	}
	return hlo.F32
}

// step applies the op the next byte names to the value the byte after picks.
func (g *graph) step() {
	op := g.r.next()
	g.apply(op, g.pick())
}

// apply adds op on x (and whatever else it needs), records the values made and
// returns the last.
func (g *graph) apply(op int, x *hlo.Instruction) *hlo.Instruction {
	b := g.b
	s := x.Shape
	rank := s.Rank()
	switch op % 23 {
	case 0, 1:
		return g.push(g.unary(x))
	case 2, 3:
		return g.push(g.binary(x, g.like(x)))
	case 4:
		return g.push(g.compareSelect(x))
	case 5:
		return g.push(b.Convert(x, otherType(s.DType)))
	case 6:
		return g.broadcast(x)
	case 7:
		if rank == 2 {
			return g.push(b.Transpose(x, 1, 0))
		}
		return g.push(b.Transpose(x, []int64{0}[:rank]...))
	case 8:
		return g.reshape(x)
	case 9:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.push(g.slice(x))
	case 10:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.concatenate(x)
	case 11:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.pad(x)
	case 12:
		if rank == 0 {
			return g.push(g.unary(x))
		}
		var dims []int64
		bits := g.r.next()
		for d := range rank {
			if bits>>d&1 == 1 {
				dims = append(dims, int64(d))
			}
		}
		if len(dims) == 0 {
			dims = []int64{int64(rank - 1)}
		}
		return g.push(b.Reverse(x, dims...))
	case 13:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.reduce(x, g.r.intn(3) == 0)
	case 14:
		return g.dot(x)
	case 15:
		var c *hlo.Instruction
		switch g.r.intn(4) {
		case 0:
			c = g.push(g.constant(s, false)) // fusible only up to 16 elements
		case 1:
			c = g.push(g.constant(s, true)) // a splat of any size fuses
		case 2:
			c = g.push(b.BroadcastScalar(g.scalarConst(s.DType), s.Dims...))
		default:
			if rank == 0 {
				c = g.push(g.constant(s, true))
			} else {
				c = g.push(b.Iota(s, int64(g.r.intn(rank))))
			}
		}
		return g.push(g.binary(x, c))
	case 16:
		lo, hi := g.scalarConst(s.DType), g.scalarConst(s.DType)
		if g.r.next()&1 == 1 {
			lo, hi = g.like(x), g.like(x)
		}
		return g.push(b.Clamp(lo, x, hi))
	case 17:
		if rank == 0 {
			return g.broadcast(x)
		}
		sizes := make([]int64, rank)
		for i, d := range s.Dims {
			sizes[i] = int64(1 + g.r.intn(int(d)))
		}
		return g.push(b.DynamicSlice(x, g.starts(rank), sizes))
	case 18:
		if rank == 0 {
			return g.broadcast(x)
		}
		upd := g.push(g.slice(g.like(x)))
		return g.push(b.DynamicUpdateSlice(x, upd, g.starts(rank)))
	case 19:
		if rank == 0 {
			return g.broadcast(x)
		}
		return g.variadicReduce(x)
	case 20:
		// A producer with several users: made here, then used by two or three
		// further steps, whatever they are.
		y := g.apply([]int{0, 2, 5, 6, 7, 9, 11, 12, 15, 17}[g.r.intn(10)], x)
		last := y
		for n := 2 + g.r.intn(2); n > 0 && g.ok(); n-- {
			last = g.apply(g.r.next()%20, y)
		}
		return last
	case 21:
		if g.nested {
			return g.push(g.unary(x))
		}
		return g.while(x)
	default:
		if g.nested {
			return g.push(g.binary(x, g.like(x)))
		}
		return g.conditional(x)
	}
}

// starts returns rank s32 scalars for dynamic-slice and dynamic-update-slice:
// constants (-4…4, clamped by the op) or a computed value.
func (g *graph) starts(rank int) []*hlo.Instruction {
	out := make([]*hlo.Instruction, rank)
	for i := range out {
		if g.r.next()&1 == 1 {
			out[i] = g.coerce(hlo.Scalar(hlo.S32))
		} else {
			out[i] = g.scalarConst(hlo.S32)
		}
	}
	return out
}

// variadicReduce reduces x and a value of its dims together, with a reducer
// returning (sum, max): a reduce of tuple shape.
func (g *graph) variadicReduce(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	y := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(s) })
	if y == nil {
		y = x
	}
	dims := []int64{int64(g.r.intn(s.Rank()))}
	if g.r.intn(3) == 0 {
		dims = []int64{}
		for d := range s.Rank() {
			dims = append(dims, int64(d))
		}
	}
	key := fmt.Sprint("pair", s.DType, y.Shape.DType)
	comp, ok := g.reducers[key]
	if !ok {
		rb := hlo.NewBuilder(fmt.Sprintf("sum_max_%v_%v", s.DType, y.Shape.DType))
		a0, a1 := rb.Parameter(hlo.Scalar(s.DType), "acc0"), rb.Parameter(hlo.Scalar(y.Shape.DType), "acc1")
		v0, v1 := rb.Parameter(hlo.Scalar(s.DType), "x0"), rb.Parameter(hlo.Scalar(y.Shape.DType), "x1")
		c, err := rb.BuildComputation(rb.Tuple(rb.Add(a0, v0), rb.Max(a1, v1)))
		if err != nil {
			*g.err = err
			return nil
		}
		comp, g.reducers[key] = c, c
	}
	b := g.b
	r := b.Reduce([]*hlo.Instruction{x, y},
		[]*hlo.Instruction{b.ScalarConstant(s.DType, 0), b.ScalarConstant(y.Shape.DType, lowest(y.Shape.DType))}, comp, dims)
	out := g.push(b.GetTupleElement(r, 0))
	if g.r.next()&1 == 1 {
		out = g.push(b.GetTupleElement(r, 1))
	}
	return out
}

// lowest is max's identity.
func lowest(dt hlo.DType) float64 {
	if dt == hlo.S32 {
		return math.MinInt32
	}
	return math.Inf(-1)
}

var (
	f32Unary  = []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpFloor, hlo.OpSign, hlo.OpExp, hlo.OpSqrt, hlo.OpTanh, hlo.OpCopy}
	s32Unary  = []hlo.Opcode{hlo.OpNegate, hlo.OpAbs, hlo.OpSign, hlo.OpNot, hlo.OpPopcnt, hlo.OpCopy}
	f32Binary = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum,
		hlo.OpDivide, hlo.OpRemainder, hlo.OpPower}
	s32Binary = []hlo.Opcode{hlo.OpAdd, hlo.OpSubtract, hlo.OpMultiply, hlo.OpMaximum, hlo.OpMinimum,
		hlo.OpDivide, hlo.OpRemainder, hlo.OpAnd, hlo.OpOr}
	directions = []hlo.ComparisonDirection{hlo.CmpEQ, hlo.CmpNE, hlo.CmpLT, hlo.CmpLE, hlo.CmpGT, hlo.CmpGE}
)

func (g *graph) unary(x *hlo.Instruction) *hlo.Instruction {
	ops := f32Unary
	if x.Shape.DType == hlo.S32 {
		ops = s32Unary
	}
	op := ops[g.r.intn(len(ops))]
	if op == hlo.OpCopy {
		return g.b.Copy(x)
	}
	return g.b.Unary(op, x)
}

func (g *graph) binary(x, y *hlo.Instruction) *hlo.Instruction {
	ops := f32Binary
	if x.Shape.DType == hlo.S32 {
		ops = s32Binary
	}
	if g.r.next()&1 == 1 {
		x, y = y, x
	}
	return g.b.Binary(ops[g.r.intn(len(ops))], x, y)
}

// compareSelect selects between two values of x's dims by a comparison of x with a
// value like it, or by an earlier comparison of the same dims.
func (g *graph) compareSelect(x *hlo.Instruction) *hlo.Instruction {
	var pred *hlo.Instruction
	if g.r.next()&1 == 1 {
		for _, p := range g.preds {
			if p.Shape.SameDims(x.Shape) {
				pred = p
			}
		}
	}
	if pred == nil {
		pred = g.b.Compare(x, g.like(x), directions[g.r.intn(len(directions))])
		g.preds = append(g.preds, pred)
	}
	a := x
	if g.r.next()&1 == 1 {
		if v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.SameDims(x.Shape) }); v != nil {
			a = v
		}
	}
	return g.b.Select(pred, a, g.like(a))
}

// broadcast broadcasts a scalar or rank-1 x to rank 1 or 2; for a rank-2 x, it
// broadcasts a scalar to x's shape and combines the two.
func (g *graph) broadcast(x *hlo.Instruction) *hlo.Instruction {
	b, s := g.b, x.Shape
	k := int64(1 + g.r.intn(6))
	switch s.Rank() {
	case 0:
		if g.r.next()&1 == 1 {
			return g.push(b.BroadcastScalar(x, k))
		}
		return g.push(b.BroadcastScalar(x, k, int64(1+g.r.intn(6))))
	case 1:
		n := s.Dims[0]
		if !fits(n, k) {
			return g.push(g.unary(x))
		}
		if g.r.next()&1 == 1 {
			return g.push(b.Broadcast(x, []int64{n, k}, []int64{0}))
		}
		return g.push(b.Broadcast(x, []int64{k, n}, []int64{1}))
	}
	sc := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(s.DType)) })
	if sc == nil {
		sc = g.reduce(x, true)
	}
	return g.push(g.binary(x, g.push(b.BroadcastScalar(sc, s.Dims...))))
}

func (g *graph) reshape(x *hlo.Instruction) *hlo.Instruction {
	b, d := g.b, x.Shape.Dims
	switch len(d) {
	case 0:
		if g.r.next()&1 == 1 {
			return g.push(b.Reshape(x, 1))
		}
		return g.push(b.Reshape(x, 1, 1))
	case 1:
		n := d[0]
		var divs []int64
		for k := int64(1); k <= n; k++ {
			if n%k == 0 {
				divs = append(divs, k)
			}
		}
		k := divs[g.r.intn(len(divs))]
		if n == 1 && g.r.next()&1 == 1 {
			return g.push(b.Reshape(x))
		}
		return g.push(b.Reshape(x, k, n/k))
	}
	switch g.r.intn(3) {
	case 0:
		if fits(d[0] * d[1]) {
			return g.push(b.Reshape(x, d[0]*d[1]))
		}
	case 1:
		if fits(1, d[0]*d[1]) {
			return g.push(b.Reshape(x, 1, d[0]*d[1]))
		}
	}
	return g.push(b.Reshape(x, d[1], d[0]))
}

func (g *graph) slice(x *hlo.Instruction) *hlo.Instruction {
	d := x.Shape.Dims
	starts, limits, strides := make([]int64, len(d)), make([]int64, len(d)), make([]int64, len(d))
	for i, n := range d {
		starts[i] = int64(g.r.intn(int(n)))
		limits[i] = starts[i] + 1 + int64(g.r.intn(int(n-starts[i])))
		strides[i] = int64(1 + g.r.intn(2))
	}
	return g.b.Slice(x, starts, limits, strides)
}

// concatenate joins x with one or two values whose dims match but for the joined
// dimension (x itself when none does).
func (g *graph) concatenate(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	dim := g.r.intn(s.Rank())
	matches := func(v *hlo.Instruction) bool {
		if v.Shape.DType != s.DType || v.Shape.Rank() != s.Rank() {
			return false
		}
		for i := range s.Dims {
			if i != dim && v.Shape.Dims[i] != s.Dims[i] {
				return false
			}
		}
		return true
	}
	xs := []*hlo.Instruction{x}
	for n := 1 + g.r.intn(2); n > 0; n-- {
		y := g.find(x, matches)
		if y == nil {
			y = x
		}
		xs = append(xs, y)
	}
	out := slices.Clone(s.Dims)
	out[dim] = 0
	for _, v := range xs {
		out[dim] += v.Shape.Dims[dim]
	}
	for !fits(out...) && len(xs) > 1 {
		out[dim] -= xs[len(xs)-1].Shape.Dims[dim]
		xs = xs[:len(xs)-1]
	}
	if len(xs) == 1 {
		return g.push(g.unary(x))
	}
	return g.push(g.b.Concatenate(int64(dim), xs...))
}

// pad pads x by -1…2 at each end and 0 or 1 inside, with a constant or an earlier
// scalar.
func (g *graph) pad(x *hlo.Instruction) *hlo.Instruction {
	d := x.Shape.Dims
	pads := make([]hlo.PadDim, len(d))
	out := make([]int64, len(d))
	for i, n := range d {
		p := hlo.PadDim{Low: int64(g.r.intn(4) - 1), High: int64(g.r.intn(4) - 1), Interior: int64(g.r.intn(2))}
		size := n + (n-1)*p.Interior + p.Low + p.High
		if size < 1 {
			p.Low, p.High = 0, 0
			size = n + (n-1)*p.Interior
		}
		pads[i], out[i] = p, size
	}
	if !fits(out...) {
		return g.push(g.unary(x))
	}
	v := g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(x.Shape.DType)) })
	if v == nil || g.r.next()&1 == 1 {
		v = g.scalarConst(x.Shape.DType)
	}
	return g.push(g.b.Pad(x, v, pads))
}

// reduce adds a reduction of x with add or max over one dimension or all.
func (g *graph) reduce(x *hlo.Instruction, all bool) *hlo.Instruction {
	s := x.Shape
	dims := []int64{int64(g.r.intn(max(s.Rank(), 1)))}
	if all || s.Rank() == 0 {
		dims = []int64{}
		for d := range s.Rank() {
			dims = append(dims, int64(d))
		}
	}
	op, init := hlo.OpAdd, 0.0
	choice := g.r.next()
	if choice&1 == 1 {
		op, init = hlo.OpMaximum, lowest(s.DType)
	}
	// The initial value: the identity, or sometimes an earlier scalar (used by
	// other instructions too).
	var start *hlo.Instruction
	if choice&2 == 2 {
		start = g.find(x, func(v *hlo.Instruction) bool { return v.Shape.Equal(hlo.Scalar(s.DType)) })
	}
	if start == nil {
		start = g.b.ScalarConstant(s.DType, init)
	}
	return g.push(g.b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{start}, g.reducer(op, s.DType), dims))
}

// dot contracts x's last dimension with the first of a value of the same type, or of
// x's transpose when none fits.
func (g *graph) dot(x *hlo.Instruction) *hlo.Instruction {
	s := x.Shape
	if s.Rank() == 0 {
		return g.push(g.binary(x, g.like(x)))
	}
	k := s.Dims[s.Rank()-1]
	y := g.find(nil, func(v *hlo.Instruction) bool {
		return v.Shape.DType == s.DType && v.Shape.Rank() >= 1 && v.Shape.Dims[0] == k &&
			(s.Rank() == 1 || v.Shape.Rank() == 1 || fits(s.Dims[0], v.Shape.Dims[1]))
	})
	if y == nil {
		y = x
		if s.Rank() == 2 {
			if !fits(s.Dims[0], s.Dims[0]) {
				return g.push(g.binary(x, g.like(x)))
			}
			y = g.push(g.b.Transpose(x, 1, 0))
		}
	}
	return g.push(g.b.Dot(x, y))
}

// while runs a loop of 1…3 iterations over (counter, x, w), its body a few random
// steps on x and w.
func (g *graph) while(x *hlo.Instruction) *hlo.Instruction {
	w := g.pick()
	trip := float64(1 + g.r.intn(3))
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), x.Shape, w.Shape)

	cb := hlo.NewBuilder("cond")
	s := cb.Parameter(state, "s")
	i := cb.GetTupleElement(s, 0)
	cond, err := cb.BuildComputation(cb.Compare(i, cb.ScalarConstant(hlo.S32, trip), hlo.CmpLT))
	if err != nil {
		*g.err = err
		return nil
	}

	bb := hlo.NewBuilder("body")
	s = bb.Parameter(state, "s")
	i1 := bb.Add(bb.GetTupleElement(s, 0), bb.ScalarConstant(hlo.S32, 1))
	v, u := bb.GetTupleElement(s, 1), bb.GetTupleElement(s, 2)
	sub := g.nestedGraph(bb, v, u)
	v1 := sub.coerce(x.Shape)
	u1 := u
	if g.r.next()&1 == 1 {
		u1 = sub.coerce(w.Shape)
	}
	body, err := bb.BuildComputation(bb.Tuple(i1, v1, u1))
	if err != nil {
		*g.err = err
		return nil
	}

	b := g.b
	loop := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, w))
	out := g.push(b.GetTupleElement(loop, 1))
	if g.r.next()&1 == 1 {
		out = g.push(b.GetTupleElement(loop, 2))
	}
	return out
}

// conditional calls a computation, or picks one of two or three branches, each a few random steps from its
// own argument to a value of x's shape, by a pred or an s32 index (out of range runs
// the last branch).
func (g *graph) conditional(x *hlo.Instruction) *hlo.Instruction {
	b := g.b
	n := 1 + g.r.intn(3)
	if n == 1 {
		// A call of a computation of one or two arguments.
		args := []*hlo.Instruction{x, g.pick()}[:1+g.r.intn(2)]
		cb := hlo.NewBuilder("callee")
		var params []*hlo.Instruction
		for i, a := range args {
			params = append(params, cb.Parameter(a.Shape, fmt.Sprintf("arg%d", i)))
		}
		sub := g.nestedGraph(cb, params...)
		c, err := cb.BuildComputation(sub.coerce(x.Shape))
		if err != nil {
			*g.err = err
			return nil
		}
		return g.push(b.Call(c, args...))
	}
	var sel *hlo.Instruction
	if n == 2 && g.r.next()&1 == 1 {
		dt := []hlo.DType{hlo.F32, hlo.S32}[g.r.intn(2)]
		sel = b.Compare(g.coerce(hlo.Scalar(dt)), g.scalarConst(dt), hlo.CmpGT)
	} else {
		sel = g.coerce(hlo.Scalar(hlo.S32))
	}
	args := []*hlo.Instruction{x}
	for len(args) < n {
		args = append(args, g.pick())
	}
	var branches []*hlo.Computation
	for k, a := range args {
		bb := hlo.NewBuilder(fmt.Sprintf("branch%d", k))
		sub := g.nestedGraph(bb, bb.Parameter(a.Shape, "arg"))
		c, err := bb.BuildComputation(sub.coerce(x.Shape))
		if err != nil {
			*g.err = err
			return nil
		}
		branches = append(branches, c)
	}
	return g.push(b.Conditional(sel, branches, args))
}

// nestedGraph runs a few steps in a loop body or branch builder over vals.
func (g *graph) nestedGraph(b *hlo.Builder, vals ...*hlo.Instruction) *graph {
	sub := &graph{r: g.r, b: b, vals: vals, nested: true, reducers: g.reducers, err: g.err}
	for n := 1 + g.r.intn(maxNested); n > 0 && !g.r.done() && sub.ok(); n-- {
		sub.step()
	}
	if err := b.Err(); err != nil && *g.err == nil {
		*g.err = err
	}
	return sub
}
