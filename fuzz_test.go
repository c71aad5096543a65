package vkxla_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// graphBuilder grows a random graph from fuzz bytes: each byte picks an op applied
// to values already built, so every graph is well formed by construction.
type graphBuilder struct {
	b    *hlo.Builder
	vals []*hlo.Instruction
	data []byte
}

func (g *graphBuilder) next() int {
	if len(g.data) == 0 {
		return 0
	}
	v := int(g.data[0])
	g.data = g.data[1:]
	return v
}

func (g *graphBuilder) pick() *hlo.Instruction { return g.vals[g.next()%len(g.vals)] }

// sameShape returns a value shaped like x (x itself when none other is).
func (g *graphBuilder) sameShape(x *hlo.Instruction) *hlo.Instruction {
	start := g.next()
	for i := range g.vals {
		if v := g.vals[(start+i)%len(g.vals)]; v != x && v.Shape.Equal(x.Shape) {
			return v
		}
	}
	return x
}

// step applies one op chosen by the next byte. Ops are limited to those whose f32
// results are correctly rounded on every Vulkan device, so any difference from
// cpuref is a compiler bug, not a precision allowance.
func (g *graphBuilder) step() {
	x := g.pick()
	b := g.b
	var y *hlo.Instruction
	switch g.next() % 14 {
	case 0:
		y = b.Add(x, g.sameShape(x))
	case 1:
		y = b.Mul(x, g.sameShape(x))
	case 2:
		y = b.Max(x, g.sameShape(x))
	case 3:
		y = b.Negate(x)
	case 4:
		y = b.Select(b.Compare(x, g.sameShape(x), hlo.CmpLT), x, b.Abs(x))
	case 5:
		y = b.Reverse(x, int64(g.next()%x.Shape.Rank()))
	case 6:
		perm := []int64{1, 0}
		y = b.Transpose(x, perm...)
	case 7:
		y = b.Reshape(x, x.Shape.Dims[1], x.Shape.Dims[0])
	case 8:
		y = b.Pad(x, b.ScalarConstant(hlo.F32, 0.5), []hlo.PadDim{{Low: 1, High: -1}, {Interior: 0}})
	case 9:
		y = b.Broadcast(b.Reduce([]*hlo.Instruction{x}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)},
			b.Reducer(hlo.OpMaximum, hlo.F32), []int64{1}), x.Shape.Dims, []int64{0})
	case 10:
		y = b.Concatenate(int64(g.next()%2), x, g.sameShape(x))
	case 11:
		d := x.Shape.Dims
		y = b.Slice(x, []int64{0, d[1] / 3}, d, []int64{1 + int64(g.next()%2), 2})
	case 12:
		// Rounding to bf16 and back is exact arithmetic: both sides round to nearest even.
		y = b.Convert(b.Convert(x, hlo.BF16), hlo.F32)
	case 13:
		y = b.Clamp(b.ScalarConstant(hlo.F32, -0.25), x, b.ScalarConstant(hlo.F32, 0.5))
	}
	g.vals = append(g.vals, y)
}

