package hlo

// decomposeRngBitGenerator lowers rng-bit-generator to HLO integer ops (u32 add, xor,
// shifts; u32×u32 multiplies through u64 for Philox's high words), so that code
// generation needs nothing of its own. It draws exactly cpuref's bits: Philox4x32-10
// or Threefry2x32-20 in XLA's state layout and element order (docs/cpuref.md);
// rng_default is Philox.
func decomposeRngBitGenerator(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	g := &rngBuilder{b: b, state: args[0], out: in.Shape.Elems[1]}
	var root *Instruction
	if in.Attrs.RngAlgorithm.Effective() == RngThreeFry {
		root = g.threefry()
	} else {
		root = g.philox()
	}
	return b.BuildComputation(root)
}

// rngBuilder builds one rng-bit-generator's bits and new state.
type rngBuilder struct {
	b     *Builder
	state *Instruction // u64[2] or u64[3]
	out   Shape
}

func (g *rngBuilder) u64(v uint64) *Instruction { return g.b.Constant(ScalarLiteral(v)) }
func (g *rngBuilder) u32(v uint32) *Instruction { return g.b.Constant(ScalarLiteral(v)) }

// like broadcasts a scalar to x's dims. A nil x (the builder failed; its sticky
// error ends the expansion) gives nil.
func (g *rngBuilder) like(s, x *Instruction) *Instruction {
	if x == nil || x.Shape.Rank() == 0 {
		return s
	}
	return g.b.BroadcastScalar(s, x.Shape.Dims...)
}

// word returns state[i] as a u64[] scalar.
func (g *rngBuilder) word(i int64) *Instruction {
	return g.b.Reshape(g.b.Slice(g.state, []int64{i}, []int64{i + 1}, []int64{1}))
}

func (g *rngBuilder) lo32(x *Instruction) *Instruction {
	return g.b.Convert(g.b.And(x, g.like(g.u64(0xFFFFFFFF), x)), U32)
}

func (g *rngBuilder) hi32(x *Instruction) *Instruction {
	return g.b.Convert(g.b.ShiftRightLogical(x, g.like(g.u64(32), x)), U32)
}

// join64 is lo | hi<<32.
func (g *rngBuilder) join64(lo, hi *Instruction) *Instruction {
	b := g.b
	h := b.Convert(hi, U64)
	return b.Or(b.Convert(lo, U64), b.ShiftLeft(h, g.like(g.u64(32), h)))
}

// add128 adds d (u64, x's shape) to the 128-bit (lo, hi) scalars broadcast like d.
func (g *rngBuilder) add128(lo, hi, d *Instruction) (*Instruction, *Instruction) {
	b := g.b
	l := g.like(lo, d)
	sum := b.Add(l, d)
	carried := b.Select(b.Compare(sum, l, CmpLT), g.like(b.Add(hi, g.u64(1)), d), g.like(hi, d))
	return sum, carried
}

// asOutput reshapes the flat bits (of at least n elements) to the output shape
// and type.
func (g *rngBuilder) asOutput(flat *Instruction) *Instruction {
	b := g.b
	n := g.out.NumElements()
	if flat.Shape.Dims[0] != n {
		flat = b.Slice(flat, []int64{0}, []int64{n}, []int64{1})
	}
	bits := b.Reshape(flat, g.out.Dims...)
	if g.out.DType.IsSigned() {
		bits = b.BitcastConvert(bits, g.out.DType)
	}
	return bits
}

// interleave lays words [k][blocks] out as block 0's words, then block 1's, ….
func (g *rngBuilder) interleave(words []*Instruction) *Instruction {
	b := g.b
	blocks := words[0].Shape.Dims[0]
	cols := make([]*Instruction, len(words))
	for i, w := range words {
		cols[i] = b.Reshape(w, blocks, 1)
	}
	return b.Reshape(b.Concatenate(1, cols...), blocks*int64(len(words)))
}

func (g *rngBuilder) philox() *Instruction {
	b := g.b
	key := g.word(0)
	lo, hi := g.word(1), g.word(0) // u64[2]: XLA reverses the words
	three := g.state.Shape.Dims[0] == 3
	if three {
		hi = g.word(2)
	}
	n := g.out.NumElements()
	wide := g.out.DType.Bits() == 64
	per := int64(4)
	if wide {
		per = 2
	}
	blocks := (n + per - 1) / per
	l, h := g.add128(lo, hi, b.Iota(MakeShape(U64, blocks), 0))
	w := g.philoxRounds([4]*Instruction{g.lo32(l), g.hi32(l), g.lo32(h), g.hi32(h)}, g.lo32(key), g.hi32(key))
	var flat *Instruction
	if wide {
		flat = g.interleave([]*Instruction{g.join64(w[0], w[1]), g.join64(w[2], w[3])})
	} else {
		flat = g.interleave(w[:])
	}
	nl, nh := g.add128(lo, hi, g.u64(uint64(blocks)))
	next := []*Instruction{b.Reshape(key, 1), b.Reshape(nl, 1)}
	if three {
		next = append(next, b.Reshape(nh, 1))
	}
	return b.Tuple(b.Concatenate(0, next...), g.asOutput(flat))
}

