package autodiff

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// stepFn is a scan's step: (weights, state) -> next state.
type stepFn func(b *hlo.Builder, w, x *hlo.Instruction) *hlo.Instruction

// scanModule is a counted scan of n steps over the state (i, x, w), w passed
// through, returning Σ x; p, when not nil, checkpoints the step inside the body.
func scanModule(t *testing.T, n int64, ws, xs hlo.Shape, p *hlo.CheckpointPolicy, step stepFn) *hlo.Module {
	t.Helper()
	return build(t, []hlo.Shape{xs, ws}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		return sumOf(b, scan(t, b, n, ps[0], ps[1], p, step))
	})
}

// scan adds the scan's while loop to b and returns its final x.
func scan(t *testing.T, b *hlo.Builder, n int64, x, w *hlo.Instruction, p *hlo.CheckpointPolicy, step stepFn) *hlo.Instruction {
	t.Helper()
	state := hlo.MakeTuple(s32s(), x.Shape, w.Shape)
	cb := hlo.NewBuilder("scan.cond")
	c := cb.Parameter(state, "s")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(c, 0), cb.ScalarConstant(hlo.S32, float64(n)), hlo.CmpLT))
	require.NoError(t, err)
	bb := hlo.NewBuilder("scan.body")
	s := bb.Parameter(state, "s")
	i, xi, wi := bb.GetTupleElement(s, 0), bb.GetTupleElement(s, 1), bb.GetTupleElement(s, 2)
	next := maybeCheckpoint(bb, p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return step(b, a[0], a[1]) }, wi, xi)
	body, err := bb.BuildComputation(bb.Tuple(bb.Add(i, bb.ScalarConstant(hlo.S32, 1)), next, wi))
	require.NoError(t, err)
	return b.GetTupleElement(b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, w)), 1)
}

// tanhLayer is the step tanh(W·x), the product named "y" and the result "h".
func tanhLayer(b *hlo.Builder, w, x *hlo.Instruction) *hlo.Instruction {
	y := b.CheckpointName(b.SetName(b.Dot(w, x), "y"), "y")
	return b.CheckpointName(b.SetName(b.Tanh(y), "h"), "h")
}

// loopBodies returns the forward (stacking) and backward loop bodies of g.
func loopBodies(t *testing.T, g *hlo.Module) (fwd, bwd *hlo.Computation) {
	t.Helper()
	for _, c := range g.Computations {
		switch c.Name {
		case "scan.body.stack":
			fwd = c
		case "scan.body.vjp":
			bwd = c
		}
	}
	require.NotNil(t, fwd)
	require.NotNil(t, bwd)
	return fwd, bwd
}

// liveCount counts the instructions of an opcode the root of c depends on (the
// builder leaves dead replays that DCE removes later).
func liveCount(c *hlo.Computation, op hlo.Opcode) int {
	seen := map[*hlo.Instruction]bool{}
	n := 0
	var visit func(x *hlo.Instruction)
	visit = func(x *hlo.Instruction) {
		if seen[x] {
			return
		}
		seen[x] = true
		if x.Op == op {
			n++
		}
		for _, o := range x.Operands {
			visit(o)
		}
	}
	visit(c.Root)
	return n
}

