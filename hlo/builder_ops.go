package hlo

import (
	"fmt"
	"math"
)

// The builder's op methods: one per opcode (elementwise ops also through Unary and
// Binary), each a thin spec over emit, which infers the shape.

func ins(xs ...*Instruction) []*Instruction { return xs }

// declaredAs returns a result function for a declared-result op: dims with the
// operand's element type (broadcast, reshape).
func declaredAs(dims []int64) func([]Shape) Shape {
	return func(s []Shape) Shape { return MakeShape(s[0].DType, dims...) }
}

// --- leaves ---

// Parameter adds the next parameter (numbered in call order) of the given shape.
func (b *Builder) Parameter(shape Shape, name string) *Instruction {
	if name == "" {
		name = fmt.Sprintf("param.%d", len(b.params))
	}
	if err := checkNesting(shape); err != nil {
		return b.fail(OpParameter, nil, err)
	}
	s := shape.Clone()
	return b.emit(opSpec{op: OpParameter, name: name,
		attrs:  Attributes{ParameterNumber: int64(len(b.params))},
		result: func([]Shape) Shape { return s }})
}

// Constant adds a constant holding lit (not copied: do not modify it afterwards).
func (b *Builder) Constant(lit *Literal) *Instruction {
	return b.emit(opSpec{op: OpConstant, attrs: Attributes{Literal: lit}})
}

// ScalarConstant adds a rank-0 constant of type dt holding v, rounded to nearest even
// for narrow floats. For integer types v must be an integer in the type's range (it
// is stored exactly up to 2^53); for pred, 0 or 1.
func (b *Builder) ScalarConstant(dt DType, v float64) *Instruction {
	if b.err != nil {
		return nil
	}
	lit, err := scalarLiteral(dt, v)
	if err != nil {
		b.err = fmt.Errorf("hlo builder %q: constant: %w", b.name, err)
		return nil
	}
	return b.Constant(lit)
}

func scalarLiteral(dt DType, v float64) (*Literal, error) {
	if !dt.IsValid() {
		return nil, fmt.Errorf("invalid element type %v", dt)
	}
	lit := NewLiteral(Scalar(dt))
	switch {
	case dt.IsFloat() || dt.IsComplex():
		lit.SetFloat64(0, v)
		return lit, nil
	case v != math.Trunc(v) || math.IsInf(v, 0):
		return nil, fmt.Errorf("%v is not a %v value", v, dt)
	case dt == Pred && v != 0 && v != 1:
		return nil, fmt.Errorf("%v is not a pred value (0 or 1)", v)
	case dt.IsUnsigned() || dt == Pred:
		lo, hi := 0.0, math.Ldexp(1, dt.Bits())
		if dt == Pred {
			hi = 2
		}
		if v < lo || v >= hi {
			return nil, fmt.Errorf("%v is out of range for %v", v, dt)
		}
		lit.SetUint64(0, uint64(v))
	default:
		half := math.Ldexp(1, dt.Bits()-1)
		if v < -half || v >= half {
			return nil, fmt.Errorf("%v is out of range for %v", v, dt)
		}
		lit.SetInt64(0, int64(v))
	}
	return lit, nil
}

// Iota adds an array of the given shape counting 0, 1, … along dimension dim.
func (b *Builder) Iota(shape Shape, dim int64) *Instruction {
	s := shape.Clone()
	return b.emit(opSpec{op: OpIota, attrs: Attributes{IotaDimension: dim},
		result: func([]Shape) Shape { return s }})
}

// --- elementwise ---

// Unary adds a unary elementwise op (KindUnary in the op table).
func (b *Builder) Unary(op Opcode, x *Instruction) *Instruction {
	if op.Info().Kind != KindUnary {
		return b.fail(op, ins(x), fmt.Errorf("%v is not a unary elementwise op", op))
	}
	return b.emit(opSpec{op: op, operands: ins(x)})
}

