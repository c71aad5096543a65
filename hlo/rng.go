package hlo

// (This file sorts after infer.go, whose init makes the shape-rule table.)

import (
	"fmt"
	"math"
	"slices"
)

// rng(a, b), distribution=rng_uniform|rng_normal draws a fresh array of the
// declared shape: uniform over [a, b) (floats and 32/64-bit integers), or normal
// with mean a and standard deviation b (floats). a and b are scalars of the
// result's type.
//
// rng-get-and-update-state(), delta=N returns the program's RNG state, a u64[2]
// 128-bit counter (element 0 the low word), and advances it by N. The state lives
// outside the program: the runtime keeps one per executable handle (docs/runtime.md)
// and cpuref takes it as an argument.
//
// rng lowers as XLA's RngExpander lowers it: a state from
// rng-get-and-update-state(delta = the result's 32-bit units), Philox4x32-10 bits
// under the fixed key RngKey through rng-bit-generator (state u64[3] = {key, low,
// high}), and the bits made values in HLO (RngValues). cpuref evaluates the same
// steps element by element, so GPU and cpuref agree bit for bit on uniform draws
// (docs/ir.md).

// RngDistribution is rng's distribution=.
type RngDistribution uint8

// The distributions.
const (
	RngUniform RngDistribution = iota
	RngNormal
)

var rngDistributionNames = [...]string{"rng_uniform", "rng_normal"}

func (d RngDistribution) String() string {
	if int(d) < len(rngDistributionNames) {
		return rngDistributionNames[d]
	}
	return fmt.Sprintf("rngdistribution(%d)", uint8(d))
}

// ParseRngDistribution maps rng_uniform and rng_normal to a distribution, in any
// case (as XLA's parser does).
func ParseRngDistribution(s string) (RngDistribution, error) {
	if i := matchEnum(rngDistributionNames[:], s, true); i >= 0 {
		return RngDistribution(i), nil
	}
	return 0, fmt.Errorf("unknown rng distribution %q (want rng_uniform or rng_normal)", s)
}

// RngKey is the Philox key of every rng draw. Streams differ by their counter
// ranges (each rng-get-and-update-state takes its own), not by key; XLA picks a
// random key per rng, which would make a compiled program's draws unrepeatable.
const RngKey uint64 = 0x243F6A8885A308D3 // π's fraction: a nothing-up-my-sleeve number

// RngTypes are the element types rng draws uniformly; rng_normal takes the float
// ones.
var RngTypes = []DType{F16, BF16, F32, F64, S32, S64, U32, U64}

// RngStateShape is the shape of rng-get-and-update-state's result.
var RngStateShape = MakeShape(U64, 2)

// RngSeedState is the state a seed starts: the counter seed·2⁶⁴, so that streams
// of different seeds are 2⁶⁴ blocks apart.
func RngSeedState(seed uint64) [2]uint64 { return [2]uint64{0, seed} }

// AdvanceRngState adds delta to a 128-bit state {low, high}.
func AdvanceRngState(s [2]uint64, delta uint64) [2]uint64 {
	lo := s[0] + delta
	hi := s[1]
	if lo < s[0] {
		hi++
	}
	return [2]uint64{lo, hi}
}

func init() {
	shapeRules[OpRng] = inferRng
	shapeRules[OpRngGetAndUpdateState] = inferRngGetAndUpdateState
	attrCodecs["distribution"] = attrCodec{
		print: func(in *Instruction) (string, bool) { return in.Attrs.RngDistribution.String(), true },
		parse: func(p *parser, in *Instruction) error {
			return p.parseEnum(func(s string) (err error) { in.Attrs.RngDistribution, err = ParseRngDistribution(s); return })
		},
	}
	attrCodecs["delta"] = intCodec(func(a *Attributes) *int64 { return &a.RngDelta }, anyInt)
	opAttrs[OpRng] = []attrUse{req("distribution")}
	opAttrs[OpRngGetAndUpdateState] = []attrUse{req("delta")}
}

func inferRng(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	d := *a.declared
	if !d.IsArray() {
		return Shape{}, fmt.Errorf("declared shape %v is not an array", d)
	}
	dist := a.attrs.RngDistribution
	switch {
	case dist > RngNormal:
		return Shape{}, fmt.Errorf("unknown distribution %v", dist)
	case !slices.Contains(RngTypes, d.DType):
		return Shape{}, fmt.Errorf("draws %v; rng draws %v", d.DType, RngTypes)
	case dist == RngNormal && !d.DType.IsFloat():
		return Shape{}, fmt.Errorf("rng_normal draws %v; it draws floating-point types", d.DType)
	}
	for i, name := range []string{"a", "b"} {
		if x := a.operands[i]; !x.Equal(Scalar(d.DType)) {
			return Shape{}, fmt.Errorf("operand %d (%s) is %v, want %v[] (a scalar of the result's type)", i, name, x, d.DType)
		}
	}
	return d.Clone(), nil
}

