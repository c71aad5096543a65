package autodiff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// regionFn is a region's body as hlo.Builder.Checkpoint takes it.
type regionFn = func(b *hlo.Builder, args []*hlo.Instruction) *hlo.Instruction

// maybeCheckpoint adds body as a region under p, or, when p is nil, inline: the
// same function with and without checkpointing.
func maybeCheckpoint(b *hlo.Builder, p *hlo.CheckpointPolicy, body regionFn, args ...*hlo.Instruction) *hlo.Instruction {
	if p == nil {
		return body(b, args)
	}
	return b.Checkpoint(*p, body, args...)
}

// policies are the policies the tests run, by name; nil is no checkpoint.
func policies() map[string]*hlo.CheckpointPolicy {
	nothing, dots, names := hlo.NothingSaveable(), hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("h0", "h2")
	every, noBatch, allBut := hlo.EverythingSaveable(), hlo.DotsWithNoBatchDimsSaveable(), hlo.SaveAnyNamesButThese("h1")
	both := hlo.SaveFromBothPolicies(hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("h1"))
	offload := hlo.SaveAndOffloadOnlyTheseNames([]string{"h0", "h2"}, nil) // with nothing to offload (refused: no host offload)
	return map[string]*hlo.CheckpointPolicy{"nothing_saveable": &nothing, "dots_saveable": &dots, "save_only_these_names": &names,
		"everything_saveable": &every, "dots_with_no_batch_dims_saveable": &noBatch, "save_any_names_but_these": &allBut,
		"save_from_both_policies": &both, "save_and_offload_only_these_names": &offload}
}

// dense is one layer: act(x·w + b), its dot named "dot<k>", its output "act<k>"
// and checkpoint-named "h<k>" (so SaveOnlyTheseNames can keep it).
func dense(b *hlo.Builder, k int, x, w, bias *hlo.Instruction, act func(*hlo.Instruction) *hlo.Instruction) *hlo.Instruction {
	d := b.SetName(b.Dot(x, w), fmt.Sprintf("dot%d", k))
	pre := b.Add(d, b.Broadcast(bias, d.Shape.Dims, []int64{1}))
	return b.CheckpointName(b.SetName(act(pre), fmt.Sprintf("act%d", k)), fmt.Sprintf("h%d", k))
}

// mlpLoss is Σ (MLP(x))² of an MLP of `layers` tanh layers over x [batch, width]
// (parameter 0), weights w<k> and biases b<k> (parameters 1+2k, 2+2k); the layers
// are grouped in regions of `every` layers under p (nil: no checkpoint).
func mlpLoss(t *testing.T, layers, every int, batch, width int64, p *hlo.CheckpointPolicy) *hlo.Module {
	return mlpLossOf(t, hlo.F64, layers, every, batch, width, p)
}

func mlpLossOf(t *testing.T, dt hlo.DType, layers, every int, batch, width int64, p *hlo.CheckpointPolicy) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder("mlp")
	x := b.Parameter(hlo.MakeShape(dt, batch, width), "x")
	var ws []*hlo.Instruction
	for k := range layers {
		ws = append(ws, b.Parameter(hlo.MakeShape(dt, width, width), fmt.Sprintf("w%d", k)),
			b.Parameter(hlo.MakeShape(dt, width), fmt.Sprintf("b%d", k)))
	}
	h := x
	for first := 0; first < layers; first += every {
		last := min(first+every, layers)
		h = maybeCheckpoint(b, p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
			h := a[0]
			for k := first; k < last; k++ {
				i := 1 + 2*(k-first)
				h = dense(b, k, h, a[i], a[i+1], b.Tanh)
			}
			return h
		}, append([]*hlo.Instruction{h}, ws[2*first:2*last]...)...)
	}
	m, err := b.Build(sumOf(b, b.Mul(h, h)))
	require.NoError(t, err)
	return m
}

func randomInputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	r := rand.New(rand.NewPCG(seed, 7))
	in := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		in[i] = randomLiteral(r, p.Shape, -0.8, 0.8)
	}
	return in
}

func allParams(m *hlo.Module) []int {
	wrt := make([]int, len(m.Entry.Params))
	for i := range wrt {
		wrt[i] = i
	}
	return wrt
}