// Binary adds a binary elementwise op (KindBinary in the op table).
func (b *Builder) Binary(op Opcode, x, y *Instruction) *Instruction {
	if op.Info().Kind != KindBinary {
		return b.fail(op, ins(x, y), fmt.Errorf("%v is not a binary elementwise op", op))
	}
	return b.emit(opSpec{op: op, operands: ins(x, y)})
}

// fail records an error found before shape inference.
func (b *Builder) fail(op Opcode, operands []*Instruction, err error) *Instruction {
	if b.err == nil {
		b.err = fmt.Errorf("hlo builder %q: %v(%s): %w", b.name, op, describeOperands(operands), err)
	}
	return nil
}

// Negate … Clz add the unary elementwise op of the same name; the op table gives
// each one's operand types.
func (b *Builder) Negate(x *Instruction) *Instruction   { return b.Unary(OpNegate, x) }
func (b *Builder) Abs(x *Instruction) *Instruction      { return b.Unary(OpAbs, x) }
func (b *Builder) Sign(x *Instruction) *Instruction     { return b.Unary(OpSign, x) }
func (b *Builder) Exp(x *Instruction) *Instruction      { return b.Unary(OpExp, x) }
func (b *Builder) Expm1(x *Instruction) *Instruction    { return b.Unary(OpExpm1, x) }
func (b *Builder) Log(x *Instruction) *Instruction      { return b.Unary(OpLog, x) }
func (b *Builder) Log1p(x *Instruction) *Instruction    { return b.Unary(OpLog1p, x) }
func (b *Builder) Sqrt(x *Instruction) *Instruction     { return b.Unary(OpSqrt, x) }
func (b *Builder) Rsqrt(x *Instruction) *Instruction    { return b.Unary(OpRsqrt, x) }
func (b *Builder) Cbrt(x *Instruction) *Instruction     { return b.Unary(OpCbrt, x) }
func (b *Builder) Tanh(x *Instruction) *Instruction     { return b.Unary(OpTanh, x) }
func (b *Builder) Logistic(x *Instruction) *Instruction { return b.Unary(OpLogistic, x) }
func (b *Builder) Sin(x *Instruction) *Instruction      { return b.Unary(OpSin, x) }
func (b *Builder) Cos(x *Instruction) *Instruction      { return b.Unary(OpCos, x) }
func (b *Builder) Tan(x *Instruction) *Instruction      { return b.Unary(OpTan, x) }
func (b *Builder) Erf(x *Instruction) *Instruction      { return b.Unary(OpErf, x) }
func (b *Builder) Real(x *Instruction) *Instruction     { return b.Unary(OpReal, x) }
func (b *Builder) Imag(x *Instruction) *Instruction     { return b.Unary(OpImag, x) }
func (b *Builder) Floor(x *Instruction) *Instruction    { return b.Unary(OpFloor, x) }
func (b *Builder) Ceil(x *Instruction) *Instruction     { return b.Unary(OpCeil, x) }
func (b *Builder) IsFinite(x *Instruction) *Instruction { return b.Unary(OpIsFinite, x) }
func (b *Builder) Not(x *Instruction) *Instruction      { return b.Unary(OpNot, x) }
func (b *Builder) Popcnt(x *Instruction) *Instruction   { return b.Unary(OpPopcnt, x) }
func (b *Builder) Clz(x *Instruction) *Instruction      { return b.Unary(OpClz, x) }

// RoundNearestEven rounds to the nearest integer, ties to even.
func (b *Builder) RoundNearestEven(x *Instruction) *Instruction {
	return b.Unary(OpRoundNearestEven, x)
}

// RoundNearestAfz rounds to the nearest integer, ties away from zero (C's round).
func (b *Builder) RoundNearestAfz(x *Instruction) *Instruction {
	return b.Unary(OpRoundNearestAfz, x)
}

