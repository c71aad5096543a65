package codegen

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
)

// Unary and binary elementwise ops on register values. Integer semantics follow
// cpuref (and XLA) where C leaves them undefined: arithmetic wraps, x/0 = -1, x%0 =
// x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0, shifts by at least the width give 0 (or
// the sign fill). Float maximum and minimum propagate NaN and order -0 < +0. f16 and
// bf16 results are rounded back after every op.

// exactOps return one of their operands' values (or a value exact in any float
// type), so their f16/bf16 results need no rounding.
var exactOps = map[hlo.Opcode]bool{
	hlo.OpNegate: true, hlo.OpAbs: true, hlo.OpSign: true, hlo.OpFloor: true, hlo.OpCeil: true,
	hlo.OpRoundNearestEven: true, hlo.OpMaximum: true, hlo.OpMinimum: true, hlo.OpRoundNearestAfz: true,
	hlo.OpReal: true, hlo.OpImag: true,
}

func emitUnary(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x := in.Operands[0]
	v, err := g.k.unary(in.Op, x.Shape.DType, g.emit(x, idx))
	return g.elementwiseResult(in, v, err)
}

func emitBinary(g *gen, in *hlo.Instruction, idx []spirv.ID) spirv.ID {
	x, y := in.Operands[0], in.Operands[1]
	a, b := g.emit(x, idx), g.emit(y, idx)
	v, err := g.k.binary(in.Op, x.Shape.DType, a, b)
	return g.elementwiseResult(in, v, err)
}

// elementwiseResult reports err against in, or returns v rounded to in's dtype
// (f16/bf16 are computed in f32) unless the op is exact.
func (g *gen) elementwiseResult(in *hlo.Instruction, v spirv.ID, err error) spirv.ID {
	if err != nil {
		g.fail(in, "%v", err)
		return 0
	}
	if !exactOps[in.Op] {
		v = g.k.round(v, in.Shape.DType)
	}
	return g.k.wrapNibble(v, in.Shape.DType) // s4, u4, s2, u2 compute in 32 bits
}

// unary applies a unary op to a register value of type dt.
func (k *kernel) unary(op hlo.Opcode, dt hlo.DType, x spirv.ID) (spirv.ID, error) {
	if !op.Info().Types.Allows(dt) {
		return 0, fmt.Errorf("%v does not apply to %v", op, dt)
	}
	if dt.IsComplex() {
		return k.complexUnary(op, dt, x)
	}
	if dt.IsFloat() {
		return k.floatUnary(op, dt, x)
	}
	return k.intUnary(op, dt, x)
}

func (k *kernel) floatUnary(op hlo.Opcode, dt hlo.DType, x spirv.ID) (spirv.ID, error) {
	f := k.f
	t := k.m.TypeOf(x)
	switch op {
	case hlo.OpNegate:
		return f.FNegate(x), nil
	case hlo.OpAbs:
		return f.GLSL(spirv.GLSLFAbs, x), nil
	case hlo.OpSign:
		// ±1 by sign; NaN and ±0 are returned as they are.
		s := f.Select(f.Less(x, k.m.ConstOf(t, 0)), k.m.ConstOf(t, -1), x)
		return f.Select(f.Greater(x, k.m.ConstOf(t, 0)), k.m.ConstOf(t, 1), s), nil
	case hlo.OpFloor:
		return f.GLSL(spirv.GLSLFloor, x), nil
	case hlo.OpCeil:
		return f.GLSL(spirv.GLSLCeil, x), nil
	case hlo.OpRoundNearestEven:
		return f.GLSL(spirv.GLSLRoundEven, x), nil
	case hlo.OpSqrt:
		return k.sqrt(x), nil
	case hlo.OpRsqrt:
		return f.FDiv(k.m.ConstOf(t, 1), k.sqrt(x)), nil
	case hlo.OpIsFinite:
		return f.LogicalNot(f.LogicalOr(f.IsNan(x), f.IsInf(x))), nil
	case hlo.OpRoundNearestAfz:
		return k.roundAfz(x), nil
	case hlo.OpTan:
		return f.FDiv(k.sinCos(x, false), k.sinCos(x, true)), nil
	case hlo.OpErf:
		return k.erf(x), nil
	case hlo.OpReal: // of a real number: itself
		return x, nil
	case hlo.OpImag: // of a real number: +0
		return k.m.ConstOf(t, 0), nil
	}
	return k.transcendental(op, dt, x)
}

