package gomlx

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"

	"github.com/vkxla/vkxla/hlo"
)

// The elementwise ops: unary, binary (with GoMLX's implicit broadcasting of
// scalars and size-1 axes), comparisons, select, clamp and conversions.

func (b *Builder) unary(what string, op hlo.Opcode, x backends.Op) (backends.Op, error) {
	ns, err := b.nodes(what, x)
	if err != nil {
		return nil, err
	}
	return b.wrap(what, b.hb.Unary(op, ns[0].in))
}

func (b *Builder) Abs(x backends.Op) (backends.Op, error)   { return b.unary("Abs", hlo.OpAbs, x) }
func (b *Builder) Neg(x backends.Op) (backends.Op, error)   { return b.unary("Neg", hlo.OpNegate, x) }
func (b *Builder) Sign(x backends.Op) (backends.Op, error)  { return b.unary("Sign", hlo.OpSign, x) }
func (b *Builder) Exp(x backends.Op) (backends.Op, error)   { return b.unary("Exp", hlo.OpExp, x) }
func (b *Builder) Expm1(x backends.Op) (backends.Op, error) { return b.unary("Expm1", hlo.OpExpm1, x) }
func (b *Builder) Log(x backends.Op) (backends.Op, error)   { return b.unary("Log", hlo.OpLog, x) }
func (b *Builder) Log1p(x backends.Op) (backends.Op, error) { return b.unary("Log1p", hlo.OpLog1p, x) }
func (b *Builder) Sqrt(x backends.Op) (backends.Op, error)  { return b.unary("Sqrt", hlo.OpSqrt, x) }
func (b *Builder) Rsqrt(x backends.Op) (backends.Op, error) { return b.unary("Rsqrt", hlo.OpRsqrt, x) }
func (b *Builder) Tanh(x backends.Op) (backends.Op, error)  { return b.unary("Tanh", hlo.OpTanh, x) }
func (b *Builder) Sin(x backends.Op) (backends.Op, error)   { return b.unary("Sin", hlo.OpSin, x) }
func (b *Builder) Cos(x backends.Op) (backends.Op, error)   { return b.unary("Cos", hlo.OpCos, x) }
func (b *Builder) Erf(x backends.Op) (backends.Op, error)   { return b.unary("Erf", hlo.OpErf, x) }
func (b *Builder) Floor(x backends.Op) (backends.Op, error) { return b.unary("Floor", hlo.OpFloor, x) }
func (b *Builder) Ceil(x backends.Op) (backends.Op, error)  { return b.unary("Ceil", hlo.OpCeil, x) }
func (b *Builder) Clz(x backends.Op) (backends.Op, error)   { return b.unary("Clz", hlo.OpClz, x) }

func (b *Builder) Logistic(x backends.Op) (backends.Op, error) {
	return b.unary("Logistic", hlo.OpLogistic, x)
}

func (b *Builder) IsFinite(x backends.Op) (backends.Op, error) {
	return b.unary("IsFinite", hlo.OpIsFinite, x)
}

// Round rounds half to even, as GoMLX's Round (and XLA's round-nearest-even).
func (b *Builder) Round(x backends.Op) (backends.Op, error) {
	return b.unary("Round", hlo.OpRoundNearestEven, x)
}

func (b *Builder) BitCount(x backends.Op) (backends.Op, error) {
	return b.unary("BitCount", hlo.OpPopcnt, x)
}

// BitwiseNot and LogicalNot are HLO's not, on integers and on pred.
func (b *Builder) BitwiseNot(x backends.Op) (backends.Op, error) {
	return b.typedUnary("BitwiseNot", hlo.OpNot, x, dtypes.DType.IsInt)
}

func (b *Builder) LogicalNot(x backends.Op) (backends.Op, error) {
	return b.typedUnary("LogicalNot", hlo.OpNot, x, isBool)
}

func isBool(dt dtypes.DType) bool { return dt == dtypes.Bool }

func (b *Builder) typedUnary(what string, op hlo.Opcode, x backends.Op, ok func(dtypes.DType) bool) (backends.Op, error) {
	ns, err := b.nodes(what, x)
	if err != nil {
		return nil, err
	}
	if !ok(ns[0].shape.DType) {
		return nil, fmt.Errorf("vkxla backend: %s of %s: wrong element type", what, ns[0].shape)
	}
	return b.wrap(what, b.hb.Unary(op, ns[0].in))
}

// IsNaN is x != x.
func (b *Builder) IsNaN(x backends.Op) (backends.Op, error) {
	ns, err := b.nodes("IsNaN", x)
	if err != nil {
		return nil, err
	}
	if !ns[0].shape.DType.IsFloat() {
		return nil, fmt.Errorf("vkxla backend: IsNaN of %s: needs a float", ns[0].shape)
	}
	return b.wrap("IsNaN", b.hb.Compare(ns[0].in, ns[0].in, hlo.CmpNE))
}