func inferRngGetAndUpdateState(a *shapeArgs) (Shape, error) {
	if a.attrs.RngDelta < 0 {
		return Shape{}, fmt.Errorf("delta=%d is negative", a.attrs.RngDelta)
	}
	return RngStateShape.Clone(), nil
}

// Rng adds rng(a, b), distribution=dist, drawing an array of shape s.
func (b *Builder) Rng(lo, hi *Instruction, dist RngDistribution, s Shape) *Instruction {
	out := s.Clone()
	return b.emit(opSpec{op: OpRng, operands: ins(lo, hi), attrs: Attributes{RngDistribution: dist},
		result: func([]Shape) Shape { return out }})
}

// RngGetAndUpdateState adds rng-get-and-update-state(), delta=delta.
func (b *Builder) RngGetAndUpdateState(delta int64) *Instruction {
	return b.emit(opSpec{op: OpRngGetAndUpdateState, attrs: Attributes{RngDelta: delta}})
}

// RngComputeType is the type rng computes a draw of dt in: f16 and bf16 draw in
// f32 and round (as XLA's RngExpander).
func RngComputeType(dt DType) DType {
	if dt == F16 || dt == BF16 {
		return F32
	}
	return dt
}

// RngStateDelta is how far an instruction advances the RNG state: delta= of
// rng-get-and-update-state, and for rng the 32-bit units of its draw (in its
// compute type), as XLA's RngExpander asks; 0 for other ops.
func RngStateDelta(in *Instruction) int64 {
	switch in.Op {
	case OpRngGetAndUpdateState:
		return in.Attrs.RngDelta
	case OpRng:
		return in.Shape.NumElements() * int64(RngComputeType(in.Shape.DType).Bits()/32)
	}
	return 0
}

// decomposeRng is rng as XLA's RngExpander writes it: the state from
// rng-get-and-update-state, Philox bits under RngKey, the bits made values.
func decomposeRng(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	ct := RngComputeType(in.Shape.DType)
	lo, hi := args[0], args[1]
	if ct != in.Shape.DType {
		lo, hi = b.Convert(lo, ct), b.Convert(hi, ct)
	}
	state := b.Concatenate(0, b.Reshape(b.Constant(ScalarLiteral(RngKey)), 1), b.RngGetAndUpdateState(RngStateDelta(in)))
	r := &rngValues{b: b, state: state, lo: lo, hi: hi, shape: MakeShape(ct, in.Shape.Dims...)}
	var v *Instruction
	switch {
	case in.Attrs.RngDistribution == RngNormal:
		v = r.normal()
	case ct.IsFloat():
		v = r.uniformFloat(r.unit(r.shape.Dims))
	default:
		v = r.uniformInt()
	}
	if ct != in.Shape.DType {
		v = b.Convert(v, in.Shape.DType)
	}
	if in.Attrs.RngDistribution == RngUniform && ct.IsFloat() {
		v = belowB(b, v, args[0], args[1])
	}
	return b.BuildComputation(v)
}

// belowB keeps a uniform float draw in [a, b): rounding (of a + u·(b − a), or to
// f16 and bf16) can carry a value to b itself, and such an element is a instead
// (every element is a when b ≤ a).
func belowB(b *Builder, v, lo, hi *Instruction) *Instruction {
	dims := v.Shape.Dims
	return b.Select(b.Compare(v, b.BroadcastScalar(hi, dims...), CmpLT), v, b.BroadcastScalar(lo, dims...))
}

// rngValues builds one rng's values from Philox bits.
type rngValues struct {
	b      *Builder
	state  *Instruction // u64[3]: {RngKey, counter low, counter high}
	lo, hi *Instruction // a and b, scalars of the compute type
	shape  Shape        // the draw in the compute type
}

// RngBitsType is the unsigned type of the bits a value of dt is made from.
func RngBitsType(dt DType) DType {
	if dt.Bits() == 64 {
		return U64
	}
	return U32
}

func (r *rngValues) like(s *Instruction, dims []int64) *Instruction {
	return r.b.BroadcastScalar(s, dims...)
}

func (r *rngValues) scalar(dt DType, v float64) *Instruction { return r.b.ScalarConstant(dt, v) }

// bits draws Philox bits of the compute type's width, of the given dims.
func (r *rngValues) bits(dims []int64) *Instruction {
	s := MakeShape(RngBitsType(r.shape.DType), dims...)
	return r.b.GetTupleElement(r.b.RngBitGenerator(r.state, RngPhilox, s), 1)
}

