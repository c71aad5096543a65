package autodiff

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// sinLayers is the autodiff_remat notebook's f(W1, W2, W3, x): three layers
// sin(W·x) with W [5,4], [6,5], [7,6] and x [4]. The products are named y<k>, the
// sines sin<k> and checkpoint-named s<k>. whole puts all of f in one region under
// p; otherwise each layer is a region of its own (the notebook's f2).
func sinLayers(t *testing.T, p hlo.CheckpointPolicy, whole bool) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder("f")
	ws := []*hlo.Instruction{
		b.Parameter(hlo.MakeShape(hlo.F32, 5, 4), "W1"),
		b.Parameter(hlo.MakeShape(hlo.F32, 6, 5), "W2"),
		b.Parameter(hlo.MakeShape(hlo.F32, 7, 6), "W3"),
	}
	x := b.Parameter(hlo.MakeShape(hlo.F32, 4), "x")
	layer := func(b *hlo.Builder, k int, w, x *hlo.Instruction) *hlo.Instruction {
		y := b.SetName(b.Dot(w, x), fmt.Sprintf("y%d", k))
		return b.CheckpointName(b.SetName(b.Sin(y), fmt.Sprintf("sin%d", k)), fmt.Sprintf("s%d", k))
	}
	var out *hlo.Instruction
	if whole {
		out = b.Checkpoint(p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
			h := a[3]
			for k := range 3 {
				h = layer(b, k+1, a[k], h)
			}
			return h
		}, ws[0], ws[1], ws[2], x)
	} else {
		out = x
		for k := range 3 {
			out = b.Checkpoint(p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
				return layer(b, k+1, a[0], a[1])
			}, ws[k], out)
		}
	}
	m, err := b.Build(out)
	require.NoError(t, err)
	return m
}

// residualSet is each residual as "producer" (arguments) or "op producer".
func residualSet(t *testing.T, m *hlo.Module) []string {
	t.Helper()
	rs, err := SavedResiduals(m)
	require.NoError(t, err)
	var out []string
	for _, r := range rs {
		require.Equal(t, r.Shape.ByteSize(), r.Bytes, "%v", r)
		if r.Argument {
			out = append(out, r.Producer)
		} else {
			out = append(out, fmt.Sprintf("%v %s", r.Op, r.Producer))
		}
	}
	return out
}

// TestSavedResidualsNotebook: the residual sets JAX's autodiff_remat notebook
// prints for the three sin(W·x) layers, by role: under nothing_saveable only the
// arguments; dots_saveable (and dots_with_no_batch_dims_saveable: these dots have
// none) the arguments and the three W·x products; a region per layer (f2) the
// arguments and the sines that feed the next region; the name policies the named
// sines the backward pass reads (s3, the result, is read by no rule). Under
// everything_saveable JAX keeps sin and cos; vkxla's sine rule reads its operand
// and takes cos in the backward pass, so the products and the sines are kept.
func TestSavedResidualsNotebook(t *testing.T) {
	args := []string{"W1", "W2", "W3", "x"}
	dots := []string{"dot y1", "dot y2", "dot y3"}
	cases := []struct {
		name   string
		p      hlo.CheckpointPolicy
		whole  bool
		extras []string
	}{
		{"nothing_saveable", hlo.NothingSaveable(), true, nil},
		{"dots_saveable", hlo.DotsSaveable(), true, dots},
		{"dots_with_no_batch_dims_saveable", hlo.DotsWithNoBatchDimsSaveable(), true, dots},
		{"checkpoint per layer", hlo.NothingSaveable(), false, []string{"sine sin1", "sine sin2"}},
		{"everything_saveable", hlo.EverythingSaveable(), true, append([]string{"sine sin1", "sine sin2"}, dots...)},
		{"save_only_these_names", hlo.SaveOnlyTheseNames("s1"), true, []string{"sine sin1"}},
		{"save_any_names_but_these", hlo.SaveAnyNamesButThese("s1"), true, []string{"sine sin2"}},
		{"save_from_both_policies", hlo.SaveFromBothPolicies(hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("s2")), true,
			append([]string{"sine sin2"}, dots...)},
		{"save_and_offload_only_these_names without offload", hlo.SaveAndOffloadOnlyTheseNames([]string{"s1"}, nil), true,
			[]string{"sine sin1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.ElementsMatch(t, append(append([]string{}, args...), c.extras...), residualSet(t, sinLayers(t, c.p, c.whole)))
		})
	}
}

