package cpuref

import (
	"fmt"
	"math/bits"

	"github.com/vkxla/vkxla/hlo"
)

// rng-bit-generator: the Philox4x32-10 and Threefry2x32-20 block functions of
// Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), with the
// state layout and the block-to-element order of XLA's RngBitGeneratorExpander
// (xla/service/rng_bit_generator_expander.cc over xla/client/lib/prng.cc), so that
// a program draws the bits it draws under XLA. docs/cpuref.md describes the layout;
// the expander pass builds the same bits from HLO integer ops.

// philox4x32 is Philox4x32 with 10 rounds.
func philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	const (
		m0, m1 = 0xD2511F53, 0xCD9E8D57
		w0, w1 = 0x9E3779B9, 0xBB67AE85
	)
	for round := 0; round < 10; round++ {
		hi0, lo0 := bits.Mul32(m0, ctr[0])
		hi1, lo1 := bits.Mul32(m1, ctr[2])
		ctr = [4]uint32{hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0}
		key = [2]uint32{key[0] + w0, key[1] + w1}
	}
	return ctr
}

// threefryRotations are Threefry2x32's rotation distances, by round mod 8.
var threefryRotations = [8]int{13, 15, 26, 6, 17, 29, 16, 24}

// threefry2x32 is Threefry2x32 with 20 rounds: a key injection before the first
// round and after every fourth.
func threefry2x32(x [2]uint32, key [2]uint32) [2]uint32 {
	ks := [3]uint32{key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]}
	x[0] += ks[0]
	x[1] += ks[1]
	for r := 0; r < 20; r++ {
		x[0] += x[1]
		x[1] = bits.RotateLeft32(x[1], threefryRotations[r%8])
		x[1] ^= x[0]
		if r%4 == 3 {
			s := uint32(r/4 + 1)
			x[0] += ks[s%3]
			x[1] += ks[(s+1)%3] + s
		}
	}
	return x
}

func split64(v uint64) [2]uint32 { return [2]uint32{uint32(v), uint32(v >> 32)} }

func join32(lo, hi uint32) uint64 { return uint64(lo) | uint64(hi)<<32 }

// add128 adds d to the 128-bit (lo, hi).
func add128(lo, hi, d uint64) (uint64, uint64) {
	s, carry := bits.Add64(lo, d, 0)
	return s, hi + carry
}

func evalRngBitGenerator(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	state := ops[0]
	out := hlo.NewLiteral(in.Shape.Elems[1])
	var next *hlo.Literal
	switch in.Attrs.RngAlgorithm.Effective() {
	case hlo.RngPhilox:
		next = philoxBits(state, out)
	case hlo.RngThreeFry:
		next = threefryBits(state, out)
	default:
		return nil, fmt.Errorf("unknown rng algorithm %v", in.Attrs.RngAlgorithm)
	}
	return hlo.TupleLiteral(next, out), nil
}

// philoxBits fills out and returns the new state. The key is state[0]; the 128-bit
// counter is (state[1], state[2]) for u64[3] and (state[1], state[0]) for u64[2]
// (XLA reverses the two words). Block i uses counter + i; 32-bit elements take the
// four words of block j/4 in turn, 64-bit elements the word pairs of block j/2.
// The counter advances by the blocks used; a u64[2] state keeps its low word.
func philoxBits(state, out *hlo.Literal) *hlo.Literal {
	key := split64(state.Uint64(0))
	lo, hi := state.Uint64(1), state.Uint64(0)
	if state.NumElements() == 3 {
		hi = state.Uint64(2)
	}
	n := int64(out.NumElements())
	wide := out.DType().Bits() == 64
	per := int64(4)
	if wide {
		per = 2
	}
	blocks := (n + per - 1) / per
	for b := int64(0); b < blocks; b++ {
		l, h := add128(lo, hi, uint64(b))
		w := philox4x32([4]uint32{uint32(l), uint32(l >> 32), uint32(h), uint32(h >> 32)}, key)
		for k := int64(0); k < per && b*per+k < n; k++ {
			i := int(b*per + k)
			if wide {
				out.SetBits(i, join32(w[2*k], w[2*k+1]))
			} else {
				out.SetBits(i, uint64(w[k]))
			}
		}
	}
	next := state.Clone()
	l, h := add128(lo, hi, uint64(blocks))
	next.SetUint64(1, l)
	if state.NumElements() == 3 {
		next.SetUint64(2, h)
	}
	return next
}

// threefryBits fills out and returns the new state. The key is state[0] and the
// counter state[1]. A 64-bit element at row-major index j is the block of counter
// + j, its two words low then high. 32-bit elements pair up along a split
// dimension (the first of even size, else the first largest): the elements at
// split coordinates 2i and 2i+1 are the two words of one block, whose counter
// offset is the row-major index in the shape with that dimension halved (rounded
// up). The counter advances by the blocks drawn.
func threefryBits(state, out *hlo.Literal) *hlo.Literal {
	key := split64(state.Uint64(0))
	ctr := state.Uint64(1)
	s := out.Shape()
	n := out.NumElements()
	var blocks int64
	if out.DType().Bits() == 64 {
		for j := 0; j < n; j++ {
			w := threefry2x32(split64(ctr+uint64(j)), key)
			out.SetBits(j, join32(w[0], w[1]))
		}
		blocks = int64(n)
	} else {
		split := threefrySplitDim(s)
		half := halfDims(s, split)
		blocks = hlo.MakeShape(s.DType, half...).NumElements()
		for j := 0; j < n; j++ {
			idx := unflattenIndex(int64(j), s.Dims)
			word := 0
			if split >= 0 {
				word = int(idx[split] % 2)
				idx[split] /= 2
			}
			w := threefry2x32(split64(ctr+uint64(flattenIndex(idx, half))), key)
			out.SetBits(j, uint64(w[word]))
		}
	}
	next := state.Clone()
	next.SetUint64(1, ctr+uint64(blocks))
	return next
}

// threefrySplitDim is the dimension 32-bit Threefry output pairs along: the first
// of even size, else the first of the largest size; -1 for a scalar.
func threefrySplitDim(s hlo.Shape) int {
	split := -1
	for d, n := range s.Dims {
		if n%2 == 0 {
			return d
		}
		if split < 0 || n > s.Dims[split] {
			split = d
		}
	}
	return split
}

// halfDims is s's dims with the split dimension halved, rounded up ([1] for a
// scalar).
func halfDims(s hlo.Shape, split int) []int64 {
	if split < 0 {
		return []int64{1}
	}
	half := append([]int64{}, s.Dims...)
	half[split] = (half[split] + 1) / 2
	return half
}

func unflattenIndex(i int64, dims []int64) []int64 {
	idx := make([]int64, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d] = i % dims[d]
		i /= dims[d]
	}
	return idx
}

func flattenIndex(idx, dims []int64) int64 {
	var i int64
	for d, x := range idx {
		i = i*dims[d] + x
	}
	return i
}