// unit is a draw uniform on [0, 1): the top mantissa-width bits, scaled (XLA's
// ConvertRandomBitsToUniformFloatingPoint).
func (r *rngValues) unit(dims []int64) *Instruction {
	b, dt := r.b, r.shape.DType
	bt := RngBitsType(dt)
	_, mant := FloatFormat(dt)
	top := b.ShiftRightLogical(r.bits(dims), r.like(b.ScalarConstant(bt, float64(int64(dt.Bits())-mant)), dims))
	return b.Mul(b.Convert(top, dt), r.like(r.scalar(dt, math.Ldexp(1, -int(mant))), dims))
}

// uniformFloat scales a unit draw to a + u·(b − a) (belowB then keeps it below b).
func (r *rngValues) uniformFloat(u *Instruction) *Instruction {
	b, dims := r.b, r.shape.Dims
	return b.Add(b.Mul(u, r.like(b.Sub(r.hi, r.lo), dims)), r.like(r.lo, dims))
}

// uniformInt is a + (bits mod (b − a)) in the unsigned type of the width, added in
// two halves as XLA does (so that a signed sum cannot overflow on the way); every
// element is a when b ≤ a.
func (r *rngValues) uniformInt() *Instruction {
	b, dt, dims := r.b, r.shape.DType, r.shape.Dims
	ut := RngBitsType(dt)
	span := b.Sub(b.BitcastConvert(r.hi, ut), b.BitcastConvert(r.lo, ut))
	dist := b.Rem(r.bits(dims), r.like(span, dims))
	half := b.ShiftRightLogical(dist, r.like(b.ScalarConstant(ut, 1), dims))
	lo := r.like(r.lo, dims)
	v := b.Add(b.Add(lo, b.BitcastConvert(half, dt)), b.BitcastConvert(b.Sub(dist, half), dt))
	return b.Select(r.like(b.Compare(r.lo, r.hi, CmpLT), dims), v, lo)
}

// normal is mean + stddev·z, z from the Box–Muller transform of unit draws paired
// along a split dimension as XLA pairs them (NormalFloatingPointDistribution): the
// draw has shape dims with the split dimension d made ⌈d/2⌉ followed by a new
// dimension of 2; the pair's first elements give the sines, the second the
// cosines, interleaved back along d.
func (r *rngValues) normal() *Instruction {
	b, dt, dims := r.b, r.shape.DType, r.shape.Dims
	split := threefrySplitDim(dims)
	var half, pair []int64
	at := 0 // the pair dimension
	if split < 0 {
		half, pair = []int64{1}, []int64{2}
	} else {
		at = split + 1
		half = slices.Clone(dims)
		half[split] = (dims[split] + 1) / 2
		half = slices.Insert(half, at, 1)
		pair = slices.Clone(half)
		pair[at] = 2
	}
	u := r.unit(pair)
	ones := make([]int64, len(half))
	for i := range ones {
		ones[i] = 1
	}
	second := make([]int64, len(half))
	second[at] = 1
	x0 := b.Slice(u, make([]int64, len(half)), half, ones)
	x1 := b.Slice(u, second, pair, ones)
	// Box–Muller with XLA's constants: 1e-7 as an f32 value, 2π in the type.
	u1 := b.Max(x0, r.like(r.scalar(dt, float64(float32(1e-7))), half))
	v1 := b.Mul(r.like(r.scalar(dt, 2*math.Pi), half), x1)
	u2 := b.Sqrt(b.Mul(r.like(r.scalar(dt, -2), half), b.Log(u1)))
	z := r.combine(b.Mul(b.Sin(v1), u2), b.Mul(b.Cos(v1), u2), split, at)
	return b.Add(r.like(r.lo, dims), b.Mul(r.like(r.hi, dims), z))
}

// combine interleaves the two halves back into the draw's dims.
func (r *rngValues) combine(z0, z1 *Instruction, split, at int) *Instruction {
	b, dims := r.b, r.shape.Dims
	if split < 0 {
		return b.Reshape(z0)
	}
	even := slices.Clone(dims)
	even[split] = 2 * ((dims[split] + 1) / 2)
	z := b.Reshape(b.Concatenate(int64(at), z0, z1), even...)
	if even[split] == dims[split] {
		return z
	}
	strides := make([]int64, len(dims))
	for i := range strides {
		strides[i] = 1
	}
	return b.Slice(z, make([]int64, len(dims)), dims, strides)
}

// RngStateAt is the computation the rng-state pass puts in place of a
// rng-get-and-update-state whose draws start offset units into the run's state:
// its parameter is the run's state, its root that state plus offset (128-bit).
func RngStateAt(offset uint64) (*Computation, error) {
	b := NewBuilder("rng-state.at")
	st := b.Parameter(RngStateShape, "rng-state")
	if offset == 0 {
		return b.BuildComputation(st)
	}
	g := &rngBuilder{b: b, state: st}
	lo, hi := g.add128(g.word(0), g.word(1), g.u64(offset))
	return b.BuildComputation(b.Concatenate(0, b.Reshape(lo, 1), b.Reshape(hi, 1)))
}
