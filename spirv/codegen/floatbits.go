package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/spirv"
)

// Float operations done on the encoding with integer instructions, because a device
// without denorm preservation (lavapipe: shaderDenormPreserveFloat32/64 false, and
// no float-controls execution mode in SPIR-V 1.3) flushes subnormal operands and
// results of float instructions to zero. remainder, and the exponent splits that
// log, cbrt and power start from, must see subnormals as they are.

// floatLayout is an IEEE binary format as integers of its width.
type floatLayout struct {
	width, mant, bias int
	ut, st            spirv.ID // unsigned and signed integer types of the width
}

func (k *kernel) layoutOf(x spirv.ID) floatLayout {
	w := k.m.Width(k.m.TypeOf(x))
	l := floatLayout{width: w, mant: 23, bias: 127}
	if w == 64 {
		l.mant, l.bias = 52, 1023
	}
	l.ut, l.st = k.m.TypeInt(w, false), k.m.TypeInt(w, true)
	return l
}

func (k *kernel) uc(l floatLayout, v uint64) spirv.ID { return k.m.ConstUint(l.ut, v) }

// unpack splits a finite non-zero magnitude's encoding a (sign cleared) into an
// integer significand with its leading one at bit mant and an unbiased exponent
// (i32) such that |x| = m·2^(e−mant); subnormals are normalised.
func (k *kernel) unpack(l floatLayout, a spirv.ID) (m, e spirv.ID) {
	f := k.f
	i32 := k.m.TypeI32()
	field := f.Convert(i32, f.ShrL(a, k.uc(l, uint64(l.mant))))
	frac := f.And(a, k.uc(l, 1<<l.mant-1))
	// A subnormal's leading one moves up to bit mant: shift by clz − (width−mant−1).
	shift := f.ISub(f.Bitcast(i32, k.clzOf(frac, l.width)), k.m.I32(int32(l.width-l.mant-1)))
	sub := f.Equal(field, k.m.I32(0))
	m = f.Select(sub, f.Shl(frac, f.Convert(l.ut, f.Bitcast(k.m.TypeU32(), shift))), f.Or(frac, k.uc(l, 1<<l.mant)))
	e = f.Select(sub, f.ISub(k.m.I32(1), shift), field)
	return m, f.ISub(e, k.m.I32(int32(l.bias)))
}

// clzOf counts the leading zeros of an unsigned integer of width 32 or 64, as a u32.
func (k *kernel) clzOf(v spirv.ID, width int) spirv.ID {
	f, u32 := k.f, k.m.TypeU32()
	if width == 64 {
		lo := f.Convert(u32, v)
		hi := f.Convert(u32, f.ShrL(v, k.m.ConstUint(k.m.TypeOf(v), 32)))
		return f.Select(f.Equal(hi, k.u32(0)), f.IAdd(k.u32(32), k.clz32(lo)), k.clz32(hi))
	}
	return k.clz32(v)
}

// fmod is C's fmod, exact for every pair of finite operands, subnormals included:
// with |x| = mx·2^ex and |y| = my·2^ey (integer significands), |x| mod |y| =
// (mx·2^(ex−ey) mod my)·2^ey, computed as r = mx mod my, then r = (r·2^s) mod my
// for steps s of at most width−mant−1 bits (r·2^s stays within the width), and
// re-encoded, as a subnormal where it is one. x%0, inf%y and NaN operands give NaN;
// x%inf = x. f64 needs 64-bit integers.
func (k *kernel) fmod(x, y spirv.ID) (spirv.ID, error) {
	f, m := k.f, k.m
	l := k.layoutOf(x)
	if l.width == 64 && !k.t.Int64 {
		return 0, fmt.Errorf("f64 remainder needs 64-bit integers (shaderInt64), which the target lacks")
	}
	signMask, expMask := uint64(1)<<(l.width-1), uint64(1)<<(l.width-1)-1<<l.mant
	ux, uy := f.Bitcast(l.ut, x), f.Bitcast(l.ut, y)
	ax, ay := f.And(ux, k.uc(l, signMask-1)), f.And(uy, k.uc(l, signMask-1))
	sign := f.And(ux, k.uc(l, signMask))
	// Inputs that take the loop: finite x, finite non-zero y, |x| > |y|. Others run it
	// on 2 mod 1 and take their answer from the selects below.
	loop := f.LogicalAnd(f.Less(ax, k.uc(l, expMask)), f.LogicalAnd(f.Greater(ay, k.uc(l, 0)), f.Less(ay, k.uc(l, expMask))))
	loop = f.LogicalAnd(loop, f.Greater(ax, ay))
	one := k.uc(l, uint64(l.bias)<<l.mant)
	mx, ex := k.unpack(l, f.Select(loop, ax, k.uc(l, uint64(l.bias+1)<<l.mant)))
	my, ey := k.unpack(l, f.Select(loop, ay, one))
	step := int32(l.width - l.mant - 1)
	r := k.variable(l.ut, f.Rem(mx, my), "fmod_r")
	d := k.variable(m.TypeI32(), f.ISub(ex, ey), "fmod_d")
	// Exponents differ by at most the whole range, subnormals included.
	bound := int64((2*l.bias+l.mant)/int(step) + 1)
	k.countLoop(bound, func() {
		f.While(func() spirv.ID { return f.Greater(f.Load(d), m.I32(0)) }, func() {
			dv := f.Load(d)
			s := f.GLSL(spirv.GLSLSMin, dv, m.I32(step))
			f.Store(r, f.Rem(f.Shl(f.Load(r), f.Convert(l.ut, f.Bitcast(m.TypeU32(), s))), my))
			f.Store(d, f.ISub(dv, s))
		})
	})
	res := f.Or(sign, k.pack(l, f.Load(r), ey))
	res = f.Select(f.GreaterEqual(ay, ax), ux, res) // |x| < |y|: x; |x| = |y|: ±0 below
	res = f.Select(f.Equal(ax, ay), sign, res)
	nan := f.LogicalOr(f.GreaterEqual(ax, k.uc(l, expMask)), f.LogicalOr(f.Equal(ay, k.uc(l, 0)), f.Greater(ay, k.uc(l, expMask))))
	res = f.Select(f.Equal(ay, k.uc(l, expMask)), ux, res) // x % ±inf = x (a NaN x stays NaN)
	res = f.Select(nan, k.uc(l, expMask|1<<(l.mant-1)), res)
	return f.Bitcast(m.TypeOf(x), res), nil
}