// TestScanStepCheckpointSavesByPolicy: jax.checkpoint on a scan's step function
// (tanh(W·x)) keeps per iteration what its policy saves, and the backward loop
// recomputes the rest. The backward loop always recomputes the body from the
// stacked state (vkxla's loop VJP is the nothing_saveable scan), so a step under
// nothing_saveable is the plain loop: one dot forward, three backward (the
// recomputed W·x and the two products of its VJP). Under dots_saveable and
// save_only_these_names("y") the forward loop stacks the product and the
// backward loop takes it: two dots backward, one extra stack. Every variant's
// gradient equals the un-checkpointed program's (cpuref, f64, exact: the same
// ops on the same values).
func TestScanStepCheckpointSavesByPolicy(t *testing.T) {
	ws, xs := f64s(4, 4), f64s(4)
	plain, err := Grad(scanModule(t, 5, ws, xs, nil, tanhLayer), []int{0, 1}, nil)
	require.NoError(t, err)
	in := randomInputs(scanModule(t, 5, ws, xs, nil, tanhLayer), 11)
	want, err := cpuref.Eval(plain, in...)
	require.NoError(t, err)
	nothing, dots, named, h := hlo.NothingSaveable(), hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("y"), hlo.SaveOnlyTheseNames("h")
	offloadH, offloadDots := hlo.SaveAndOffloadOnlyTheseNames(nil, []string{"h"}), hlo.OffloadDotWithNoBatchDims()
	cases := []struct {
		name           string
		p              *hlo.CheckpointPolicy
		stacks, bwdDot int // stacks the forward loop writes; dots in the backward body
		moved          int // stacks moved to host memory after the forward loop and back before the backward one
	}{
		{"plain", nil, 2, 3, 0}, // the stacks of i and x
		{"nothing_saveable", &nothing, 2, 3, 0},
		{"dots_saveable", &dots, 3, 2, 0},
		{"save_only_these_names y", &named, 3, 2, 0},
		{"save_only_these_names h", &h, 3, 2, 0}, // tanh's VJP reads only h: W·x is not recomputed
		{"save_and_offload_only_these_names h", &offloadH, 3, 2, 1},
		{"offload_dot_with_no_batch_dims", &offloadDots, 3, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Grad(scanModule(t, 5, ws, xs, c.p, tanhLayer), []int{0, 1}, nil)
			require.NoError(t, err)
			fwd, bwd := loopBodies(t, g)
			require.Equal(t, c.stacks, liveCount(fwd, hlo.OpDynamicUpdateSlice), "stacks written per iteration")
			require.Equal(t, c.bwdDot, liveCount(bwd, hlo.OpDot), "dots in the backward body")
			toHost, toDevice := 0, 0
			for _, in := range g.Entry.Instructions {
				if host, ok := hlo.Placement(in); ok && host {
					toHost++
				} else if ok {
					toDevice++
				}
			}
			require.Equal(t, []int{c.moved, c.moved}, []int{toHost, toDevice}, "moves of stacks to the host and back")
			got, err := cpuref.Eval(g, in...)
			require.NoError(t, err)
			require.NoError(t, hlo.LiteralsClose(got, want, 1e-12, 1e-12))
		})
	}
}

// dropoutStep is sin(x)·mask with a fresh mask drawn by rng: keep with
// probability ½, scaled by 2. w is unused (the scan carries it through).
func dropoutStep(b *hlo.Builder, _, x *hlo.Instruction) *hlo.Instruction {
	return b.Mul(b.Sin(x), dropoutMask(b, x.Shape))
}

func dropoutMask(b *hlo.Builder, s hlo.Shape) *hlo.Instruction {
	u := b.Rng(b.ScalarConstant(s.DType, 0), b.ScalarConstant(s.DType, 1), hlo.RngUniform, s)
	keep := b.Compare(u, b.BroadcastScalar(b.ScalarConstant(s.DType, 0.5), s.Dims...), hlo.CmpLT)
	return b.Mul(b.Convert(keep, s.DType), b.BroadcastScalar(b.ScalarConstant(s.DType, 2), s.Dims...))
}