func (k *kernel) intUnary(op hlo.Opcode, dt hlo.DType, x spirv.ID) (spirv.ID, error) {
	f, m := k.f, k.m
	t := m.TypeOf(x)
	switch op {
	case hlo.OpNegate:
		return f.SNegate(x), nil
	case hlo.OpAbs: // abs(INT_MIN) wraps to INT_MIN
		return f.Select(f.Less(x, m.ConstOf(t, 0)), f.SNegate(x), x), nil
	case hlo.OpSign:
		s := f.Select(f.Less(x, m.ConstOf(t, 0)), m.ConstInt(t, -1), m.ConstOf(t, 0))
		return f.Select(f.Greater(x, m.ConstOf(t, 0)), m.ConstOf(t, 1), s), nil
	case hlo.OpNot:
		if dt == hlo.Pred {
			return f.LogicalNot(x), nil
		}
		return f.Not(x), nil
	case hlo.OpPopcnt:
		return f.Convert(t, k.popcount(x, dt)), nil
	case hlo.OpClz:
		return f.Convert(t, k.clz(x, dt)), nil
	}
	return 0, fmt.Errorf("%v is not defined for %v", op, dt)
}

// popcount counts set bits; OpBitCount is 32-bit only in Vulkan, so narrower values
// are zero-extended and 64-bit ones split. The result is a u32.
func (k *kernel) popcount(x spirv.ID, dt hlo.DType) spirv.ID {
	f, u32 := k.f, k.m.TypeU32()
	ux := k.bitsOf(x, dt)
	if dt.Bits() == 64 {
		lo := f.Convert(u32, ux)
		hi := f.Convert(u32, f.ShrL(ux, k.m.ConstUint(k.m.TypeOf(ux), 32)))
		return f.IAdd(k.bitCount(lo), k.bitCount(hi))
	}
	return k.bitCount(f.Convert(u32, ux))
}

func (k *kernel) bitCount(x spirv.ID) spirv.ID {
	return k.f.Op(spirv.OpBitCount, k.m.TypeU32(), uint32(x))
}

// clz counts leading zeros in dt's width, as a u32.
func (k *kernel) clz(x spirv.ID, dt hlo.DType) spirv.ID {
	f, u32 := k.f, k.m.TypeU32()
	ux := k.bitsOf(x, dt)
	if dt.Bits() == 64 {
		lo := f.Convert(u32, ux)
		hi := f.Convert(u32, f.ShrL(ux, k.m.ConstUint(k.m.TypeOf(ux), 32)))
		return f.Select(f.Equal(hi, k.u32(0)), f.IAdd(k.u32(32), k.clz32(lo)), k.clz32(hi))
	}
	return f.ISub(k.clz32(f.Convert(u32, ux)), k.u32(uint32(32-dt.Bits())))
}

// clz32 is 31 - FindUMsb(x), with FindUMsb(0) = -1 giving 32.
func (k *kernel) clz32(x spirv.ID) spirv.ID {
	msb := k.f.ExtInst(k.m.TypeI32(), spirv.GLSLFindUMsb, x)
	return k.f.Bitcast(k.m.TypeU32(), k.f.ISub(k.m.I32(31), msb))
}

// binary applies a binary op to register values of type dt.
func (k *kernel) binary(op hlo.Opcode, dt hlo.DType, a, b spirv.ID) (spirv.ID, error) {
	if !op.Info().Types.Allows(dt) {
		return 0, fmt.Errorf("%v does not apply to %v", op, dt)
	}
	if dt.IsComplex() {
		return k.complexBinary(op, dt, a, b)
	}
	if dt.IsFloat() {
		return k.floatBinary(op, dt, a, b)
	}
	if dt == hlo.Pred {
		return k.predBinary(op, a, b)
	}
	return k.intBinary(op, dt, a, b)
}

// exact decorates a float result NoContraction: each HLO op rounds on its own, as
// cpuref does, even inside a fused kernel. Without it Mesa treats float arithmetic
// as inexact and reassociates across ops (0.5 + (x + y) became (0.5 + x) + y, one
// ulp off, found by FuzzDifferential), and drivers may contract a multiply and an
// add into an FMA. Inlined reducers go through here too, so every combining step
// of a reduction rounds. The GEMM keeps its own arithmetic contractible: its
// summation order differs from cpuref's anyway (within the dot tolerance).
func (k *kernel) exact(v spirv.ID) spirv.ID {
	k.m.Decorate(v, spirv.DecorationNoContraction)
	return v
}

