package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// square returns the computation (x: f64[n]) -> x*x.
func squareComp(t *testing.T, n int64) *hlo.Computation {
	b := hlo.NewBuilder("square")
	x := b.Parameter(f64s(n), "x")
	c, err := b.BuildComputation(b.Mul(x, x))
	require.NoError(t, err)
	return c
}

// countedLoop returns (cond, body) of a loop over state (s32 i, f64[n] x) running
// while i < limit, with body x = sin(x) * w + x, i = i + 1 (w a loop-invariant
// state element when withW).
func countedLoop(t *testing.T, n, limit int64) (*hlo.Computation, *hlo.Computation) {
	state := hlo.MakeTuple(s32s(), f64s(n), f64s(n))
	cb := hlo.NewBuilder("cond")
	p := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(p, 0), cb.ScalarConstant(hlo.S32, float64(limit)), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("body")
	q := bb.Parameter(state, "s")
	i, x, w := bb.GetTupleElement(q, 0), bb.GetTupleElement(q, 1), bb.GetTupleElement(q, 2)
	next := bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), bb.Add(bb.Mul(bb.Sin(x), w), x), w)
	body, err := bb.BuildComputation(next)
	require.NoError(t, err)
	return cond, body
}

// nestedLoop returns (cond, body) of a 3-iteration loop over (i, x, w) whose body
// runs countedLoop's 2-iteration loop on its state, then sets x = cos(x)·w.
func nestedLoop(t *testing.T) (*hlo.Computation, *hlo.Computation) {
	innerCond, innerBody := countedLoop(t, 3, 2)
	outerCond, _ := countedLoop(t, 3, 3)
	state := hlo.MakeTuple(s32s(), f64s(3), f64s(3))
	bb := hlo.NewBuilder("outer_body")
	q := bb.Parameter(state, "s")
	i := bb.GetTupleElement(q, 0)
	inner := bb.While(innerCond, innerBody, bb.Tuple(bb.ScalarConstant(hlo.S32, 0), bb.GetTupleElement(q, 1), bb.GetTupleElement(q, 2)))
	x := bb.GetTupleElement(inner, 1)
	x = bb.Mul(bb.Cos(x), bb.GetTupleElement(q, 2))
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), x, bb.GetTupleElement(q, 2)))
	require.NoError(t, err)
	return outerCond, body
}

func controlFlowCases(t *testing.T) []fdCase {
	cases := []fdCase{
		{name: "tuple result", params: []hlo.Shape{f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				s := b.Mul(ps[0], ps[1])
				return b.Tuple(s, b.Tuple(b.Sin(ps[0]), b.Convert(ps[1], hlo.S32)), ps[1])
			}},
		{name: "get-tuple-element", params: []hlo.Shape{f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				t := b.Tuple(b.Exp(ps[0]), ps[1])
				return b.Mul(b.GetTupleElement(t, 0), b.GetTupleElement(t, 1))
			}},
		{name: "call", params: []hlo.Shape{f64s(4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Call(squareComp(t, 4), b.Sin(ps[0]))
			}},
		{name: "fusion", params: []hlo.Shape{f64s(4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Add(b.Fusion(hlo.FusionLoop, squareComp(t, 4), ps[0]), ps[0])
			}},
		{name: "conditional pred", params: []hlo.Shape{f64s(), f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				bb := hlo.NewBuilder("cosine")
				x := bb.Parameter(f64s(3), "x")
				cosine, err := bb.BuildComputation(bb.Cos(x))
				require.NoError(t, err)
				p := b.Compare(ps[0], b.ScalarConstant(hlo.F64, 0), hlo.CmpGT)
				return b.Conditional(p, []*hlo.Computation{squareComp(t, 3), cosine}, ps[1:])
			}},
		{name: "while with a static trip count", params: []hlo.Shape{f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				cond, body := countedLoop(t, 3, 4)
				w := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0], ps[1]))
				return b.GetTupleElement(w, 1)
			}},
		{name: "nested while loops", params: []hlo.Shape{f64s(3), f64s(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				cond, body := nestedLoop(t)
				return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0], ps[1])), 1)
			}},
	}
	// Each branch of the conditional explicitly (the random draws may pick one).
	for _, sel := range []float64{-1, 1} {
		c := cases[4]
		c.name = "conditional branch " + map[bool]string{true: "true", false: "false"}[sel > 0]
		c.gen = func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
			if i == 0 {
				return hlo.ScalarLiteral(sel)
			}
			return nil
		}
		cases = append(cases, c)
	}
	return cases
}

func TestControlFlowVJP(t *testing.T) { runFD(t, controlFlowCases(t)) }