// TestSavedResidualsOffload: the notebook's offload example
// (save_and_offload_only_these_names, s1 saved, s2 offloaded to pinned_host) on
// the three layers: the residuals are the arguments, sin1 on the device and sin2
// in host memory (s3, the result, is read by no rule); the gradient is the one
// without offload, on cpuref, bit for bit (moving a value is the identity).
func TestSavedResidualsOffload(t *testing.T) {
	m := sinLayers(t, hlo.SaveAndOffloadOnlyTheseNames([]string{"s1"}, []string{"s2"}), true)
	rs, err := SavedResiduals(m)
	require.NoError(t, err)
	onHost := map[string]bool{}
	for _, r := range rs {
		onHost[fmt.Sprintf("%v %s", r.Op, r.Producer)] = r.OnHost
		if r.OnHost {
			require.Contains(t, r.String(), ", in host memory")
		}
	}
	require.Equal(t, map[string]bool{"parameter W1": false, "parameter W2": false, "parameter W3": false, "parameter x": false,
		"sine sin1": false, "sine sin2": true}, onHost)

	r := rand.New(rand.NewPCG(7, 8))
	var inputs []*hlo.Literal
	for _, p := range m.Entry.Params {
		inputs = append(inputs, randomLiteral(r, p.Shape, -1, 1))
	}
	inputs = append(inputs, randomLiteral(r, m.Entry.Root.Shape, -1, 1)) // the cotangent
	grads := func(m *hlo.Module) *hlo.Literal {
		g, err := VJP(m, []int{0, 1, 2, 3}, nil)
		require.NoError(t, err)
		out, err := cpuref.Eval(g, inputs...)
		require.NoError(t, err)
		return out
	}
	require.NoError(t, hlo.LiteralsEqual(grads(m), grads(sinLayers(t, hlo.SaveOnlyTheseNames("s1", "s2"), true))))
	g, err := VJP(m, []int{0, 1, 2, 3}, nil)
	require.NoError(t, err)
	moves := map[string]int{}
	for _, in := range g.Entry.Instructions {
		if toHost, ok := hlo.Placement(in); ok {
			moves[map[bool]string{true: "to host", false: "to device"}[toHost]]++
		}
	}
	require.Equal(t, map[string]int{"to host": 1, "to device": 1}, moves, "sin2 moves out and back:\n%s", hlo.Print(g))
}