// TestCheckpointGradientMatchesPlain: with every policy, regions of one, two and
// all layers, the gradient equals the gradient without checkpointing (cpuref, f64)
// to within 1e-12 relative: the same ops on the same values, only cotangents that
// meet at a region's argument are summed in another order.
func TestCheckpointGradientMatchesPlain(t *testing.T) {
	const layers = 4
	plainMod := mlpLoss(t, layers, 1, 3, 4, nil)
	in := randomInputs(plainMod, 1)
	wrt := allParams(plainMod)
	plain, err := ValueAndGrad(plainMod, wrt, nil)
	require.NoError(t, err)
	want, err := cpuref.Eval(plain, in...)
	require.NoError(t, err)
	for name, p := range policies() {
		for _, every := range []int{1, 2, layers} {
			t.Run(fmt.Sprintf("%s/every %d", name, every), func(t *testing.T) {
				g, err := ValueAndGrad(mlpLoss(t, layers, every, 3, 4, p), wrt, nil)
				require.NoError(t, err)
				require.Positive(t, countOp(g, hlo.OpOptBarrier), "the recomputation sits behind a barrier")
				got, err := cpuref.Eval(g, in...)
				require.NoError(t, err)
				require.NoError(t, hlo.LiteralsClose(got, want, 0, 1e-12))
			})
		}
	}
}

// TestCheckpointFiniteDifferences: VJPs through regions of several forms against
// central differences: a tuple result, an argument used inside and outside, an
// inactive argument, a region in a region, a dot, a convolution, a named value, a
// name of a name and a named call under each policy, and an integer value crossing
// the region.
func TestCheckpointFiniteDifferences(t *testing.T) {
	cb := hlo.NewBuilder("sin_times")
	v := cb.Parameter(f64s(2, 3), "v")
	sinTimes, err := cb.BuildComputation(cb.Mul(cb.Sin(v), v))
	require.NoError(t, err)
	for name, p := range policies() {
		runFD(t, []fdCase{{
			name:   name,
			params: []hlo.Shape{f64s(2, 3), f64s(3, 3), f64s(1, 4, 4, 1), f64s(2, 2, 1, 1), f64s(2, 3)},
			wrt:    []int{0, 1, 2, 3},
			build: func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				r := b.Checkpoint(*p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
					h0 := b.CheckpointName(b.CheckpointName(b.Sin(b.Dot(a[0], a[1])), "raw"), "h0") // a name of a name
					inner := b.Checkpoint(hlo.DotsSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
						return b.Mul(b.Exp(b.Dot(a[0], a[1])), a[2])
					}, h0, a[1], a[4])
					conv := b.Conv(a[2], a[3], hlo.MakeWindow([]int64{2, 2}, nil), nhwc(), 1, 1)
					idx := b.Convert(b.Compare(h0, b.BroadcastScalar(b.ScalarConstant(hlo.F64, 0), 2, 3), hlo.CmpGT), hlo.S32)
					h2 := b.CheckpointName(b.Call(sinTimes, b.Mul(inner, h0)), "h2") // a named call: inlined, not taped
					return b.Tuple(h2, b.Tanh(conv), idx)
				}, ps[0], ps[1], ps[2], ps[3], ps[4])
				out := b.GetTupleElement(r, 0)
				return b.Tuple(b.Add(out, b.Mul(ps[0], ps[0])), b.GetTupleElement(r, 1), b.GetTupleElement(r, 2))
			},
		}})
	}
}

// nhwc is a 2-D convolution's dimension numbers: input NHWC, kernel HWIO.
func nhwc() hlo.ConvDims {
	return hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2}, KernelInput: 2, KernelOutput: 3,
		KernelSpatial: []int64{0, 1}, OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}
}

// TestGradOfGradThroughCheckpoint: the derivative of a checkpointed scalar
// function (its recomputation behind a barrier) is differentiable again.
func TestGradOfGradThroughCheckpoint(t *testing.T) {
	for name, p := range policies() {
		t.Run(name, func(t *testing.T) {
			m := build(t, []hlo.Shape{f64s()}, func(b *hlo.Builder, ps []*hlo.Instruction) *hlo.Instruction {
				return b.Checkpoint(*p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
					v := b.Reshape(a[0], 1, 1)
					d := b.Dot(b.CheckpointName(b.Sin(v), "h0"), b.Exp(v))
					return b.Mul(b.Reshape(d), b.Tanh(a[0]))
				}, ps[0])
			})
			checkGradOfGrad(t, m, []float64{-0.6, 0.4, 1.3})
		})
	}
}

