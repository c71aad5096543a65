package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// positiveVariance draws parameter variance (index i) in [0.5, 2], the others in
// [-2, 2].
func positiveVariance(variance int) func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
	return func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal {
		if i == variance {
			return randomLiteral(r, s, 0.5, 2)
		}
		return randomLiteral(r, s, -2, 2)
	}
}

// expandedCases differentiate the ops an expander lowers through hlo.Decompose:
// batch norm in all three forms (feature dimension in the middle), custom-calls
// (an identity annotation and TopK, whose indices carry nothing) and every
// single-replica collective.
func expandedCases(t *testing.T) []fdCase {
	f := f64s
	cases := []fdCase{
		{name: "batch-norm-training", params: []hlo.Shape{f(4, 3, 2), f(3), f(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.BatchNormTraining(ps[0], ps[1], ps[2], 1e-3, 1)
			}},
		{name: "batch-norm-inference", params: []hlo.Shape{f(2, 3, 4), f(3), f(3), f(3), f(3)}, gen: positiveVariance(4),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.BatchNormInference(ps[0], ps[1], ps[2], ps[3], ps[4], 1e-3, 1)
			}},
		{name: "batch-norm-grad", params: []hlo.Shape{f(4, 3), f(3), f(3), f(3), f(4, 3)}, gen: positiveVariance(3),
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.BatchNormGrad(ps[0], ps[1], ps[2], ps[3], ps[4], 1e-3, 1)
			}},
		{name: "custom-call Sharding (identity)", params: []hlo.Shape{f(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Sin(b.CustomCall("Sharding", ps, ps[0].Shape, nil))
			}},
		{name: "custom-call TopK", params: []hlo.Shape{f(2, 5)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				out := hlo.MakeTuple(f(2, 3), hlo.MakeShape(hlo.S32, 2, 3))
				return b.CustomCall("TopK", ps, out, nil, b.Comparator(hlo.CmpGT, hlo.F64))
			}},
		// JAX's rule rounds the cotangent alike; f64's own format makes the op the
		// identity, where finite differences see its derivative.
		{name: "reduce-precision (f64's own format)", params: []hlo.Shape{f(2, 3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Sin(b.ReducePrecision(ps[0], 11, 52))
			}},
		// The draw is a + u·(b − a) (or a + b·z) for a u (z) that a and b do not
		// change: cpuref starts every evaluation at state zero, so the finite
		// differences see the same draw.
		{name: "rng uniform", params: []hlo.Shape{f(), f()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Rng(ps[0], ps[1], hlo.RngUniform, f(5))
			}},
		{name: "rng normal", params: []hlo.Shape{f(), f()},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Rng(ps[0], ps[1], hlo.RngNormal, f(3))
			}},
		{name: "opt-barrier (identity)", params: []hlo.Shape{f(2, 3), f(3)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				t := b.OptBarrier(b.Tuple(b.Sin(ps[0]), ps[1]))
				return b.Mul(b.GetTupleElement(t, 0), b.Broadcast(b.GetTupleElement(t, 1), []int64{2, 3}, []int64{1}))
			}},
	}
	return append(append(cases, collectiveFDCases()...), opsFDCases(t)...)
}

// collectiveFDCases: each collective on one replica ({{0}}).
func collectiveFDCases() []fdCase {
	one := [][]int64{{0}}
	collective := func(name string, build func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction) fdCase {
		return fdCase{name: name, params: []hlo.Shape{f64s(2, 3), f64s(4)},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return build(b, ps[0], ps[1]) }}
	}
	add := func(b *hlo.Builder) *hlo.Computation { return b.Reducer(hlo.OpAdd, hlo.F64) }
	return []fdCase{
		collective("all-reduce", func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
			return b.Collective(hlo.OpAllReduce, []*hlo.Instruction{x, y}, one, nil, add(b))
		}),
		collective("all-reduce-start/done", func(b *hlo.Builder, x, _ *hlo.Instruction) *hlo.Instruction {
			return b.AsyncDone(hlo.OpAllReduceDone, b.Collective(hlo.OpAllReduceStart, []*hlo.Instruction{x}, one, nil, add(b)))
		}),
		collective("all-gather", func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
			return b.Collective(hlo.OpAllGather, []*hlo.Instruction{x, y}, one, []int64{0}, nil)
		}),
		collective("all-gather-start/done", func(b *hlo.Builder, x, _ *hlo.Instruction) *hlo.Instruction {
			return b.AsyncDone(hlo.OpAllGatherDone, b.Collective(hlo.OpAllGatherStart, []*hlo.Instruction{x}, one, []int64{1}, nil))
		}),
		collective("reduce-scatter", func(b *hlo.Builder, x, _ *hlo.Instruction) *hlo.Instruction {
			return b.Collective(hlo.OpReduceScatter, []*hlo.Instruction{x}, one, []int64{1}, add(b))
		}),
		collective("all-to-all", func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
			return b.Collective(hlo.OpAllToAll, []*hlo.Instruction{x, y}, one, nil, nil)
		}),
		collective("collective-broadcast", func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
			return b.Collective(hlo.OpCollectiveBroadcast, []*hlo.Instruction{x, y}, one, nil, nil)
		}),
		collective("collective-permute to itself, and to nobody (zeros)", func(b *hlo.Builder, x, y *hlo.Instruction) *hlo.Instruction {
			return b.Tuple(b.CollectivePermute(hlo.OpCollectivePermute, x, [][]int64{{0, 0}}),
				b.CollectivePermute(hlo.OpCollectivePermute, y, nil))
		}),
		collective("collective-permute-start/done", func(b *hlo.Builder, x, _ *hlo.Instruction) *hlo.Instruction {
			return b.AsyncDone(hlo.OpCollectivePermuteDone, b.CollectivePermute(hlo.OpCollectivePermuteStart, x, [][]int64{{0, 0}}))
		}),
	}
}

func TestExpandedOpsVJP(t *testing.T) { runFD(t, expandedCases(t)) }

// A kernel target defined for cpuref by a Go function has no decomposition to
// differentiate: the error says so and names the call.
func TestKernelTargetWithoutDecompositionIsNotDifferentiable(t *testing.T) {
	require.NoError(t, hlo.RegisterCustomCall(hlo.CustomCallTarget{Name: "autodiff.kernel",
		Kernel: &hlo.SPIRVKernel{Words: []uint32{0x07230203, 0x00010300, 0, 1, 0}, EntryPoint: "main",
			Groups: func(*hlo.Instruction) ([3]uint32, error) { return [3]uint32{1, 1, 1}, nil }},
		Reference: func(_ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) { return ops[0].Clone(), nil }}))
	m := build(t, []hlo.Shape{f64s(2)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.Dot(b.CustomCall("autodiff.kernel", ps, f64s(2), nil), ps[0])
	})
	_, err := Grad(m, []int{0}, nil)
	require.ErrorIs(t, err, ErrNotDifferentiable)
	assert.Contains(t, err.Error(), "without an HLO decomposition")
}