// TestSavedResidualsReport: shape, dtype, bytes and producer of each residual, as
// print_saved_residuals writes them, and a loop's stacked state.
func TestSavedResidualsReport(t *testing.T) {
	rs, err := SavedResiduals(sinLayers(t, hlo.DotsSaveable(), true))
	require.NoError(t, err)
	var lines []string
	for _, r := range rs {
		lines = append(lines, r.String())
	}
	require.Contains(t, lines, "f32[5,4] from the argument W1 (f.checkpoint, 80 bytes)")
	require.Contains(t, lines, "f32[6] output of dot y2 (f.checkpoint, 24 bytes)")
	// A scan of 5 steps tanh(W·x), the step under dots_saveable: the stacks of the
	// counter and the state, the loop-invariant W (param.1) once, and the
	// stack of W·x.
	dots := hlo.DotsSaveable()
	rs, err = SavedResiduals(scanModule(t, 5, f64s(4, 4), f64s(4), &dots, tanhLayer))
	require.NoError(t, err)
	lines = nil
	for _, r := range rs {
		lines = append(lines, r.String())
	}
	require.ElementsMatch(t, []string{
		"s32[5] stack of while.5 state leaf 0 (while.5, 20 bytes)",
		"f64[5,4] stack of while.5 state leaf 1 (while.5, 160 bytes)",
		"f64[4,4] from the argument param.1 (while.5, 128 bytes)",
		"f64[5,4] stack of y (while.5, 160 bytes)",
	}, lines)
	_, err = SavedResiduals(nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// TestCheckpointReplaysRandomBits: dropout inside a checkpointed region, its mask
// drawn by rng: the recomputation takes the forward pass's draw, so the gradient
// equals that of the same function with the mask fixed to the bits the forward
// pass drew (read by drawing once in a module of its own: cpuref starts every run
// at the same RNG state). Drawing again in the recomputation would advance the
// state and differentiate under another mask.
func TestCheckpointReplaysRandomBits(t *testing.T) {
	xs := hlo.MakeShape(hlo.F32, 64)
	maskOf := func(b *hlo.Builder) *hlo.Instruction {
		u := b.Rng(b.ScalarConstant(hlo.F32, 0), b.ScalarConstant(hlo.F32, 1), hlo.RngUniform, xs)
		keep := b.Compare(u, b.BroadcastScalar(b.ScalarConstant(hlo.F32, 0.5), 64), hlo.CmpLT)
		return b.Mul(b.Convert(keep, hlo.F32), b.BroadcastScalar(b.ScalarConstant(hlo.F32, 2), 64))
	}
	dropout := func(b *hlo.Builder, x, mask *hlo.Instruction) *hlo.Instruction {
		return sumOf(b, b.Mul(b.Sin(x), mask))
	}
	for name, p := range policies() {
		t.Run(name, func(t *testing.T) {
			m := build(t, []hlo.Shape{xs}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Checkpoint(*p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
					return dropout(b, a[0], maskOf(b))
				}, ps[0])
			})
			g, err := Grad(m, []int{0}, nil)
			require.NoError(t, err)
			require.Equal(t, 1, countOp(g, hlo.OpRng), "one draw: the recomputation replays it")
			mb := hlo.NewBuilder("mask")
			maskMod, err := mb.Build(maskOf(mb))
			require.NoError(t, err)
			mask, err := cpuref.Eval(maskMod)
			require.NoError(t, err)
			fixed, err := Grad(build(t, []hlo.Shape{xs, xs}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return dropout(b, ps[0], ps[1])
			}), []int{0}, nil)
			require.NoError(t, err)
			x := randomInputs(m, 3)[0]
			got, err := cpuref.Eval(g, x)
			require.NoError(t, err)
			want, err := cpuref.Eval(fixed, x, mask)
			require.NoError(t, err)
			require.NoError(t, hlo.LiteralsClose(got, want, 0, 0))
		})
	}
}

// TestSavedResidualsOffloadDots: offload_dot_with_no_batch_dims keeps the three
// W·x products (no batch dimensions) in host memory and nothing else of the
// region; the gradients are those of dots_with_no_batch_dims_saveable, which
// keeps the same values on the device, and each product moves out and back.
func TestSavedResidualsOffloadDots(t *testing.T) {
	m := sinLayers(t, hlo.OffloadDotWithNoBatchDims(), true)
	rs, err := SavedResiduals(m)
	require.NoError(t, err)
	onHost := map[string]bool{}
	for _, r := range rs {
		onHost[fmt.Sprintf("%v %s", r.Op, r.Producer)] = r.OnHost
	}
	require.Equal(t, map[string]bool{"parameter W1": false, "parameter W2": false, "parameter W3": false, "parameter x": false,
		"dot y1": true, "dot y2": true, "dot y3": true}, onHost)

	r := rand.New(rand.NewPCG(9, 10))
	var inputs []*hlo.Literal
	for _, p := range m.Entry.Params {
		inputs = append(inputs, randomLiteral(r, p.Shape, -1, 1))
	}
	inputs = append(inputs, randomLiteral(r, m.Entry.Root.Shape, -1, 1))
	vjp := func(m *hlo.Module) *hlo.Module {
		g, err := VJP(m, []int{0, 1, 2, 3}, nil)
		require.NoError(t, err)
		return g
	}
	g := vjp(m)
	got, err := cpuref.Eval(g, inputs...)
	require.NoError(t, err)
	want, err := cpuref.Eval(vjp(sinLayers(t, hlo.DotsWithNoBatchDimsSaveable(), true)), inputs...)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got, want))
	moves := map[bool]int{}
	for _, in := range g.Entry.Instructions {
		if toHost, ok := hlo.Placement(in); ok {
			moves[toHost]++
		}
	}
	require.Equal(t, map[bool]int{true: 3, false: 3}, moves, "each product moves out and back:\n%s", hlo.Print(g))
}