// pack encodes r·2^(e−mant) (r an integer below 2^(mant+1), the value exactly
// representable) as a magnitude's bits: normal, subnormal or zero.
func (k *kernel) pack(l floatLayout, r, e spirv.ID) spirv.ID {
	f, m := k.f, k.m
	i32, u32 := m.TypeI32(), m.TypeU32()
	toShift := func(v spirv.ID) spirv.ID { return f.Convert(l.ut, f.Bitcast(u32, v)) }
	lz := f.ISub(f.Bitcast(i32, k.clzOf(r, l.width)), m.I32(int32(l.width-l.mant-1)))
	be := f.IAdd(f.ISub(e, lz), m.I32(int32(l.bias))) // biased exponent once normalised
	normal := f.Or(f.Shl(f.Convert(l.ut, f.Bitcast(u32, be)), k.uc(l, uint64(l.mant))),
		f.And(f.Shl(r, toShift(lz)), k.uc(l, 1<<l.mant-1)))
	// A subnormal's field is r·2^(e+bias−1): a left or an (exact) right shift.
	eb := f.ISub(f.IAdd(e, m.I32(int32(l.bias))), m.I32(1))
	sub := f.Select(f.GreaterEqual(eb, m.I32(0)), f.Shl(r, toShift(f.GLSL(spirv.GLSLSMax, eb, m.I32(0)))),
		f.ShrL(r, toShift(f.GLSL(spirv.GLSLSMin, f.SNegate(eb), m.I32(int32(l.width-1))))))
	v := f.Select(f.GreaterEqual(be, m.I32(1)), normal, sub)
	return f.Select(f.Equal(r, k.uc(l, 0)), k.uc(l, 0), v)
}

// splitFloat is x = mant·2^e for a finite non-zero x, mant a float of x's type in
// [1, 2) and e an i32, taken from the encoding (subnormals normalised). Zero, inf
// and NaN give meaningless parts; callers select their answers.
func (k *kernel) splitFloat(x spirv.ID) (mant, e spirv.ID) {
	f := k.f
	l := k.layoutOf(x)
	mi, e := k.unpack(l, k.absBits(x))
	bits := f.Or(f.And(mi, k.uc(l, 1<<l.mant-1)), k.uc(l, uint64(l.bias)<<l.mant))
	return f.Bitcast(k.m.TypeOf(x), bits), e
}

// scaleTinyPair multiplies a and b by 2^bias when both are below 2^(−bias/2) (on
// the encoding, exactly): their ratio is kept and subnormals become normal numbers
// that float instructions see as they are (atan2 of two subnormals).
func (k *kernel) scaleTinyPair(a, b spirv.ID) (spirv.ID, spirv.ID) {
	f := k.f
	l := k.layoutOf(a)
	lim := k.uc(l, uint64(l.bias-l.bias/2)<<l.mant) // the encoding of 2^(−bias/2)
	aa, ab := k.absBits(a), k.absBits(b)
	tiny := f.LogicalAnd(f.Less(aa, lim), f.Less(ab, lim))
	scale := func(v, av spirv.ID) spirv.ID {
		mi, e := k.unpack(l, av)
		sign := f.And(f.Bitcast(l.ut, v), k.uc(l, 1<<(l.width-1)))
		scaled := f.Bitcast(k.m.TypeOf(v), f.Or(sign, k.pack(l, mi, f.IAdd(e, k.m.I32(int32(l.bias))))))
		return f.Select(tiny, scaled, v)
	}
	return scale(a, aa), scale(b, ab)
}

// scaleDown32 is v·2^-s for a positive normal f32 v whose product is below 2^-126,
// rounded to nearest even into the subnormal range on the encoding, where a float
// multiply or ldexp may flush it: v = m·2^(E−150) (m with its implicit bit), so the
// subnormal field m·2^(E−1−s) is m shifted right by s+1−E. A carry into bit 23
// gives the smallest normal number, as the encoding does; shifts past 24 give 0.
func (k *kernel) scaleDown32(v spirv.ID, s uint32) spirv.ID {
	f := k.f
	b := f.Bitcast(k.m.TypeU32(), v)
	e := f.ShrL(b, k.u32(23))
	m := f.Or(f.And(b, k.u32(0x7fffff)), k.u32(0x800000))
	shift := f.ISub(k.u32(s+1), f.GLSL(spirv.GLSLUMin, e, k.u32(s)))
	shift = f.GLSL(spirv.GLSLUMin, shift, k.u32(31))
	return f.Bitcast(k.m.TypeOf(v), k.roundShift(m, shift))
}
