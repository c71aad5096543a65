package bench

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// Row programs: softmax and layernorm over the last dim of an f32[rows, cols]
// parameter x, as frontends write them (reductions to f32[rows], broadcast back
// along the rows). Fused, each is one row kernel (docs/passes.md, "Row fusion").

// Softmax adds exp(x − max(x)) / Σ exp(x − max(x)) over the rows of x to b.
func Softmax(b *hlo.Builder, rows, cols int64) *hlo.Instruction {
	x := b.Parameter(hlo.MakeShape(hlo.F32, rows, cols), "x")
	m := b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, math.Inf(-1))},
		b.Reducer(hlo.OpMaximum, hlo.F32), []int64{1})
	e := b.Exp(b.Sub(x, b.Broadcast(m, []int64{rows, cols}, []int64{0})))
	s := b.Reduce([]*hlo.Instruction{e}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)},
		b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
	return b.Div(e, b.Broadcast(s, []int64{rows, cols}, []int64{0}))
}

// LayerNorm adds (x − mean)·rsqrt(var + 1e-5)·gamma + beta over the rows of x to
// b, with parameters x, gamma and beta (f32[cols]).
func LayerNorm(b *hlo.Builder, rows, cols int64) *hlo.Instruction {
	full := []int64{rows, cols}
	x := b.Parameter(hlo.MakeShape(hlo.F32, rows, cols), "x")
	gamma := b.Parameter(hlo.MakeShape(hlo.F32, cols), "gamma")
	beta := b.Parameter(hlo.MakeShape(hlo.F32, cols), "beta")
	add := b.Reducer(hlo.OpAdd, hlo.F32)
	zero := b.ScalarConstant(hlo.F32, 0)
	rowMean := func(v *hlo.Instruction) *hlo.Instruction {
		sum := b.Reduce([]*hlo.Instruction{v}, []*hlo.Instruction{zero}, add, []int64{1})
		return b.Div(sum, b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(cols)), rows))
	}
	xc := b.Sub(x, b.Broadcast(rowMean(x), full, []int64{0}))
	variance := rowMean(b.Mul(xc, xc))
	rstd := b.Rsqrt(b.Add(variance, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 1e-5), rows)))
	xn := b.Mul(xc, b.Broadcast(rstd, full, []int64{0}))
	return b.Add(b.Mul(xn, b.Broadcast(gamma, full, []int64{1})), b.Broadcast(beta, full, []int64{1}))
}
