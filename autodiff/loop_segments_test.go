package autodiff

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// scanLoss is Σ x after n steps of x ← sin(x)·w + x (w loop invariant).
func scanLoss(t *testing.T, n int64) *hlo.Module {
	cond, body := countedLoop(t, 3, n)
	return build(t, []hlo.Shape{f64s(3), f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		x := b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0], ps[1])), 1)
		return b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)}, b.Reducer(hlo.OpAdd, hlo.F64), []int64{0})
	})
}

// stackRows is the most rows of any f64[rows, 3] value in m: the longest stack.
func stackRows(m *hlo.Module) int64 {
	var most int64
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			s := in.Shape
			if !s.IsTuple() && s.DType == hlo.F64 && s.Rank() == 2 && s.Dims[1] == 3 {
				most = max(most, s.Dims[0])
			}
		}
	}
	return most
}

// TestLoopCheckpointSegments: a 64-step loop differentiated in segments of k
// steps gives the plain derivative's value and gradients (x and the invariant w),
// and its longest stack holds max(64/k, k) rows instead of 64: k = 8 (√64), k = 5
// (12 segments and a tail of 4 steps), the default ⌈√n⌉, and k ≥ n or k = 1
// (the loop differentiated whole).
func TestLoopCheckpointSegments(t *testing.T) {
	const n = 64
	m := scanLoss(t, n)
	r := rand.New(rand.NewPCG(1, 2))
	x, w := randomLiteral(r, f64s(3), -1, 1), randomLiteral(r, f64s(3), -0.2, 0.2)
	plainMod, err := ValueAndGrad(m, []int{0, 1}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(n), stackRows(plainMod))
	plain, err := cpuref.Eval(plainMod, x, w)
	require.NoError(t, err)
	for _, c := range []struct {
		every, rows int64
	}{{8, 8}, {5, 12}, {0, 8}, {3, 21}, {64, 64}, {1, 64}} {
		seg, err := ValueAndGrad(m, []int{0, 1}, &Options{LoopCheckpoint: &LoopCheckpoint{Every: c.every}})
		require.NoError(t, err, "every %d", c.every)
		require.NoError(t, hlo.Verify(seg))
		assert.Equal(t, c.rows, stackRows(seg), "every %d: the longest stack", c.every)
		got, err := cpuref.Eval(seg, x, w)
		require.NoError(t, err)
		for i, want := range plain.Elems() {
			assert.InDeltaSlice(t, values(t, want), values(t, got.Elems()[i]), 1e-12, "every %d: output %d", c.every, i)
		}
	}
}

// TestLoopCheckpointSecondOrder: the segmented derivative is itself made of
// counted loops, so it can be differentiated again (the gradient of Σ ∂L/∂x
// with respect to w matches the plain second derivative).
func TestLoopCheckpointSecondOrder(t *testing.T) {
	m := scanLoss(t, 10)
	r := rand.New(rand.NewPCG(3, 4))
	x, w := randomLiteral(r, f64s(3), -1, 1), randomLiteral(r, f64s(3), -0.5, 0.5)
	second := func(o *Options) []float64 {
		g, err := Grad(m, []int{0}, o)
		require.NoError(t, err)
		sum := build(t, []hlo.Shape{f64s(3), f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
			gx := b.Call(g.Entry, ps[0], ps[1])
			return b.Reduce([]*hlo.Instruction{gx}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)}, b.Reducer(hlo.OpAdd, hlo.F64), []int64{0})
		})
		gg, err := Grad(sum, []int{1}, o)
		require.NoError(t, err)
		out, err := cpuref.Eval(gg, x, w)
		require.NoError(t, err)
		return values(t, out)
	}
	assert.InDeltaSlice(t, second(nil), second(&Options{LoopCheckpoint: &LoopCheckpoint{Every: 3}}), 1e-10)
}

// TestLoopCheckpointRefusesDraws: a body that draws random numbers would draw
// other numbers when a segment is recomputed, so segmenting it is refused,
// naming the loop and the draw.
func TestLoopCheckpointRefusesDraws(t *testing.T) {
	state := hlo.MakeTuple(s32s(), f64s(3))
	cb := hlo.NewBuilder("cond")
	c := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(c, 0), cb.ScalarConstant(hlo.S32, 16), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("body")
	q := bb.Parameter(state, "s")
	u := bb.SetName(bb.Rng(bb.ScalarConstant(hlo.F64, 0), bb.ScalarConstant(hlo.F64, 1), hlo.RngUniform, f64s(3)), "noise")
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(bb.GetTupleElement(q, 0), bb.ScalarConstant(hlo.S32, 1)), bb.Mul(bb.Sin(bb.GetTupleElement(q, 1)), u)))
	require.NoError(t, err)
	m := build(t, []hlo.Shape{f64s(3)}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		x := b.GetTupleElement(b.SetName(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), ps[0])), "scan"), 1)
		return b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)}, b.Reducer(hlo.OpAdd, hlo.F64), []int64{0})
	})
	_, err = Grad(m, []int{0}, &Options{LoopCheckpoint: &LoopCheckpoint{}})
	require.ErrorIs(t, err, hlo.ErrUnsupported)
	assert.ErrorContains(t, err, "while scan")
	assert.ErrorContains(t, err, "noise")
	_, err = Grad(m, []int{0}, nil)
	require.NoError(t, err, "differentiated whole, the loop stacks its draws")
	_, err = Grad(m, []int{0}, &Options{LoopCheckpoint: &LoopCheckpoint{Every: -2}})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.ErrorContains(t, err, "LoopCheckpoint.Every is -2")
}