// TestScanReplaysRandomBits: dropout inside a scan's body, plain and with the
// step checkpointed: the backward loop recomputes the body, and would draw new
// masks; it takes each iteration's forward draw from a stack instead. The
// gradient equals that of the unrolled program with the masks as inputs, fixed
// to the bits the forward loop drew (cpuref starts every run at the same RNG
// state, so a module drawing n masks in a row draws the loop's). Before, the
// backward loop drew again and differentiated under other masks.
func TestScanReplaysRandomBits(t *testing.T) {
	const n = 4
	xs, ws := f64s(32), f64s(1)
	mb := hlo.NewBuilder("masks")
	var masks []*hlo.Instruction
	for range n {
		masks = append(masks, dropoutMask(mb, xs))
	}
	maskMod, err := mb.Build(mb.Tuple(masks...))
	require.NoError(t, err)
	drawn, err := cpuref.Eval(maskMod)
	require.NoError(t, err)
	unrolled, err := Grad(build(t, append([]hlo.Shape{xs}, repeat(xs, n)...), func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
		x := ps[0]
		for k := range n {
			x = b.Mul(b.Sin(x), ps[1+k])
		}
		return sumOf(b, x)
	}), []int{0}, nil)
	require.NoError(t, err)
	x := randomInputs(build(t, []hlo.Shape{xs}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return ps[0] }), 5)[0]
	want, err := cpuref.Eval(unrolled, append([]*hlo.Literal{x}, drawn.Elems()...)...)
	require.NoError(t, err)
	nothing, dots := hlo.NothingSaveable(), hlo.DotsSaveable()
	for name, p := range map[string]*hlo.CheckpointPolicy{"plain": nil, "nothing_saveable": &nothing, "dots_saveable": &dots} {
		t.Run(name, func(t *testing.T) {
			g, err := Grad(scanModule(t, n, ws, xs, p, dropoutStep), []int{0}, nil)
			require.NoError(t, err)
			fwd, bwd := loopBodies(t, g)
			require.Equal(t, 0, liveCount(bwd, hlo.OpRng), "the backward loop draws nothing")
			require.Equal(t, 3, liveCount(fwd, hlo.OpDynamicUpdateSlice), "stacks of i, x and the draw")
			got, err := cpuref.Eval(g, x, hlo.MustFromSlice([]int64{1}, []float64{0}))
			require.NoError(t, err)
			require.NoError(t, hlo.LiteralsClose(got, want, 1e-12, 1e-12))
		})
	}
}

func repeat(s hlo.Shape, n int) []hlo.Shape {
	out := make([]hlo.Shape, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestRedrawRefused: draws the gradient would run a second time, where replaying
// them is not implemented, are refused (hlo.ErrUnsupported, naming the draw)
// instead of differentiated under other bits: in a conditional branch (its VJP
// replays the branch), in a region nested in a region and in a while loop inside
// a region (the outer recomputation replays them), in a while loop nested in a
// loop body, and a draw whose distribution's parameters are differentiated,
// inside a region.
func TestRedrawRefused(t *testing.T) {
	xs := f64s(8)
	noisy := func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return b.Mul(b.Sin(x), dropoutMask(b, xs)) }
	region := func(b *hlo.Builder, x *hlo.Instruction, f func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction) *hlo.Instruction {
		return b.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return f(b, a[0]) }, x)
	}
	// loop wraps f in a 3-step scan, w a constant.
	loop := func(b *hlo.Builder, x *hlo.Instruction, f func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction) *hlo.Instruction {
		return scan(t, b, 3, x, b.ScalarConstant(hlo.F64, 0), nil, func(b *hlo.Builder, _, x *hlo.Instruction) *hlo.Instruction { return f(b, x) })
	}
	cases := map[string]func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction{
		"conditional branch": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			bb := hlo.NewBuilder("noisy.branch")
			br, err := bb.BuildComputation(noisy(bb, bb.Parameter(xs, "x")))
			require.NoError(t, err)
			return b.Conditional(b.ScalarConstant(hlo.S32, 0), []*hlo.Computation{br}, []*hlo.Instruction{x})
		},
		"region in a region": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return region(b, x, func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return region(b, x, noisy) })
		},
		"loop in a region": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return region(b, x, func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return loop(b, x, noisy) })
		},
		"loop in a loop": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return loop(b, x, func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return loop(b, x, noisy) })
		},
		"differentiated parameters": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return region(b, x, func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
				return b.Rng(b.ScalarConstant(hlo.F64, 0), b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F64, 0)},
					b.Reducer(hlo.OpAdd, hlo.F64), []int64{0}), hlo.RngUniform, xs)
			})
		},
	}
	for name, f := range cases {
		t.Run(name, func(t *testing.T) {
			m := build(t, []hlo.Shape{xs}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction { return sumOf(b, f(b, ps[0])) })
			_, err := Grad(m, []int{0}, nil)
			require.ErrorIs(t, err, hlo.ErrUnsupported)
			require.ErrorContains(t, err, "rng")
		})
	}
}
