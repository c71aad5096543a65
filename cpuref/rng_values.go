package cpuref

import (
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// rng and rng-get-and-update-state. The state is the evaluator's (a 128-bit
// counter, EvalWithRngState); each instruction takes it and advances it by
// hlo.RngStateDelta, in evaluation order. rng draws Philox4x32-10 bits under
// hlo.RngKey from that counter (philoxBits with the state {key, low, high}) and
// makes them values step by step as XLA's RngExpander does, each step rounded as
// the HLO op it stands for rounds (the scalar functions of the elementwise
// kernels), so that rng's expansion evaluates to the same bits:
//
//   - uniform float: u = (bits >> (width − mantissa)) · 2^−mantissa in [0, 1),
//     v = u·(b − a) + a, rounded to the result type, and a where v ≥ b (rounding
//     reached b) — every value in [a, b);
//   - uniform integer: d = bits mod (b − a) in the unsigned type (bits when b = a),
//     v = (a + d>>1) + (d − d>>1), wrapping; a where b ≤ a;
//   - normal: unit draws u paired along a split dimension (XLA's pairing, see
//     hlo.decomposeRng), Box–Muller z0 = sin(2π·x1)·r, z1 = cos(2π·x1)·r with
//     r = sqrt(−2·log(max(x0, 1e−7))), then a + b·z.
//
// f16 and bf16 draw in f32 and round once at the end.

// takeRngState returns the state and advances it by delta.
func (ev *evaluator) takeRngState(delta int64) [2]uint64 {
	s := ev.rng
	ev.rng = hlo.AdvanceRngState(s, uint64(delta))
	return s
}

func evalRngGetAndUpdateState(ev *evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	s := ev.takeRngState(in.Attrs.RngDelta)
	out := hlo.NewLiteral(in.Shape)
	out.SetUint64(0, s[0])
	out.SetUint64(1, s[1])
	return out, nil
}

func evalRng(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	s := ev.takeRngState(hlo.RngStateDelta(in))
	dt := in.Shape.DType
	ct := hlo.RngComputeType(dt)
	d := &rngDraw{ct: ct, state: hlo.MustFromSlice([]int64{3}, []uint64{hlo.RngKey, s[0], s[1]}),
		lo: convertBits(ops[0].DType(), ct, ops[0].Bits(0)), hi: convertBits(ops[1].DType(), ct, ops[1].Bits(0))}
	var vals []uint64
	switch {
	case in.Attrs.RngDistribution == hlo.RngNormal:
		vals = d.normal(in.Shape.Dims)
	case ct.IsFloat():
		vals = d.uniformFloat(d.unit(in.Shape.Dims))
	default:
		vals = d.uniformInt(in.Shape.Dims)
	}
	if d.err != nil {
		return nil, d.err
	}
	out := hlo.NewLiteral(in.Shape)
	uniformFloat := in.Attrs.RngDistribution == hlo.RngUniform && dt.IsFloat()
	lo, hi := ops[0].Bits(0), toFloat(dt, ops[1].Bits(0))
	for i, v := range vals {
		v = convertBits(ct, dt, v)
		if uniformFloat && !(toFloat(dt, v) < hi) {
			v = lo // rounding reached b
		}
		out.SetBits(i, v)
	}
	return out, nil
}

// convertBits converts one float element between float types (round to nearest
// even); other types pass unchanged.
func convertBits(from, to hlo.DType, b uint64) uint64 {
	if from == to || !from.IsFloat() {
		return b
	}
	return fromFloat(to, toFloat(from, b))
}

// rngDraw is one rng's draw in its compute type ct; lo and hi are a and b.
type rngDraw struct {
	ct     hlo.DType
	state  *hlo.Literal // u64[3] {key, counter low, counter high}
	lo, hi uint64
	err    error
}

// bits draws Philox bits of ct's width for an array of the given dims.
func (d *rngDraw) bits(dims []int64) []uint64 {
	out := hlo.NewLiteral(hlo.MakeShape(hlo.RngBitsType(d.ct), dims...))
	philoxBits(d.state, out)
	bs := make([]uint64, out.NumElements())
	for i := range bs {
		bs[i] = out.Bits(i)
	}
	return bs
}

// op is the scalar function of a binary elementwise op on ct. Every op used here
// is defined on the compute types; were one not, the draw fails with d.err.
func (d *rngDraw) op(o hlo.Opcode) binaryFunc {
	f, err := binaryFor(o, d.ct)
	if err != nil {
		d.err = err
		return func(uint64, uint64) uint64 { return 0 }
	}
	return f
}

func (d *rngDraw) unary(o hlo.Opcode) unaryFunc {
	f, err := unaryFor(o, d.ct)
	if err != nil {
		d.err = err
		return func(uint64) uint64 { return 0 }
	}
	return f
}

func (d *rngDraw) constant(v float64) uint64 { return fromFloat(d.ct, v) }

// unit draws values uniform on [0, 1).
func (d *rngDraw) unit(dims []int64) []uint64 {
	_, mant := hlo.FloatFormat(d.ct)
	mul := d.op(hlo.OpMultiply)
	scale := d.constant(math.Ldexp(1, -int(mant)))
	bs := d.bits(dims)
	for i, b := range bs {
		top := b >> (uint(d.ct.Bits()) - uint(mant))
		bs[i] = mul(fromFloat(d.ct, float64(top)), scale)
	}
	return bs
}

// uniformFloat is a + u·(b − a); evalRng then replaces a value that rounding
// carried to b by a.
func (d *rngDraw) uniformFloat(us []uint64) []uint64 {
	mul, add := d.op(hlo.OpMultiply), d.op(hlo.OpAdd)
	span := d.op(hlo.OpSubtract)(d.hi, d.lo)
	for i, u := range us {
		us[i] = add(mul(u, span), d.lo)
	}
	return us
}

func (d *rngDraw) uniformInt(dims []int64) []uint64 {
	mask := widthMask(d.ct)
	span := (d.hi - d.lo) & mask
	less := d.lo < d.hi
	if d.ct.IsSigned() {
		less = signExtend(d.ct, d.lo) < signExtend(d.ct, d.hi)
	}
	bs := d.bits(dims)
	for i, b := range bs {
		if !less {
			bs[i] = d.lo
			continue
		}
		dist := b % span // span > 0 here
		half := dist >> 1
		bs[i] = (d.lo + half + (dist - half)) & mask
	}
	return bs
}

// normal is a + b·z over dims, z by Box–Muller from the unit draws of the paired
// shape (pairing).
func (d *rngDraw) normal(dims []int64) []uint64 {
	p := newPairing(dims)
	us := d.unit(p.dims)
	boxMuller := d.boxMuller()
	mul, add := d.op(hlo.OpMultiply), d.op(hlo.OpAdd)
	out := make([]uint64, hlo.MakeShape(d.ct, dims...).NumElements())
	for i := range out {
		first, second, cosine := p.at(int64(i))
		out[i] = add(d.lo, mul(d.hi, boxMuller(us[first], us[second], cosine)))
	}
	return out
}

// boxMuller gives z0 = sin(2π·x1)·r or (cosine) z1 = cos(2π·x1)·r, with
// r = sqrt(−2·log(max(x0, 1e−7))), each step rounded as its HLO op.
func (d *rngDraw) boxMuller() func(x0, x1 uint64, cosine bool) uint64 {
	mul, maxf := d.op(hlo.OpMultiply), d.op(hlo.OpMaximum)
	logf, sqrtf, sinf, cosf := d.unary(hlo.OpLog), d.unary(hlo.OpSqrt), d.unary(hlo.OpSin), d.unary(hlo.OpCos)
	tiny, twoPi, minus2 := d.constant(float64(float32(1e-7))), d.constant(2*math.Pi), d.constant(-2)
	return func(x0, x1 uint64, cosine bool) uint64 {
		r := sqrtf(mul(minus2, logf(maxf(x0, tiny))))
		v := mul(twoPi, x1)
		if cosine {
			return mul(cosf(v), r)
		}
		return mul(sinf(v), r)
	}
}

// pairing is XLA's layout of normal draws: the unit draws have dims with the
// split dimension d (the first even one, else the first largest) drawn as ⌈d/2⌉
// followed by a pair dimension of 2 ([2] for a scalar); the element at split
// coordinate j takes pair j/2, its sine at even j and its cosine at odd j.
type pairing struct {
	out, dims []int64 // the result's dims and the unit draws'
	split     int     // -1 for a scalar
}

func newPairing(out []int64) pairing {
	p := pairing{out: out, dims: []int64{2}, split: threefrySplitDim(hlo.MakeShape(hlo.F32, out...))}
	if s := p.split; s >= 0 {
		p.dims = append(append(append([]int64{}, out[:s]...), (out[s]+1)/2, 2), out[s+1:]...)
	}
	return p
}

// at gives, for the result element at flat index i, the flat indices of its
// pair's two unit draws and whether it is the pair's cosine.
func (p pairing) at(i int64) (first, second int64, cosine bool) {
	if p.split < 0 {
		return 0, 1, false
	}
	idx := unflattenIndex(i, p.out)
	j := idx[p.split]
	idx[p.split] = j / 2
	pidx := slices.Insert(idx, p.split+1, 0)
	first = flattenIndex(pidx, p.dims)
	pidx[p.split+1] = 1
	return first, flattenIndex(pidx, p.dims), j%2 == 1
}