// Add … Xor add the binary elementwise op (Sub is subtract, Mul multiply, Div
// divide, Rem remainder, Max maximum, Min minimum, Pow power); both operands have
// one shape, as HLO does not broadcast implicitly.
func (b *Builder) Add(x, y *Instruction) *Instruction   { return b.Binary(OpAdd, x, y) }
func (b *Builder) Sub(x, y *Instruction) *Instruction   { return b.Binary(OpSubtract, x, y) }
func (b *Builder) Mul(x, y *Instruction) *Instruction   { return b.Binary(OpMultiply, x, y) }
func (b *Builder) Div(x, y *Instruction) *Instruction   { return b.Binary(OpDivide, x, y) }
func (b *Builder) Rem(x, y *Instruction) *Instruction   { return b.Binary(OpRemainder, x, y) }
func (b *Builder) Max(x, y *Instruction) *Instruction   { return b.Binary(OpMaximum, x, y) }
func (b *Builder) Min(x, y *Instruction) *Instruction   { return b.Binary(OpMinimum, x, y) }
func (b *Builder) Pow(x, y *Instruction) *Instruction   { return b.Binary(OpPower, x, y) }
func (b *Builder) Atan2(x, y *Instruction) *Instruction { return b.Binary(OpAtan2, x, y) }
func (b *Builder) And(x, y *Instruction) *Instruction   { return b.Binary(OpAnd, x, y) }
func (b *Builder) Or(x, y *Instruction) *Instruction    { return b.Binary(OpOr, x, y) }
func (b *Builder) Xor(x, y *Instruction) *Instruction   { return b.Binary(OpXor, x, y) }

func (b *Builder) ShiftLeft(x, y *Instruction) *Instruction { return b.Binary(OpShiftLeft, x, y) }

func (b *Builder) ShiftRightLogical(x, y *Instruction) *Instruction {
	return b.Binary(OpShiftRightLogical, x, y)
}

func (b *Builder) ShiftRightArithmetic(x, y *Instruction) *Instruction {
	return b.Binary(OpShiftRightArithmetic, x, y)
}

// Compare adds compare with the operand type's default comparison.
func (b *Builder) Compare(x, y *Instruction, dir ComparisonDirection) *Instruction {
	return b.CompareTyped(x, y, dir, CompareDefault)
}

// CompareTyped adds compare with an explicit type= (e.g. CompareTotalOrder).
func (b *Builder) CompareTyped(x, y *Instruction, dir ComparisonDirection, ct CompareType) *Instruction {
	return b.emit(opSpec{op: OpCompare, operands: ins(x, y),
		attrs: Attributes{Direction: dir, CompareType: ct}})
}

// Select picks onTrue where pred holds, else onFalse; pred is pred-typed with their
// dims, or a scalar.
func (b *Builder) Select(pred, onTrue, onFalse *Instruction) *Instruction {
	return b.emit(opSpec{op: OpSelect, operands: ins(pred, onTrue, onFalse)})
}

// Clamp limits x to [lo, hi] (XLA's operand order: min, operand, max); lo and hi
// may be scalars.
func (b *Builder) Clamp(lo, x, hi *Instruction) *Instruction {
	return b.emit(opSpec{op: OpClamp, operands: ins(lo, x, hi)})
}

// Convert converts each element to dt.
func (b *Builder) Convert(x *Instruction, dt DType) *Instruction {
	return b.emit(opSpec{op: OpConvert, operands: ins(x),
		result: func(s []Shape) Shape { return s[0].WithDType(dt) }})
}

// BitcastConvert reinterprets the bits as dt; a narrower dt adds a minor dimension,
// a wider one consumes the operand's minor dimension.
func (b *Builder) BitcastConvert(x *Instruction, dt DType) *Instruction {
	return b.emit(opSpec{op: OpBitcastConvert, operands: ins(x),
		result: func(s []Shape) Shape { return bitcastResult(s[0], dt) }})
}

// bitcastResult is the shape a bitcast of x to dt has by XLA's rule; inference then
// checks it (a wrong minor dimension is reported there).
func bitcastResult(x Shape, dt DType) Shape {
	out := x.WithDType(dt)
	inBits, outBits := x.DType.Bits(), dt.Bits()
	switch {
	case outBits == 0 || inBits == 0:
	case inBits > outBits:
		out.Dims = append(out.Dims, int64(inBits/outBits))
	case inBits < outBits && x.Rank() > 0:
		out.Dims = out.Dims[:x.Rank()-1]
	}
	return out
}
