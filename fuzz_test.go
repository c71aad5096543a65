package vkxla_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/randgraph"
)

// FuzzDifferential compiles random graphs and checks the GPU against cpuref, fused
// (rows < 128) or one kernel per instruction (rows ≥ 128), straight-line (cols <
// 128) or as the body of a three-iteration while loop (cols ≥ 128, which exercises
// buffer reuse inside loop bodies), and for a third of the inputs under a memory
// budget of 80% of the unbudgeted plan (rematerialisation). The ops bytes are
// decoded by internal/randgraph.Exact (the generator every fuzzer shares; its op
// set is the correctly rounded one). `go test` runs the seeds; `go test -fuzz
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
		ops = ops[:min(len(ops), maxFuzzOps)]
		m, s := fuzzGraph(t, rows, cols, ops)
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

// maxFuzzOps bounds the op bytes of one fuzz graph.
const maxFuzzOps = 40

// fuzzGraph decodes a fuzz input into a module of exactly rounded ops over the
// shape it returns, f32[rows%9+1, cols%9+1]; cols ≥ 128 makes it a loop body.
func fuzzGraph(t *testing.T, rows, cols uint8, ops []byte) (*hlo.Module, hlo.Shape) {
	t.Helper()
	s := f32(int64(rows%9)+1, int64(cols%9)+1)
	build := randgraph.Exact
	if cols >= 128 {
		build = randgraph.ExactLoop
	}
	m, err := build(ops, s)
	if err != nil {
		t.Fatalf("generator built an invalid graph: %v", err)
	}
	return m, s
}
