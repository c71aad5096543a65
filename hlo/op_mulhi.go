package hlo

import (
	"fmt"
	"math/bits"
)

// mulhi(x, y) is the high half of the double-width product of two integers of one
// type (XLA's MulHi): for w-bit x and y, (x·y) >> w computed without overflow,
// signed for signed types, unsigned for unsigned ones. MulHiExpander lowers it to
// ops code generation has: a product in the 64-bit type for types up to 32 bits,
// and 32-bit limbs (schoolbook multiplication) for the 64-bit types.

func init() {
	shapeRules[OpMulHi] = inferMulHi
}

func inferMulHi(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, y := a.operands[0], a.operands[1]
	if !x.Equal(y) {
		return Shape{}, fmt.Errorf("operands %v and %v differ", x, y)
	}
	if !x.DType.IsInteger() {
		return Shape{}, fmt.Errorf("operand %v is not an integer", x)
	}
	return x.Clone(), nil
}

// MulHi adds mulhi(x, y).
func (b *Builder) MulHi(x, y *Instruction) *Instruction {
	return b.emit(opSpec{op: OpMulHi, operands: ins(x, y)})
}

// MulHiBits is mulhi on the encodings of two w-bit integers: the definition the
// expansion follows and cpuref evaluates.
func MulHiBits(x, y uint64, w int, signed bool) uint64 {
	if w == 64 {
		hi, _ := bits.Mul64(x, y)
		if signed { // two's complement: x·y = ux·uy − 2^64·(x<0 ? uy : 0) − 2^64·(y<0 ? ux : 0)
			if int64(x) < 0 {
				hi -= y
			}
			if int64(y) < 0 {
				hi -= x
			}
		}
		return hi
	}
	mask := uint64(1)<<w - 1
	if signed {
		sx, sy := int64(x<<(64-w))>>(64-w), int64(y<<(64-w))>>(64-w)
		return uint64((sx*sy)>>w) & mask
	}
	return (x & mask) * (y & mask) >> w
}

func decomposeMulHi(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	x, y := args[0], args[1]
	dt, dims := x.Shape.DType, x.Shape.Dims
	signed := dt.IsSigned()
	if dt.Bits() < 64 {
		wide := map[bool]DType{true: S64, false: U64}[signed]
		p := b.Mul(b.Convert(x, wide), b.Convert(y, wide))
		shift := b.BroadcastScalar(b.ScalarConstant(wide, float64(dt.Bits())), dims...)
		if signed {
			p = b.ShiftRightArithmetic(p, shift)
		} else {
			p = b.ShiftRightLogical(p, shift)
		}
		return b.BuildComputation(b.Convert(p, dt))
	}
	ux, uy := x, y
	if signed {
		ux, uy = b.BitcastConvert(x, U64), b.BitcastConvert(y, U64)
	}
	hi := mulHiLimbs(b, ux, uy)
	if signed {
		zero := b.BroadcastScalar(b.ScalarConstant(S64, 0), dims...)
		uzero := b.BroadcastScalar(b.ScalarConstant(U64, 0), dims...)
		hi = b.Sub(hi, b.Select(b.Compare(x, zero, CmpLT), uy, uzero))
		hi = b.Sub(hi, b.Select(b.Compare(y, zero, CmpLT), ux, uzero))
		hi = b.BitcastConvert(hi, S64)
	}
	return b.BuildComputation(hi)
}

// mulHiLimbs is the high 64 bits of the 128-bit product of two u64 arrays, from
// 32-bit limbs: no partial sum overflows 64 bits.
func mulHiLimbs(b *Builder, x, y *Instruction) *Instruction {
	dims := x.Shape.Dims
	c := func(v uint64) *Instruction { return b.BroadcastScalar(b.Constant(ScalarLiteral(v)), dims...) }
	lo32, n32 := c(1<<32-1), c(32)
	xl, xh := b.And(x, lo32), b.ShiftRightLogical(x, n32)
	yl, yh := b.And(y, lo32), b.ShiftRightLogical(y, n32)
	t := b.Add(b.Mul(xh, yl), b.ShiftRightLogical(b.Mul(xl, yl), n32))
	w := b.Add(b.And(t, lo32), b.Mul(xl, yh))
	return b.Add(b.Add(b.Mul(xh, yh), b.ShiftRightLogical(t, n32)), b.ShiftRightLogical(w, n32))
}