func (k *kernel) floatBinary(op hlo.Opcode, dt hlo.DType, a, b spirv.ID) (spirv.ID, error) {
	f := k.f
	switch op {
	case hlo.OpAdd:
		return k.exact(f.FAdd(a, b)), nil
	case hlo.OpSubtract:
		return k.exact(f.FSub(a, b)), nil
	case hlo.OpMultiply:
		return k.exact(f.FMul(a, b)), nil
	case hlo.OpDivide:
		return k.exact(f.FDiv(a, b)), nil
	case hlo.OpMaximum:
		return k.floatMinMax(a, b, true), nil
	case hlo.OpMinimum:
		return k.floatMinMax(a, b, false), nil
	case hlo.OpRemainder:
		return k.fmod(a, b)
	case hlo.OpPower:
		return k.pow(dt, a, b)
	case hlo.OpAtan2:
		return k.atan2(dt, a, b)
	}
	return 0, fmt.Errorf("%v is not defined for %v", op, dt)
}

// floatMinMax is IEEE 754-2019 maximum/minimum: the first NaN operand if any, and
// -0 < +0.
func (k *kernel) floatMinMax(a, b spirv.ID, isMax bool) spirv.ID {
	f := k.f
	var pick spirv.ID
	if isMax {
		pick = f.Greater(a, b)
	} else {
		pick = f.Less(a, b)
	}
	r := f.Select(pick, a, b)
	// Equal values: only ±0 differ; max prefers the one without the sign bit.
	aNeg := k.signBit(a)
	preferA := aNeg
	if isMax {
		preferA = f.LogicalNot(aNeg)
	}
	r = f.Select(f.LogicalAnd(f.Equal(a, b), preferA), a, r)
	r = f.Select(f.IsNan(b), b, r)
	return f.Select(f.IsNan(a), a, r)
}

// sqrt pins GLSL's undefined cases: sqrt(x<0) = NaN and sqrt(±0) = ±0.
func (k *kernel) sqrt(x spirv.ID) spirv.ID {
	f := k.f
	r := f.GLSL(spirv.GLSLSqrt, x)
	r = f.Select(f.Equal(x, k.fc(x, 0)), x, r)
	return f.Select(f.Less(x, k.fc(x, 0)), k.m.ConstFloat(k.m.TypeOf(x), math.NaN()), r)
}

// signBit reports whether a float's sign bit is set (true for -0 and -NaN).
func (k *kernel) signBit(x spirv.ID) spirv.ID {
	f, m := k.f, k.m
	w := m.Width(m.TypeOf(x))
	it := m.TypeInt(w, true)
	return f.Less(f.Bitcast(it, x), m.ConstOf(it, 0))
}

// copySign returns |mag| with the sign of sgn.
func (k *kernel) copySign(mag, sgn spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(mag)
	w := m.Width(t)
	ut := m.TypeInt(w, false)
	signMask := m.ConstUint(ut, 1<<(w-1))
	bits := f.Or(f.And(f.Bitcast(ut, mag), f.Not(signMask)), f.And(f.Bitcast(ut, sgn), signMask))
	return f.Bitcast(t, bits)
}

func (k *kernel) predBinary(op hlo.Opcode, a, b spirv.ID) (spirv.ID, error) {
	f := k.f
	switch op {
	case hlo.OpAnd, hlo.OpMultiply, hlo.OpMinimum: // StableHLO: and on pred
		return f.LogicalAnd(a, b), nil
	case hlo.OpOr, hlo.OpAdd, hlo.OpMaximum: // or on pred
		return f.LogicalOr(a, b), nil
	case hlo.OpXor:
		return f.NotEqual(a, b), nil
	}
	return 0, fmt.Errorf("%v is not defined for pred", op)
}

func (k *kernel) intBinary(op hlo.Opcode, dt hlo.DType, a, b spirv.ID) (spirv.ID, error) {
	f := k.f
	switch op {
	case hlo.OpAdd:
		return f.IAdd(a, b), nil
	case hlo.OpSubtract:
		return f.ISub(a, b), nil
	case hlo.OpMultiply:
		return f.IMul(a, b), nil
	case hlo.OpAnd:
		return f.And(a, b), nil
	case hlo.OpOr:
		return f.Or(a, b), nil
	case hlo.OpXor:
		return f.Xor(a, b), nil
	case hlo.OpMaximum:
		return f.Select(f.Greater(a, b), a, b), nil
	case hlo.OpMinimum:
		return f.Select(f.Less(a, b), a, b), nil
	case hlo.OpDivide, hlo.OpRemainder:
		return k.intDivRem(op == hlo.OpDivide, dt, a, b), nil
	case hlo.OpShiftLeft, hlo.OpShiftRightLogical, hlo.OpShiftRightArithmetic:
		return k.shift(op, dt, a, b), nil
	case hlo.OpPower:
		return k.intPow(dt, a, b), nil
	}
	return 0, fmt.Errorf("%v is not defined for %v", op, dt)
}

