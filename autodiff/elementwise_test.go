package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// belowPole draws parameter values in [-1.2, 1.2], short of tan's poles at ±π/2.
func belowPole(r *rand.Rand, _ int, s hlo.Shape) *hlo.Literal { return randomLiteral(r, s, -1.2, 1.2) }

// positive draws parameter values in [0.5, 2.5] (for log, sqrt, pow bases, …).
func positive(r *rand.Rand, _ int, s hlo.Shape) *hlo.Literal {
	if !s.DType.IsFloat() {
		return nil
	}
	return randomLiteral(r, s, 0.5, 2.5)
}

func unaryCase(op hlo.Opcode, gen func(*rand.Rand, int, hlo.Shape) *hlo.Literal) fdCase {
	return fdCase{name: op.String(), params: []hlo.Shape{f64s(2, 3)}, gen: gen,
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Unary(op, ps[0]) }}
}

func binaryCase(op hlo.Opcode, gen func(*rand.Rand, int, hlo.Shape) *hlo.Literal) fdCase {
	return fdCase{name: op.String(), params: []hlo.Shape{f64s(3, 2), f64s(3, 2)}, gen: gen,
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Binary(op, ps[0], ps[1]) }}
}

func elementwiseCases(t *testing.T) []fdCase {
	return []fdCase{
		unaryCase(hlo.OpNegate, nil), unaryCase(hlo.OpAbs, nil), unaryCase(hlo.OpExp, nil),
		unaryCase(hlo.OpExpm1, nil), unaryCase(hlo.OpLog, positive), unaryCase(hlo.OpLog1p, positive),
		unaryCase(hlo.OpSqrt, positive), unaryCase(hlo.OpRsqrt, positive), unaryCase(hlo.OpCbrt, positive),
		unaryCase(hlo.OpTanh, nil), unaryCase(hlo.OpLogistic, nil), unaryCase(hlo.OpSin, nil),
		unaryCase(hlo.OpCos, nil), unaryCase(hlo.OpFloor, nil), unaryCase(hlo.OpCeil, nil),
		unaryCase(hlo.OpSign, nil), unaryCase(hlo.OpRoundNearestEven, nil), unaryCase(hlo.OpRoundNearestAfz, nil),
		unaryCase(hlo.OpTan, belowPole), unaryCase(hlo.OpErf, nil), unaryCase(hlo.OpReal, nil), unaryCase(hlo.OpImag, nil),
		binaryCase(hlo.OpAdd, nil), binaryCase(hlo.OpSubtract, nil), binaryCase(hlo.OpMultiply, nil),
		binaryCase(hlo.OpDivide, positive), binaryCase(hlo.OpRemainder, positive),
		binaryCase(hlo.OpMaximum, nil), binaryCase(hlo.OpMinimum, nil),
		binaryCase(hlo.OpPower, positive), binaryCase(hlo.OpAtan2, nil),
		{name: "select", params: []hlo.Shape{f64s(2, 3), f64s(2, 3), f64s(2, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Select(b.Compare(ps[0], b.BroadcastScalar(b.ScalarConstant(hlo.F64, 0), 2, 3), hlo.CmpGT), ps[1], ps[2])
			}},
		{name: "select scalar pred", params: []hlo.Shape{f64s(), f64s(4), f64s(4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Select(b.Compare(ps[0], b.ScalarConstant(hlo.F64, 0), hlo.CmpGT), ps[1], ps[2])
			}},
		{name: "clamp arrays", params: []hlo.Shape{f64s(6), f64s(6), f64s(6)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Clamp(ps[0], ps[1], ps[2]) }},
		{name: "clamp scalar bounds", params: []hlo.Shape{f64s(), f64s(2, 4), f64s()},
			gen: func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
				switch i {
				case 0:
					return hlo.ScalarLiteral(-0.7)
				case 2:
					return hlo.ScalarLiteral(0.9)
				}
				return nil
			},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return b.Clamp(ps[0], ps[1], ps[2]) }},
		// A quadratic of an f32 parameter: central differences are exact for it, with
		// a step (1/128) that f32 represents exactly.
		{name: "convert f32 to f64", params: []hlo.Shape{hlo.MakeShape(hlo.F32, 3)}, step: 1.0 / 128,
			gen: func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
				lit := hlo.NewLiteral(s)
				for j := range lit.NumElements() {
					lit.SetFloat64(j, float64(r.IntN(64))/16)
				}
				return lit
			},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				x := b.Convert(ps[0], hlo.F64)
				return b.Mul(x, x)
			}},
	}
}

func TestElementwiseVJP(t *testing.T) { runFD(t, elementwiseCases(t)) }
