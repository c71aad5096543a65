package autodiff

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// VJP rules of the elementwise ops. Each takes the result's cotangent ct and the
// replayed operands (x, y) and result (out); the formulas are the partial
// derivatives, written with ops whose own rules exist, so that grad of grad works.

// unaryRule gives d out / d x times ct.
type unaryRule func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction

// binaryRule gives ct times the partial derivative with respect to x (wrtX) or y.
type binaryRule func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction

func unary(f unaryRule) row {
	return arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
		return []*hlo.Instruction{f(e, n.args[0], n.out, ct)}, nil
	})
}

func binary(f binaryRule) row {
	return arrayVJP(func(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
		x, y := n.args[0], n.args[1]
		grads := make([]*hlo.Instruction, 2)
		if e.needs(n, 0) {
			grads[0] = f(e, x, y, n.out, ct, true)
		}
		if e.needs(n, 1) {
			grads[1] = f(e, x, y, n.out, ct, false)
		}
		return grads, nil
	})
}

const (
	zeroPiecewise = "piecewise constant: the derivative is zero wherever it exists (as in JAX)"
	zeroNonFloat  = "the result is never floating point, so it carries no gradient"
)

func elementwiseRows() map[hlo.Opcode]row {
	return map[hlo.Opcode]row{
		hlo.OpNegate: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Negate(ct)
		}),
		hlo.OpAbs: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Sign(x))
		}),
		hlo.OpExp: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, out)
		}),
		hlo.OpExpm1: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Add(out, e.like(out, 1)))
		}),
		hlo.OpLog: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Div(ct, x)
		}),
		hlo.OpLog1p: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Div(ct, e.b.Add(x, e.like(x, 1)))
		}),
		// sqrt' = 1/(2 sqrt x): +Inf at 0, as JAX's, never NaN for a nonzero ct.
		hlo.OpSqrt: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Div(e.like(out, 0.5), out))
		}),
		// rsqrt' = -rsqrt(x)/(2x): -Inf at 0, as JAX's.
		hlo.OpRsqrt: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Mul(e.like(x, -0.5), e.b.Div(out, x)))
		}),
		hlo.OpCbrt: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Div(ct, e.b.Mul(e.like(out, 3), e.b.Mul(out, out)))
		}),
		hlo.OpTanh: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Sub(e.like(out, 1), e.b.Mul(out, out)))
		}),
		hlo.OpLogistic: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Mul(out, e.b.Sub(e.like(out, 1), out)))
		}),
		hlo.OpSin: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Cos(x))
		}),
		hlo.OpCos: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Negate(e.b.Mul(ct, e.b.Sin(x)))
		}),
		// tan' = 1 + tan².
		hlo.OpTan: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Add(e.like(out, 1), e.b.Mul(out, out)))
		}),
		// erf' = 2/√π · e^(−x²).
		hlo.OpErf: unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction {
			return e.b.Mul(ct, e.b.Mul(e.like(x, 2/math.SqrtPi), e.b.Exp(e.b.Negate(e.b.Mul(x, x)))))
		}),
		// real of a real number is the identity, imag the constant 0.
		hlo.OpReal:                 unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction { return ct }),
		hlo.OpImag:                 unary(func(e *engine, x, out, ct *hlo.Instruction) *hlo.Instruction { return e.like(x, 0) }),
		hlo.OpRoundNearestAfz:      {zero: zeroPiecewise},
		hlo.OpSign:                 {zero: zeroPiecewise},
		hlo.OpFloor:                {zero: zeroPiecewise},
		hlo.OpCeil:                 {zero: zeroPiecewise},
		hlo.OpRoundNearestEven:     {zero: zeroPiecewise},
		hlo.OpIsFinite:             {zero: zeroNonFloat},
		hlo.OpNot:                  {zero: zeroNonFloat},
		hlo.OpPopcnt:               {zero: zeroNonFloat},
		hlo.OpClz:                  {zero: zeroNonFloat},
		hlo.OpAnd:                  {zero: zeroNonFloat},
		hlo.OpOr:                   {zero: zeroNonFloat},
		hlo.OpXor:                  {zero: zeroNonFloat},
		hlo.OpShiftLeft:            {zero: zeroNonFloat},
		hlo.OpShiftRightLogical:    {zero: zeroNonFloat},
		hlo.OpShiftRightArithmetic: {zero: zeroNonFloat},
		hlo.OpCompare:              {zero: zeroNonFloat},

		hlo.OpAdd: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			return ct
		}),
		hlo.OpSubtract: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			if wrtX {
				return ct
			}
			return e.b.Negate(ct)
		}),
		hlo.OpMultiply: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			if wrtX {
				return e.b.Mul(ct, y)
			}
			return e.b.Mul(x, ct)
		}),
		hlo.OpDivide: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			if wrtX {
				return e.b.Div(ct, y)
			}
			return e.b.Negate(e.b.Div(e.b.Mul(ct, x), e.b.Mul(y, y)))
		}),
		// remainder(x, y) = x - trunc(x/y)·y.
		hlo.OpRemainder: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			if wrtX {
				return ct
			}
			q := e.b.Div(x, y)
			return e.b.Negate(e.b.Mul(ct, e.b.Mul(e.b.Sign(q), e.b.Floor(e.b.Abs(q)))))
		}),
		hlo.OpMaximum: binary(vjpMinMax),
		hlo.OpMinimum: binary(vjpMinMax),
		hlo.OpPower:   binary(vjpPower),
		// atan2(x, y): ∂x = y/(x²+y²), ∂y = -x/(x²+y²).
		hlo.OpAtan2: binary(func(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
			r := e.b.Add(e.b.Mul(x, x), e.b.Mul(y, y))
			if wrtX {
				return e.b.Div(e.b.Mul(ct, y), r)
			}
			return e.b.Negate(e.b.Div(e.b.Mul(ct, x), r))
		}),

		hlo.OpSelect:  arrayVJP(vjpSelect),
		hlo.OpClamp:   arrayVJP(vjpClamp),
		hlo.OpConvert: arrayVJP(vjpConvert),
	}
}