// intDivRem divides with XLA's answers where C has none: x/0 = -1 (all bits set),
// x%0 = x, INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0. The divisor is replaced by 1 in
// those cases so the instruction itself is always defined.
func (k *kernel) intDivRem(div bool, dt hlo.DType, a, b spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(a)
	zero := f.Equal(b, m.ConstOf(t, 0))
	bad := zero
	var overflow spirv.ID
	if dt.IsSigned() {
		minInt := m.ConstInt(t, -1<<(dt.Bits()-1))
		overflow = f.LogicalAnd(f.Equal(a, minInt), f.Equal(b, m.ConstInt(t, -1)))
		bad = f.LogicalOr(zero, overflow)
	}
	safe := f.Select(bad, m.ConstOf(t, 1), b)
	if div {
		q := f.Div(a, safe) // x/1 = x = INT_MIN in the overflow case
		return f.Select(zero, m.ConstInt(t, -1), q)
	}
	r := f.Rem(a, safe) // x%1 = 0 in the overflow case
	return f.Select(zero, a, r)
}

// shift reads the amount as unsigned; amounts of at least the width give 0, or the
// sign fill for an arithmetic right shift (a shift by width-1).
func (k *kernel) shift(op hlo.Opcode, dt hlo.DType, a, b spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(a)
	w := int64(dt.Bits())
	ub := k.bitsOf(b, dt)
	ut := m.TypeOf(ub)
	big := f.GreaterEqual(ub, m.ConstUint(ut, uint64(w)))
	switch op {
	case hlo.OpShiftLeft:
		return f.Select(big, m.ConstOf(t, 0), f.Shl(a, f.Select(big, m.ConstOf(ut, 0), ub)))
	case hlo.OpShiftRightLogical:
		ua := k.bitsOf(a, dt)
		r := f.ShrL(ua, f.Select(big, m.ConstOf(ut, 0), ub))
		return f.Select(big, m.ConstOf(t, 0), k.fromBits(r, dt))
	}
	amt := f.Select(big, m.ConstUint(ut, uint64(w-1)), ub)
	sa := f.Convert(m.TypeInt(k.intWidth(dt), true), a)
	if isNibble(dt) { // u4 and u2 too: the top of their bits is the sign fill
		sa = k.signExtend(k.nibbleBits(a, dt), dt.Bits())
	}
	return f.Convert(t, f.ShrA(sa, amt))
}

// intPow is exponentiation by squaring with wrap-around; a negative exponent of a
// signed type gives 1 for base 1 and 0 otherwise (XLA).
func (k *kernel) intPow(dt hlo.DType, a, b spirv.ID) spirv.ID {
	f, m := k.f, k.m
	t := m.TypeOf(a)
	ub := k.bitsOf(b, dt)
	ut := m.TypeOf(ub)
	result := k.variable(t, m.ConstOf(t, 1), "pow_result")
	base := k.variable(t, a, "pow_base")
	e := k.variable(ut, ub, "pow_exp")
	k.countLoop(int64(dt.Bits()), func() {
		f.While(func() spirv.ID { return f.NotEqual(f.Load(e), m.ConstOf(ut, 0)) }, func() {
			ev, bv := f.Load(e), f.Load(base)
			odd := f.Equal(f.And(ev, m.ConstOf(ut, 1)), m.ConstOf(ut, 1))
			rv := f.Load(result)
			f.Store(result, f.Select(odd, f.IMul(rv, bv), rv))
			f.Store(base, f.IMul(bv, bv))
			f.Store(e, f.ShrL(ev, m.ConstOf(ut, 1)))
		})
	})
	r := f.Load(result)
	if dt.IsSigned() {
		neg := f.Less(b, m.ConstOf(t, 0))
		isOne := f.Equal(a, m.ConstOf(t, 1))
		r = f.Select(neg, f.Select(isOne, m.ConstOf(t, 1), m.ConstOf(t, 0)), r)
	}
	return r
}
