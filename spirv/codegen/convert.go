package codegen

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// compare, select, clamp, convert and bitcast-convert.

func emitCompare(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x, y := in.Operands[0], in.Operands[1]
	a, b := g.emit(x, idx), g.emit(y, idx)
	if x.Shape.DType.IsComplex() {
		v, err := g.k.complexCompare(in.Attrs.Direction, a, b)
		return g.elementwiseResult(in, v, err)
	}
	return g.k.compare(in.Attrs.Direction, in.Attrs.CompareType, x.Shape.DType, a, b)
}

// compare follows cpuref: IEEE for floats (every direction false on NaN but NE),
// TOTALORDER by a signed-integer key, integers by their signedness unless the
// compare type says otherwise, pred as unsigned 0 < 1.
func (k *kernel) compare(dir hlo.ComparisonDirection, ct hlo.CompareType, dt hlo.DType, a, b spirv.ID) spirv.ID {
	f, m := k.f, k.m
	switch {
	case dt.IsFloat() && ct == hlo.CompareTotalOrder:
		a, b = k.totalOrderKey(a), k.totalOrderKey(b)
	case dt == hlo.Pred:
		a, b = f.Convert(m.TypeU32(), a), f.Convert(m.TypeU32(), b)
	case dt.IsInteger() && (ct == hlo.CompareSigned || ct == hlo.CompareUnsigned):
		t := m.TypeInt(k.intWidth(dt), ct == hlo.CompareSigned)
		a, b = f.Convert(t, a), f.Convert(t, b)
	}
	switch dir {
	case hlo.CmpEQ:
		return f.Equal(a, b)
	case hlo.CmpNE:
		return f.NotEqual(a, b)
	case hlo.CmpLT:
		return f.Less(a, b)
	case hlo.CmpLE:
		return f.LessEqual(a, b)
	case hlo.CmpGT:
		return f.Greater(a, b)
	}
	return f.GreaterEqual(a, b)
}

// totalOrderKey maps a float to a signed integer ordered like IEEE totalOrder:
// negative values get their magnitude bits flipped. f16/bf16 registers hold f32
// values, whose order is the same.
func (k *kernel) totalOrderKey(x spirv.ID) spirv.ID {
	f, m := k.f, k.m
	w := m.Width(m.TypeOf(x))
	it := m.TypeInt(w, true)
	v := f.Bitcast(it, x)
	flip := f.Xor(v, m.ConstInt(it, int64(uint64(1)<<(w-1)-1)))
	return f.Select(f.Less(v, m.ConstOf(it, 0)), flip, v)
}

func emitSelect(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	p := in.Operands[0]
	pidx := idx
	if p.Shape.IsScalar() {
		pidx = scalarIndex
	}
	c := g.emit(p, pidx)
	a, b := g.emit(in.Operands[1], idx), g.emit(in.Operands[2], idx)
	return g.k.f.Select(c, a, b)
}

// emitClamp is min(max(x, lo), hi) with the maximum/minimum semantics (NaN
// propagates); lo and hi may be scalars.
func emitClamp(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	at := func(x *hlo.Instruction) spirv.ID {
		if x.Shape.IsScalar() {
			return g.emit(x, scalarIndex)
		}
		return g.emit(x, idx)
	}
	lo, x, hi := at(in.Operands[0]), at(in.Operands[1]), at(in.Operands[2])
	dt := in.Shape.DType
	v, err := g.k.binary(hlo.OpMaximum, dt, x, lo)
	if err == nil {
		v, err = g.k.binary(hlo.OpMinimum, dt, v, hi)
	}
	if err != nil {
		g.fail(in, "%v", err)
	}
	return v
}

func emitConvert(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x := in.Operands[0]
	if from, to := x.Shape.DType, in.Shape.DType; from.IsComplex() || to.IsComplex() {
		v, err := g.k.toComplex(g.emit(x, idx), from, to)
		return g.elementwiseResult(in, v, err)
	}
	return g.k.convert(g.emit(x, idx), x.Shape.DType, in.Shape.DType)
}