// binary applies op to x and y after GoMLX's implicit broadcasting.
func (b *Builder) binary(what string, x, y backends.Op, apply func(x, y *hlo.Instruction) *hlo.Instruction) (backends.Op, error) {
	ns, err := b.nodes(what, x, y)
	if err != nil {
		return nil, err
	}
	l, r, err := b.broadcastPair(what, ns[0], ns[1])
	if err != nil {
		return nil, err
	}
	return b.wrap(what, apply(l, r))
}

// broadcastPair broadcasts a scalar to the other operand's dimensions, and
// size-1 axes of operands of one rank to the other's size (GoMLX's binary-op
// broadcasting: shapeinference.BinaryOp).
func (b *Builder) broadcastPair(what string, x, y *Node) (*hlo.Instruction, *hlo.Instruction, error) {
	xs, ys := x.in.Shape, y.in.Shape
	if xs.SameDims(ys) {
		return x.in, y.in, nil
	}
	switch {
	case xs.IsScalar():
		return b.hb.Broadcast(x.in, ys.Dims, nil), y.in, nil
	case ys.IsScalar():
		return x.in, b.hb.Broadcast(y.in, xs.Dims, nil), nil
	case xs.Rank() != ys.Rank():
		return nil, nil, fmt.Errorf("vkxla backend: %s: shapes %s and %s do not broadcast", what, x.shape, y.shape)
	}
	out := make([]int64, xs.Rank())
	for i := range out {
		dx, dy := xs.Dims[i], ys.Dims[i]
		if dx != dy && dx != 1 && dy != 1 {
			return nil, nil, fmt.Errorf("vkxla backend: %s: shapes %s and %s do not broadcast (axis %d)", what, x.shape, y.shape, i)
		}
		out[i] = max(dx, dy)
	}
	all := iotaInts(len(out))
	return b.broadcastInDim(x.in, out, all), b.broadcastInDim(y.in, out, all), nil
}

// broadcastInDim is XLA's BroadcastInDim: operand axis i becomes output axis
// axes[i], of the same size or broadcast from size 1. HLO's broadcast takes
// equal sizes only, so the size-1 axes that grow are reshaped away first.
func (b *Builder) broadcastInDim(x *hlo.Instruction, out []int64, axes []int64) *hlo.Instruction {
	if x == nil {
		return nil
	}
	var keepDims, keepAxes []int64
	for i, d := range x.Shape.Dims {
		if d == out[axes[i]] {
			keepDims, keepAxes = append(keepDims, d), append(keepAxes, axes[i])
		}
	}
	if len(keepDims) != x.Shape.Rank() {
		x = b.hb.Reshape(x, keepDims...)
	}
	if len(keepAxes) == len(out) && x != nil && x.Shape.SameDims(hlo.MakeShape(x.Shape.DType, out...)) {
		return x
	}
	return b.hb.Broadcast(x, out, keepAxes)
}

func iotaInts(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func (b *Builder) Add(x, y backends.Op) (backends.Op, error) { return b.binary("Add", x, y, b.hb.Add) }
func (b *Builder) Sub(x, y backends.Op) (backends.Op, error) { return b.binary("Sub", x, y, b.hb.Sub) }
func (b *Builder) Mul(x, y backends.Op) (backends.Op, error) { return b.binary("Mul", x, y, b.hb.Mul) }
func (b *Builder) Div(x, y backends.Op) (backends.Op, error) { return b.binary("Div", x, y, b.hb.Div) }
func (b *Builder) Rem(x, y backends.Op) (backends.Op, error) { return b.binary("Rem", x, y, b.hb.Rem) }
func (b *Builder) Max(x, y backends.Op) (backends.Op, error) { return b.binary("Max", x, y, b.hb.Max) }
func (b *Builder) Min(x, y backends.Op) (backends.Op, error) { return b.binary("Min", x, y, b.hb.Min) }
func (b *Builder) Pow(x, y backends.Op) (backends.Op, error) { return b.binary("Pow", x, y, b.hb.Pow) }

func (b *Builder) BitwiseAnd(x, y backends.Op) (backends.Op, error) {
	return b.binary("BitwiseAnd", x, y, b.hb.And)
}

func (b *Builder) BitwiseOr(x, y backends.Op) (backends.Op, error) {
	return b.binary("BitwiseOr", x, y, b.hb.Or)
}

func (b *Builder) BitwiseXor(x, y backends.Op) (backends.Op, error) {
	return b.binary("BitwiseXor", x, y, b.hb.Xor)
}

func (b *Builder) LogicalAnd(x, y backends.Op) (backends.Op, error) {
	return b.binary("LogicalAnd", x, y, b.hb.And)
}

func (b *Builder) LogicalOr(x, y backends.Op) (backends.Op, error) {
	return b.binary("LogicalOr", x, y, b.hb.Or)
}

func (b *Builder) LogicalXor(x, y backends.Op) (backends.Op, error) {
	return b.binary("LogicalXor", x, y, b.hb.Xor)
}

func (b *Builder) ShiftLeft(x, y backends.Op) (backends.Op, error) {
	return b.binary("ShiftLeft", x, y, b.hb.ShiftLeft)
}

func (b *Builder) ShiftRightArithmetic(x, y backends.Op) (backends.Op, error) {
	return b.binary("ShiftRightArithmetic", x, y, b.hb.ShiftRightArithmetic)
}

func (b *Builder) ShiftRightLogical(x, y backends.Op) (backends.Op, error) {
	return b.binary("ShiftRightLogical", x, y, b.hb.ShiftRightLogical)
}

// compare builds a comparison; total orders floats in IEEE total order (-NaN <
// -Inf < … < -0 < +0 < … < +Inf < NaN), as GoMLX's *TotalOrder ops.
func (b *Builder) compare(what string, x, y backends.Op, dir hlo.ComparisonDirection, total bool) (backends.Op, error) {
	return b.binary(what, x, y, func(l, r *hlo.Instruction) *hlo.Instruction {
		ct := hlo.CompareDefault
		if total && l != nil && l.Shape.DType.IsFloat() {
			ct = hlo.CompareTotalOrder
		}
		return b.hb.CompareTyped(l, r, dir, ct)
	})
}

func (b *Builder) Equal(x, y backends.Op) (backends.Op, error) {
	return b.compare("Equal", x, y, hlo.CmpEQ, false)
}

func (b *Builder) NotEqual(x, y backends.Op) (backends.Op, error) {
	return b.compare("NotEqual", x, y, hlo.CmpNE, false)
}

func (b *Builder) GreaterOrEqual(x, y backends.Op) (backends.Op, error) {
	return b.compare("GreaterOrEqual", x, y, hlo.CmpGE, false)
}

func (b *Builder) GreaterThan(x, y backends.Op) (backends.Op, error) {
	return b.compare("GreaterThan", x, y, hlo.CmpGT, false)
}

func (b *Builder) LessOrEqual(x, y backends.Op) (backends.Op, error) {
	return b.compare("LessOrEqual", x, y, hlo.CmpLE, false)
}

func (b *Builder) LessThan(x, y backends.Op) (backends.Op, error) {
	return b.compare("LessThan", x, y, hlo.CmpLT, false)
}

func (b *Builder) EqualTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("EqualTotalOrder", x, y, hlo.CmpEQ, true)
}