// mulHiLo is the 64-bit product of x (u32) and k as its high and low words.
func (g *rngBuilder) mulHiLo(x *Instruction, k uint64) (*Instruction, *Instruction) {
	p := g.b.Mul(g.b.Convert(x, U64), g.like(g.u64(k), x))
	return g.hi32(p), g.lo32(p)
}

// philoxRounds is Philox4x32-10 over the counter words, with scalar key words.
func (g *rngBuilder) philoxRounds(x [4]*Instruction, k0, k1 *Instruction) [4]*Instruction {
	b := g.b
	for round := 0; round < 10; round++ {
		hi0, lo0 := g.mulHiLo(x[0], 0xD2511F53)
		hi1, lo1 := g.mulHiLo(x[2], 0xCD9E8D57)
		x = [4]*Instruction{b.Xor(b.Xor(hi1, x[1]), g.like(k0, hi1)), lo1,
			b.Xor(b.Xor(hi0, x[3]), g.like(k1, hi0)), lo0}
		k0, k1 = b.Add(k0, g.u32(0x9E3779B9)), b.Add(k1, g.u32(0xBB67AE85))
	}
	return x
}

func (g *rngBuilder) threefry() *Instruction {
	b := g.b
	key, ctr := g.word(0), g.word(1)
	k := [2]*Instruction{g.lo32(key), g.hi32(key)}
	var bits *Instruction
	var blocks int64
	if g.out.DType.Bits() == 64 {
		blocks = g.out.NumElements()
		in := g.counters(ctr, g.out.Dims)
		w := g.threefryRounds([2]*Instruction{g.lo32(in), g.hi32(in)}, k)
		bits = g.join64(w[0], w[1])
		if g.out.DType.IsSigned() {
			bits = b.BitcastConvert(bits, g.out.DType)
		}
	} else {
		bits, blocks = g.threefry32(ctr, k)
	}
	next := b.Concatenate(0, b.Reshape(key, 1), b.Reshape(b.Add(ctr, g.u64(uint64(blocks))), 1))
	return b.Tuple(next, bits)
}

// counters is ctr + the row-major index of each element of dims (u64).
func (g *rngBuilder) counters(ctr *Instruction, dims []int64) *Instruction {
	b := g.b
	if len(dims) == 0 {
		return ctr
	}
	s := MakeShape(U64, dims...)
	sum := b.BroadcastScalar(ctr, dims...)
	stride := uint64(1)
	for d := len(dims) - 1; d >= 0; d-- {
		sum = b.Add(sum, b.Mul(b.Iota(s, int64(d)), b.BroadcastScalar(g.u64(stride), dims...)))
		stride *= uint64(dims[d])
	}
	return sum
}

// threefry32 draws 32-bit bits: the two words of each block land at split
// coordinates 2i and 2i+1 (see cpuref's threefryBits).
func (g *rngBuilder) threefry32(ctr *Instruction, k [2]*Instruction) (*Instruction, int64) {
	b := g.b
	dims := g.out.Dims
	split := threefrySplitDim(dims)
	if split < 0 { // a scalar: one block, its first word
		in := g.counters(ctr, []int64{1})
		w := g.threefryRounds([2]*Instruction{g.lo32(in), g.hi32(in)}, k)
		return g.asOutput(w[0]), 1
	}
	half := append([]int64{}, dims...)
	half[split] = (half[split] + 1) / 2
	in := g.counters(ctr, half)
	w := g.threefryRounds([2]*Instruction{g.lo32(in), g.hi32(in)}, k)
	withPair := append(append(append([]int64{}, half[:split+1]...), 1), half[split+1:]...)
	pairs := b.Concatenate(int64(split+1), b.Reshape(w[0], withPair...), b.Reshape(w[1], withPair...))
	even := append([]int64{}, dims...)
	even[split] = 2 * half[split]
	out := b.Reshape(pairs, even...)
	if even[split] != dims[split] {
		starts, strides := make([]int64, len(dims)), make([]int64, len(dims))
		for i := range strides {
			strides[i] = 1
		}
		out = b.Slice(out, starts, dims, strides)
	}
	if g.out.DType.IsSigned() {
		out = b.BitcastConvert(out, g.out.DType)
	}
	blocks := int64(1)
	for _, d := range half {
		blocks *= d
	}
	return out, blocks
}

// threefrySplitDim is the first even dimension, else the first largest; -1 for
// a scalar (cpuref's rule).
func threefrySplitDim(dims []int64) int {
	split := -1
	for d, n := range dims {
		if n%2 == 0 {
			return d
		}
		if split < 0 || n > dims[split] {
			split = d
		}
	}
	return split
}

// threefryRounds is Threefry2x32-20 over the counter words, with scalar key words.
func (g *rngBuilder) threefryRounds(x [2]*Instruction, key [2]*Instruction) [2]*Instruction {
	y0, y1 := g.b.Threefry2x32(x[0], x[1], key[0], key[1])
	return [2]*Instruction{y0, y1}
}