// convert follows cpuref: float→int truncates toward zero, saturates, and maps NaN
// to 0; int→float and float→narrower float round to nearest even (f16/bf16 through
// f32); int→int wraps; anything→pred is x != 0 (NaN is true); pred→number is 0 or 1.
func (k *kernel) convert(v spirv.ID, from, to hlo.DType) spirv.ID {
	f, m := k.f, k.m
	rt := k.regType(to)
	switch {
	case from == to:
		return v
	case to == hlo.Pred:
		return f.NotEqual(v, m.ConstOf(m.TypeOf(v), 0)) // unordered: NaN != 0
	case from == hlo.Pred:
		return f.Select(v, m.ConstOf(rt, 1), m.ConstOf(rt, 0))
	case from == hlo.F64 && isF8(to): // one rounding, as cpuref (f8.go)
		return k.round(k.f64ToF32Odd(v), to)
	case exactInF16(from) && (to == hlo.F16 || to == hlo.F32):
		// Every value of from is an f16 (and an f32): the f32 register value needs
		// no rounding (a dequantised weight: s4 → f16 costs a shift, not a round).
		if from.IsFloat() {
			return v
		}
		return f.Convert(rt, v)
	case from.IsFloat() && to.IsFloat():
		return k.round(f.Convert(rt, v), to)
	case from.IsFloat():
		return k.floatToInt(v, to)
	case to.IsFloat():
		return k.round(f.Convert(rt, v), to)
	}
	return k.wrapNibble(f.Convert(rt, v), to)
}

// floatToInt truncates with NaN → 0 and saturation; the instruction only ever sees
// in-range values (out-of-range conversions are undefined in SPIR-V).
func (k *kernel) floatToInt(v spirv.ID, to hlo.DType) spirv.ID {
	f, m := k.f, k.m
	rt := k.regType(to)
	c := func(x float64) spirv.ID { return k.fc(v, x) }
	tv := f.GLSL(spirv.GLSLTrunc, v)
	w := float64(to.Bits())
	var lo, hi float64
	var loV, hiV spirv.ID
	if to.IsUnsigned() {
		lo, hi = 0, math.Ldexp(1, int(w))
		loV, hiV = m.ConstOf(rt, 0), m.ConstUint(rt, uint64(math.MaxUint64)>>(64-to.Bits()))
	} else {
		lo, hi = -math.Ldexp(1, int(w)-1), math.Ldexp(1, int(w)-1)
		loV, hiV = m.ConstInt(rt, -1<<(to.Bits()-1)), m.ConstInt(rt, 1<<(to.Bits()-1)-1)
	}
	tooLow, tooHigh := f.LessEqual(tv, c(lo)), f.GreaterEqual(tv, c(hi))
	nan := f.IsNan(v)
	safe := f.Select(f.LogicalOr(nan, f.LogicalOr(tooLow, tooHigh)), c(0), tv)
	r := f.Convert(rt, safe)
	r = f.Select(tooLow, loV, r)
	r = f.Select(tooHigh, hiV, r)
	return f.Select(nan, m.ConstOf(rt, 0), r)
}

// emitBitcastConvert reinterprets bits. Equal widths map element to element; a
// narrower result splits each operand element over a new minor dimension (least
// significant part first, as on a little-endian host); a wider result joins the
// operand's minor dimension.
func emitBitcastConvert(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	k, f, m := g.k, g.k.f, g.k.m
	x := in.Operands[0]
	from, to := x.Shape.DType, in.Shape.DType
	fw, tw := from.Bits(), to.Bits()
	switch {
	case fw == tw:
		return k.fromBits(k.bitsOf(g.emit(x, idx), from), to)
	case fw > tw:
		r := len(idx) - 1
		bits := k.bitsOf(g.emit(x, idx[:r]), from)
		shift := f.IMul(f.Convert(m.TypeOf(bits), idx[r]), m.ConstUint(m.TypeOf(bits), uint64(tw)))
		part := f.Convert(m.TypeInt(tw, false), f.ShrL(bits, shift))
		return k.fromBits(part, to)
	}
	n := tw / fw
	wide := m.TypeInt(tw, false)
	var acc spirv.ID
	for i := range n {
		sub := append(append([]spirv.ID{}, idx...), k.ic(int64(i)))
		part := f.Convert(wide, k.bitsOf(g.emit(x, sub), from))
		part = f.Shl(part, m.ConstUint(wide, uint64(i*fw)))
		if acc == 0 {
			acc = part
		} else {
			acc = f.Or(acc, part)
		}
	}
	return k.fromBits(acc, to)
}

// exactInF16: the types whose every value (NaN aside, which stays a NaN) f16
// holds exactly, and whose register form is an f32 or an integer: the integers of
// at most 8 bits, the 8-bit floats but f8e8m0fnu (f32's exponent range), and the
// 6- and 4-bit floats.
func exactInF16(dt hlo.DType) bool {
	switch {
	case dt.IsInteger():
		return dt.Bits() <= 8
	case dt == hlo.F8E8M0FNU:
		return false
	}
	return dt.IsFloat() && dt.Bits() <= 8
}