// FuzzDifferential compiles random graphs and checks the GPU against cpuref, fused
// (rows < 128) or one kernel per instruction (rows ≥ 128), straight-line (cols <
// 128) or as the body of a three-iteration while loop (cols ≥ 128, which exercises
// buffer reuse inside loop bodies), and for a third of the inputs under a memory
// budget of 80% of the unbudgeted plan (rematerialisation). `go test` runs the seeds; `go test -fuzz
// FuzzDifferential .` explores.
func FuzzDifferential(f *testing.F) {
	for _, seed := range [][]byte{
		{3, 5, 0, 1, 2}, {0, 0, 1, 1, 6, 0, 7, 1, 0, 3}, {9, 9, 4, 4, 8, 2, 5, 5, 2, 0, 1},
		{6, 6, 7, 7, 0, 0, 0, 2, 1, 9, 3, 4, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	} {
		f.Add(uint8(2), uint8(3), seed)
		f.Add(uint8(130), uint8(3), seed)
		f.Add(uint8(2), uint8(131), seed)
		f.Add(uint8(130), uint8(131), seed)
	}
	rt := newRuntime(f)
	f.Fuzz(func(t *testing.T, rows, cols uint8, ops []byte) {
		if len(ops) > 40 {
			ops = ops[:40]
		}
		s := f32(int64(rows%9)+1, int64(cols%9)+1)
		build := buildFuzzGraph
		if cols >= 128 {
			build = buildFuzzLoop
		}
		m, err := build(ops, s)
		if err != nil {
			t.Fatalf("generator built an invalid graph: %v", err)
		}
		rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		var opts []vkxla.CompileOption
		if rows >= 128 {
			opts = append(opts, vkxla.WithoutPasses("fusion"))
		}
		if len(ops)%3 == 2 {
			budget, ok := tightBudget(t, rt, m, opts)
			if !ok {
				return // no plan fits: ErrOverBudget was checked
			}
			opts = append(opts, budget)
		}
		checkCompiledAgainstCPU(t, rt, m, opts, vkxla.ErrorSpec{}, randomLiteral(rng, s, unitDomain), randomLiteral(rng, s, unitDomain))
	})
}

// buildFuzzGraph builds the graph of ops over parameters x and y of shape s; the
// last value is the root.
func buildFuzzGraph(ops []byte, s hlo.Shape) (*hlo.Module, error) {
	g := &graphBuilder{b: hlo.NewBuilder("fuzz"), data: ops}
	g.vals = []*hlo.Instruction{g.b.Parameter(s, "x"), g.b.Parameter(s, "y")}
	for len(g.data) > 0 {
		g.step()
	}
	return g.b.Build(g.vals[len(g.vals)-1])
}

// buildFuzzLoop runs the graph of ops as a loop body three times: the state is
// (i, x, y); each iteration replaces x by the last value shaped like x and keeps y.
func buildFuzzLoop(ops []byte, s hlo.Shape) (*hlo.Module, error) {
	state := hlo.MakeTuple(hlo.Scalar(hlo.S32), s, s)
	bb := hlo.NewBuilder("body")
	p := bb.Parameter(state, "state")
	g := &graphBuilder{b: bb, data: ops, vals: []*hlo.Instruction{bb.GetTupleElement(p, 1), bb.GetTupleElement(p, 2)}}
	for len(g.data) > 0 {
		g.step()
	}
	next := g.vals[0]
	for _, v := range g.vals {
		if v.Shape.Equal(s) {
			next = v
		}
	}
	i1 := bb.Add(bb.GetTupleElement(p, 0), bb.ScalarConstant(hlo.S32, 1))
	body, err := bb.BuildComputation(bb.Tuple(i1, next, bb.GetTupleElement(p, 2)))
	if err != nil {
		return nil, err
	}
	cb := hlo.NewBuilder("cond")
	cp := cb.Parameter(state, "state")
	cond, err := cb.BuildComputation(cb.Compare(cb.GetTupleElement(cp, 0), cb.ScalarConstant(hlo.S32, 3), hlo.CmpLT))
	if err != nil {
		return nil, err
	}
	b := hlo.NewBuilder("fuzz")
	x, y := b.Parameter(s, "x"), b.Parameter(s, "y")
	w := b.While(cond, body, b.Tuple(b.ScalarConstant(hlo.S32, 0), x, y))
	return b.Build(b.GetTupleElement(w, 1))
}

// tightBudget compiles m, then asks for 80% of its peak. When Compile meets it, the
// budget option is returned for the differential check (and the plan is checked to
// fit); when it cannot, the error must be ErrOverBudget and ok is false.
func tightBudget(t *testing.T, rt *vkxla.Runtime, m *hlo.Module, opts []vkxla.CompileOption) (vkxla.CompileOption, bool) {
	t.Helper()
	exe, err := rt.Compile(context.Background(), m, opts...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	budget := exe.MemoryStats().PeakBytes * 8 / 10
	if err := exe.Close(); err != nil {
		t.Fatal(err)
	}
	opt := vkxla.WithMemoryBudget(budget)
	exe, err = rt.Compile(context.Background(), m, append(opts, opt)...)
	if errors.Is(err, vkxla.ErrOverBudget) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("compile under a budget of %d bytes: %v", budget, err)
	}
	defer exe.Close()
	if peak := exe.MemoryStats().PeakBytes; peak > budget {
		t.Fatalf("compiled under a budget of %d bytes, the plan needs %d", budget, peak)
	}
	return opt, true
}