func (b *Builder) NotEqualTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("NotEqualTotalOrder", x, y, hlo.CmpNE, true)
}

func (b *Builder) GreaterOrEqualTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("GreaterOrEqualTotalOrder", x, y, hlo.CmpGE, true)
}

func (b *Builder) GreaterThanTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("GreaterThanTotalOrder", x, y, hlo.CmpGT, true)
}

func (b *Builder) LessOrEqualTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("LessOrEqualTotalOrder", x, y, hlo.CmpLE, true)
}

func (b *Builder) LessThanTotalOrder(x, y backends.Op) (backends.Op, error) {
	return b.compare("LessThanTotalOrder", x, y, hlo.CmpLT, true)
}

// Where selects onTrue where condition holds; scalar branches are broadcast to
// the result's dimensions (a scalar condition selects whole operands).
func (b *Builder) Where(condition, onTrue, onFalse backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Where", condition, onTrue, onFalse)
	if err != nil {
		return nil, err
	}
	c, t, f := ns[0].in, ns[1].in, ns[2].in
	dims := c.Shape.Dims
	for _, x := range []*hlo.Instruction{t, f} {
		if !x.Shape.IsScalar() {
			dims = x.Shape.Dims
		}
	}
	if len(dims) > 0 {
		if t.Shape.IsScalar() {
			t = b.hb.Broadcast(t, dims, nil)
		}
		if f.Shape.IsScalar() {
			f = b.hb.Broadcast(f, dims, nil)
		}
	}
	return b.wrap("Where", b.hb.Select(c, t, f))
}

// Clamp limits x to [lo, hi]; lo and hi are scalars or of x's shape.
func (b *Builder) Clamp(lo, x, hi backends.Op) (backends.Op, error) {
	ns, err := b.nodes("Clamp", lo, x, hi)
	if err != nil {
		return nil, err
	}
	return b.wrap("Clamp", b.hb.Clamp(ns[0].in, ns[1].in, ns[2].in))
}

// ConvertDType converts each element to dt.
func (b *Builder) ConvertDType(x backends.Op, dt dtypes.DType) (backends.Op, error) {
	ns, err := b.nodes("ConvertDType", x)
	if err != nil {
		return nil, err
	}
	h, err := hloDType(dt)
	if err != nil {
		return nil, err
	}
	return b.wrap("ConvertDType", b.hb.Convert(ns[0].in, h))
}

// Bitcast reinterprets the bits as dt (XLA's bitcast-convert).
func (b *Builder) Bitcast(x backends.Op, dt dtypes.DType) (backends.Op, error) {
	ns, err := b.nodes("Bitcast", x)
	if err != nil {
		return nil, err
	}
	h, err := hloDType(dt)
	if err != nil {
		return nil, err
	}
	return b.wrap("Bitcast", b.hb.BitcastConvert(ns[0].in, h))
}
