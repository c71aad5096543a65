package autodiff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

func TestTripCount(t *testing.T) {
	cond, body := countedLoop(t, 2, 7)
	b := hlo.NewBuilder("loop")
	x := b.Parameter(f64s(2), "x")
	for start, want := range map[float64]int64{0: 7, 5: 2, 7: 0, 9: 0, -3: 10} {
		w := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, start), x, x))
		require.NoError(t, b.Err())
		n, err := tripCount(w)
		require.NoError(t, err)
		assert.Equal(t, want, n, "start %v", start)
	}
	// A counter that starts at a parameter is not a compile-time trip count.
	i := b.Parameter(s32s(), "i")
	w := b.While(cond, body, b.Tuple(i, x, x))
	_, err := tripCount(w)
	assert.ErrorContains(t, err, "does not start at a constant")
}

// dataDependentLoop: state (i, x, w) runs while i < n for a parameter n.
func dataDependentLoop(t *testing.T) *hlo.Module {
	state := hlo.MakeTuple(s32s(), f64s(3), f64s(3), s32s())
	cb := hlo.NewBuilder("cond")
	p := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(p, 0), cb.GetTupleElement(p, 3), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("body")
	q := bb.Parameter(state, "s")
	i, x, w, n := bb.GetTupleElement(q, 0), bb.GetTupleElement(q, 1), bb.GetTupleElement(q, 2), bb.GetTupleElement(q, 3)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), bb.Add(bb.Mul(bb.Sin(x), w), x), w, n))
	require.NoError(t, err)
	return build(t, []hlo.Shape{f64s(3), f64s(3), s32s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		loop := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0], ps[1], ps[2]))
		return b.GetTupleElement(loop, 1)
	})
}

func TestWhileDataDependentTripCount(t *testing.T) {
	m := dataDependentLoop(t)
	_, err := VJP(m, []int{0, 1}, nil)
	require.ErrorIs(t, err, ErrUnknownTripCount)
	assert.Contains(t, err.Error(), "MaxTripCount")

	// With a bound: the bounded loop is checked against finite differences for
	// trip counts 0, 3 and 5 (the bound).
	for _, n := range []int32{0, 3, 5} {
		c := fdCase{name: "bounded", params: []hlo.Shape{f64s(3), f64s(3), s32s()}, wrt: []int{0, 1},
			gen: fixedInts(2, n), build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				// Rebuild the same loop inside the harness's builder via a call.
				return b.Call(m.Entry, ps...)
			}}
		mod := buildModule(t, c)
		v, err := VJP(mod, c.wrt, &Options{MaxTripCount: 5})
		require.NoError(t, err)
		checkVJPModule(t, c, mod, v)
	}

	// The derivative's size does not depend on the bound.
	size := func(limit int64) int {
		v, err := VJP(m, []int{0, 1}, &Options{MaxTripCount: limit})
		require.NoError(t, err)
		total := 0
		for _, c := range v.Computations {
			total += len(c.Instructions)
		}
		return total
	}
	assert.Equal(t, size(2), size(5000))

	// A trip count beyond the bound makes the result NaN, never a truncated value.
	v, err := VJP(m, []int{0}, &Options{MaxTripCount: 2})
	require.NoError(t, err)
	ct := vec64(1, 1, 1)
	out, err := cpuref.Eval(v, vec64(0.1, 0.2, 0.3), vec64(1, 1, 1), hlo.ScalarLiteral(int32(3)), ct)
	require.NoError(t, err)
	for _, x := range values(t, out.Elems()[0]) {
		assert.True(t, math.IsNaN(x), "result %v", x)
	}
}

// checkVJPModule is checkFD with the VJP module given.
func checkVJPModule(t *testing.T, c fdCase, m, vjp *hlo.Module) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	in := c.inputs(r)
	out, err := cpuref.Eval(m, in...)
	require.NoError(t, err)
	cts := []*hlo.Literal{randomLiteral(r, out.Shape(), -1, 1)}
	got, err := cpuref.Eval(vjp, append(append([]*hlo.Literal{}, in...), cts...)...)
	require.NoError(t, err)
	for k, p := range c.wrt {
		for i := range in[p].NumElements() {
			fd := centralDifference(t, m, in, cts, p, i, fdStep)
			require.InDelta(t, fd, got.Elems()[1+k].Float64(i), fdAtol+fdRtol*math.Abs(fd), "param %d elem %d inputs %v", p, i, in)
		}
	}
}

// countedLoopModule: f(x, w) = state x after n iterations of x = sin(x)·w + x.
func countedLoopModule(t *testing.T, n int64) *hlo.Module {
	cond, body := countedLoop(t, 3, n)
	return build(t, []hlo.Shape{f64s(3), f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		w := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0], ps[1]))
		return b.GetTupleElement(w, 1)
	})
}

func TestStaticWhileStaysALoop(t *testing.T) {
	// The derivative's size does not depend on the trip count: the forward and
	// backward passes are loops.
	size := func(n int64) int {
		v, err := VJP(countedLoopModule(t, n), []int{0, 1}, nil)
		require.NoError(t, err)
		total := 0
		for _, c := range v.Computations {
			total += len(c.Instructions)
		}
		return total
	}
	assert.Equal(t, size(3), size(1000))

	// And it is right for a long loop (central differences, 200 iterations).
	c := fdCase{name: "long loop", params: []hlo.Shape{f64s(3), f64s(3)},
		gen: func(r *rand.Rand, i int, s hlo.Shape) *hlo.Literal { return randomLiteral(r, s, -0.05, 0.05) },
		build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			return b.Call(countedLoopModule(t, 200).Entry, ps...)
		}}
	checkFD(t, c)
}

func TestGradOfGradThroughWhile(t *testing.T) {
	// f(x) = Σ state after 5 iterations of x = sin(x)·x + x on a scalar: the
	// second derivative of the loop (the backward loop differentiated as a loop
	// again) against central differences of the first.
	state := hlo.MakeTuple(s32s(), f64s())
	cb := hlo.NewBuilder("cond")
	p := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(p, 0), cb.ScalarConstant(hlo.S32, 5), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("body")
	q := bb.Parameter(state, "s")
	i, x := bb.GetTupleElement(q, 0), bb.GetTupleElement(q, 1)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), bb.Add(bb.Mul(bb.Sin(x), x), x)))
	require.NoError(t, err)
	m := build(t, []hlo.Shape{f64s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0])), 1)
	})
	checkGradOfGrad(t, m, []float64{-0.3, 0.2})
}

func TestLoopInvariantStateIsNotStacked(t *testing.T) {
	// State (i, x, w): the body passes w through, so the forward loop stacks i and x
	// only: its state is (state, t, stack of i, stack of x).
	v, err := VJP(countedLoopModule(t, 50), []int{0, 1}, nil)
	require.NoError(t, err)
	var whiles []*hlo.Instruction
	for _, in := range v.Entry.Instructions {
		if in.Op == hlo.OpWhile {
			whiles = append(whiles, in)
		}
	}
	require.Len(t, whiles, 2, "a forward and a backward loop")
	fwd := whiles[0].Shape
	require.Len(t, fwd.Elems, 4)
	assert.True(t, fwd.Elems[2].Equal(s32s(50)), "stack of i: %v", fwd.Elems[2])
	assert.True(t, fwd.Elems[3].Equal(f64s(50, 3)), "stack of x: %v", fwd.Elems[3])
}