// countOp counts the instructions of an opcode in every computation of m.
func countOp(m *hlo.Module, op hlo.Opcode) int {
	n := 0
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == op {
				n++
			}
		}
	}
	return n
}

// barrierInputs lists, for each opt-barrier of m's entry, the names of the values
// it fences but the last (the cotangent, checked to be a backward value: not a
// forward name).
func barrierInputs(t *testing.T, m *hlo.Module) [][]string {
	t.Helper()
	var out [][]string
	for _, in := range m.Entry.Instructions {
		if in.Op != hlo.OpOptBarrier {
			continue
		}
		tuple := in.Operands[0]
		require.Equal(t, hlo.OpTuple, tuple.Op)
		var names []string
		for _, x := range tuple.Operands[:len(tuple.Operands)-1] {
			names = append(names, x.Name)
		}
		slices.Sort(names)
		out = append(out, names)
	}
	return out
}

// TestCheckpointSavedSets: what each policy lets through to the backward pass,
// read off the produced HLO: the values the barrier of a region of three tanh
// layers fences (besides the cotangent). The region's arguments are there only
// where the recomputation or a rule reads them: x (an input, not differentiated)
// for w0's gradient, but w0 only to recompute dot0 (x needs no gradient), b2 only
// to recompute act2 (tanh's rule reads its result). A kept name keeps the value it
// names: act0 and act2 are not recomputed, so neither b0, w0 nor b2 is read.
func TestCheckpointSavedSets(t *testing.T) {
	want := map[string][]string{
		"nothing_saveable":      {"b0", "b1", "b2", "w0", "w1", "w2", "x"},
		"dots_saveable":         {"b0", "b1", "b2", "dot0", "dot1", "dot2", "w1", "w2", "x"},
		"save_only_these_names": {"act0", "act2", "b1", "w1", "w2", "x"},
		// everything: tanh's rule reads its result, so the dots are kept but not read
		"everything_saveable":               {"act0", "act1", "act2", "w1", "w2", "x"},
		"dots_with_no_batch_dims_saveable":  {"b0", "b1", "b2", "dot0", "dot1", "dot2", "w1", "w2", "x"},
		"save_any_names_but_these":          {"act0", "act2", "b1", "w1", "w2", "x"},
		"save_from_both_policies":           {"act1", "b0", "b2", "dot0", "dot2", "w1", "w2", "x"},
		"save_and_offload_only_these_names": {"act0", "act2", "b1", "w1", "w2", "x"},
	}
	for name, p := range policies() {
		t.Run(name, func(t *testing.T) {
			m := mlpLoss(t, 3, 3, 2, 3, p)
			g, err := Grad(m, allParams(m)[1:], nil)
			require.NoError(t, err)
			require.Equal(t, [][]string{want[name]}, barrierInputs(t, g))
		})
	}
}

// TestCheckpointErrors: a region whose policy autodiff cannot read is an
// ErrInvalidArgument naming what is wrong, not a silent save-nothing.
func TestCheckpointErrors(t *testing.T) {
	for _, c := range []struct{ attrs, want string }{
		{`called_computations={%r}, backend_config={"policy":"all"}`, "unknown policy all"},
		{`called_computations={%r, %r}, backend_config={"policy":"nothing_saveable"}`, "calls 2 computations"},
	} {
		m, err := hlo.ParseModule("HloModule bad\n%r (p: f64[2]) -> f64[2] {\n  %p = f64[2] parameter(0)\n  ROOT %s = f64[2] sine(%p)\n}\n" +
			"ENTRY e {\n  x = f64[2] parameter(0)\n  y = f64[2] custom-call(x), custom_call_target=\"vkxla.checkpoint\", " + c.attrs +
			"\n  z = f64[] constant(0)\n  ROOT s = f64[] reduce(y, z), dimensions={0}, to_apply=%add\n}\n" +
			"%add (a: f64[], b: f64[]) -> f64[] {\n  %a = f64[] parameter(0)\n  %b = f64[] parameter(1)\n  ROOT %c = f64[] add(%a, %b)\n}")
		require.NoError(t, err, c.attrs)
		_, err = Grad(m, []int{0}, nil)
		require.ErrorIs(t, err, ErrInvalidArgument, c.attrs)
		require.ErrorContains(t, err, c.want)
	}
}
