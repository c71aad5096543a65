package hlo

import "fmt"

// threefryRotations are Threefry2x32's rotation distances, by round mod 8.
var threefryRotations = [8]uint32{13, 15, 26, 6, 17, 29, 16, 24}

// Threefry2x32 adds the Threefry2x32-20 block function of Salmon et al. ("Parallel
// random numbers: as easy as 1, 2, 3", SC 2011) in u32 add, xor and shifts: the
// counter words x0, x1 (u32 arrays of one shape) encrypted under the key words k0,
// k1 (u32 scalars, or arrays of the counters' shape). It returns the two output
// words. The rng-bit-generator expander and the cu_threefry2x32 custom-call target
// build on it.
func (b *Builder) Threefry2x32(x0, x1, k0, k1 *Instruction) (*Instruction, *Instruction) {
	u32 := func(v uint32) *Instruction { return b.Constant(ScalarLiteral(v)) }
	like := func(s, x *Instruction) *Instruction {
		if s == nil || x == nil || s.Shape.Rank() == x.Shape.Rank() {
			return s
		}
		return b.BroadcastScalar(s, x.Shape.Dims...)
	}
	ks := [3]*Instruction{k0, k1, b.Xor(b.Xor(like(u32(0x1BD11BDA), k0), k0), k1)}
	x := [2]*Instruction{b.Add(x0, like(ks[0], x0)), b.Add(x1, like(ks[1], x1))}
	for r := 0; r < 20; r++ {
		rot := threefryRotations[r%8]
		x[0] = b.Add(x[0], x[1])
		left := b.ShiftLeft(x[1], like(u32(rot), x[1]))
		right := b.ShiftRightLogical(x[1], like(u32(32-rot), x[1]))
		x[1] = b.Xor(b.Or(left, right), x[0])
		if r%4 == 3 { // key injection s after every fourth round
			s := uint32(r/4 + 1)
			x[0] = b.Add(x[0], like(ks[s%3], x[0]))
			inject := ks[(s+1)%3]
			x[1] = b.Add(x[1], like(b.Add(inject, like(u32(s), inject)), x[1]))
		}
	}
	return x[0], x[1]
}

// expandThreefry2x32 is JAX's GPU threefry2x32 (cu_ and hip_, and their typed-FFI
// forms; jaxlib/gpu_prng.py lowers to it): operands k0, k1, x0, x1, u32 arrays of
// one shape; result (y0, y1), Threefry2x32-20 of (x0, x1) under (k0, k1), element
// by element. The dynamic-shape form's fifth operand (a run-time length) is
// refused: vkxla's shapes are static.
func expandThreefry2x32(b *Builder, call *Instruction, xs []*Instruction) (*Instruction, error) {
	if len(xs) != 4 {
		return nil, fmt.Errorf("threefry2x32 takes 4 operands (k0, k1, x0, x1), got %d", len(xs))
	}
	s := xs[0].Shape
	for _, x := range xs {
		if !x.Shape.Equal(s) || s.DType != U32 {
			return nil, fmt.Errorf("threefry2x32 operands must be u32 arrays of one shape, got %s", describeOperands(xs))
		}
	}
	if want := MakeTuple(s, s); !call.Shape.Equal(want) {
		return nil, fmt.Errorf("threefry2x32 result %v, want %v", call.Shape, want)
	}
	y0, y1 := b.Threefry2x32(xs[2], xs[3], xs[0], xs[1])
	return b.Tuple(y0, y1), nil
}