// vjpMinMax: the cotangent goes to the operand that is the result; on a tie each
// operand gets half (JAX's rule), so max(x, x) has derivative 1 in x.
func vjpMinMax(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
	self := x
	if !wrtX {
		self = y
	}
	wins := e.b.Compare(self, out, hlo.CmpEQ)
	tie := e.b.Compare(x, y, hlo.CmpEQ)
	share := e.b.Select(tie, e.like(ct, 0.5), e.like(ct, 1))
	return e.b.Mul(ct, e.b.Select(wins, share, e.like(ct, 0)))
}

// vjpPower: ∂x = y·x^(y-1), taken as 0 where y = 0 (so 0^0 has derivative 0, not
// NaN); ∂y = log(x)·x^y with log(x) replaced by 0 where x = 0 (so the derivative in
// y at x = 0 is 0, not NaN), as JAX's rule.
func vjpPower(e *engine, x, y, out, ct *hlo.Instruction, wrtX bool) *hlo.Instruction {
	if wrtX {
		yZero := e.b.Compare(y, e.like(y, 0), hlo.CmpEQ)
		safeY := e.b.Select(yZero, e.like(y, 1), y)
		d := e.b.Mul(safeY, e.b.Pow(x, e.b.Sub(y, e.like(y, 1))))
		return e.b.Mul(ct, e.b.Select(yZero, e.like(y, 0), d))
	}
	xZero := e.b.Compare(x, e.like(x, 0), hlo.CmpEQ)
	safeX := e.b.Select(xZero, e.like(x, 1), x)
	return e.b.Mul(ct, e.b.Mul(e.b.Log(safeX), out))
}

// vjpSelect routes the cotangent to the chosen branch; the predicate gets none.
func vjpSelect(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	p, zero := n.args[0], e.like(ct, 0)
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 1) {
		grads[1] = e.b.Select(p, ct, zero)
	}
	if e.needs(n, 2) {
		grads[2] = e.b.Select(p, zero, ct)
	}
	return grads, nil
}

// vjpClamp: clamp(lo, x, hi) = min(max(x, lo), hi), XLA's definition. x gets ct
// where lo < x < hi; lo where x < lo < hi; hi where hi < max(x, lo) (so hi wins
// when lo > hi); at the boundaries the cotangent is dropped, as JAX does. A scalar
// lo or hi sums its share over the whole array.
func vjpClamp(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x := n.args[1]
	lo, hi := e.broadcastTo(n.args[0], x.Shape), e.broadcastTo(n.args[2], x.Shape)
	zero := e.like(ct, 0)
	masked := func(cond *hlo.Instruction, bound *hlo.Instruction) *hlo.Instruction {
		g := e.b.Select(cond, ct, zero)
		if bound.Shape.Rank() == 0 && x.Shape.Rank() > 0 {
			return e.sumAll(g)
		}
		return g
	}
	grads := make([]*hlo.Instruction, 3)
	if e.needs(n, 0) {
		grads[0] = masked(e.b.And(e.b.Compare(lo, x, hlo.CmpGT), e.b.Compare(lo, hi, hlo.CmpLT)), n.args[0])
	}
	if e.needs(n, 1) {
		grads[1] = masked(e.b.And(e.b.Compare(x, lo, hlo.CmpGT), e.b.Compare(x, hi, hlo.CmpLT)), x)
	}
	if e.needs(n, 2) {
		grads[2] = masked(e.b.Compare(hi, e.b.Max(x, lo), hlo.CmpLT), n.args[2])
	}
	return grads, nil
}

// vjpConvert converts the cotangent back to the operand's type (a float operand;
// an integer operand is never active).
func vjpConvert(e *engine, n *node, ct *hlo.Instruction) ([]*hlo.Instruction, error) {
	x := n.args[0]
	if !x.Shape.DType.IsFloat() {
		return nil, fmt.Errorf("convert from %v carries no gradient", x.Shape.DType)
	}
	if x.Shape.DType == ct.Shape.DType {
		return []*hlo.Instruction{ct}, nil
	}
	return []*hlo.Instruction{e.b.Convert(ct, x.Shape.DType)}, nil
}

// broadcastTo broadcasts a scalar to shape s; an array of shape s is returned as is.
func (e *engine) broadcastTo(x *hlo.Instruction, s hlo.Shape) *hlo.Instruction {
	if x.Shape.Rank() == 0 && s.Rank() > 0 {
		return e.b.BroadcastScalar(x, s.Dims...)
	}
	return x
}

// sumAll reduces an array to a scalar sum.
func (e *engine) sumAll(x *hlo.Instruction) *hlo.Instruction {
	if x.Shape.Rank() == 0 {
		return x
	}
	dims := make([]int64, x.Shape.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return e.sum(x, dims)
}

// sum reduces x over dims with addition.
func (e *engine) sum(x *hlo.Instruction, dims []int64) *hlo.Instruction {
	dt := x.Shape.DType
	return e.b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{e.b.ScalarConstant(dt, 0)},
		e.b.Reducer(hlo.OpAdd, dt), dims)
}
