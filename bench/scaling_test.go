package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
)

// Compile time against program size (docs/results.md, "Compile time"):
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench 'CompileChain|NestedTuple' -benchtime 1x ./bench/
//
// BenchmarkCompileChain compiles elementwise chains (Chain) of 10k, 30k and 100k
// ops, each over a new array size so that the compilation cache misses.
// Metrics: ns/chain-op and cpu-ns/chain-op (the process's CPU time, steadier than
// wall time on a shared machine), per-op-vs-10k (cpu-ns/chain-op ÷ that of the 10k
// chain, measured first in the same process: 1 is flat), kernels (dispatches of
// one Run: the chain split by the fused-kernel bound). Every compile starts after
// a collection, so none pays for the garbage of another.
func BenchmarkCompileChain(b *testing.B) {
	rt := openRuntime(b)
	size := 1024                    // grows by one per compile: no two modules are alike
	compileChain(b, rt, 1000, size) // warm up
	var base float64                // cpu-ns/chain-op of the 10k chain
	for _, n := range []int{10_000, 30_000, 100_000} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			if base == 0 && n != 10_000 { // the 10k sub-benchmark was filtered out
				size++
				_, c := compileChain(b, rt, 10_000, size)
				base = float64(c.Nanoseconds()) / 10_000
			}
			var wall, cpu time.Duration
			for range b.N {
				size++
				w, c := compileChain(b, rt, n, size)
				wall, cpu = wall+w, cpu+c
			}
			b.StopTimer()
			ops := float64(b.N * n)
			perOp := float64(cpu.Nanoseconds()) / ops
			if n == 10_000 {
				base = perOp
			}
			b.ReportMetric(float64(wall.Nanoseconds())/ops, "ns/chain-op")
			b.ReportMetric(perOp, "cpu-ns/chain-op")
			b.ReportMetric(perOp/base, "per-op-vs-10k")
			b.ReportMetric(float64(chainKernels(b, rt, n)), "kernels")
		})
	}
}

// BenchmarkCompileWide compiles Wide graphs of 3k and 10k reductions (5 instructions
// each), without the cse pass, which would merge the reductions of one constant:
// cpu-ns/reduction, and per-reduction-vs-3k (1 is flat).
func BenchmarkCompileWide(b *testing.B) {
	rt := openRuntime(b)
	size := 64
	var base float64
	for _, n := range []int{3_000, 10_000} {
		b.Run(fmt.Sprintf("reductions=%d", n), func(b *testing.B) {
			var cpu time.Duration
			for range b.N {
				size++
				_, c := compileModule(b, rt, func(hb *hlo.Builder) *hlo.Instruction { return Wide(hb, n, size) },
					vkxla.WithoutPasses("cse")) // which would merge the reductions of one constant
				cpu += c
			}
			perOp := float64(cpu.Nanoseconds()) / float64(b.N*n)
			if base == 0 {
				base = perOp
			}
			b.ReportMetric(perOp, "cpu-ns/reduction")
			b.ReportMetric(perOp/base, "per-reduction-vs-3k")
		})
	}
}

// compileChain compiles an n-op chain over f32[size].
func compileChain(b *testing.B, rt *vkxla.Runtime, n, size int) (wall, cpu time.Duration) {
	return compileModule(b, rt, func(hb *hlo.Builder) *hlo.Instruction { return Chain(hb, n, size) })
}

// compileModule compiles the module build makes (built untimed) and returns the
// wall and CPU time of Compile.
func compileModule(b *testing.B, rt *vkxla.Runtime, build func(*hlo.Builder) *hlo.Instruction, opts ...vkxla.CompileOption) (wall, cpu time.Duration) {
	b.StopTimer()
	hb := hlo.NewBuilder("module")
	m, err := hb.Build(build(hb))
	require.NoError(b, err)
	runtime.GC() // no collection of earlier compiles' garbage in this one's time
	b.StartTimer()
	t0, c0 := time.Now(), processCPU()
	exe, err := rt.Compile(context.Background(), m, opts...)
	wall, cpu = time.Since(t0), processCPU()-c0
	require.NoError(b, err)
	b.StopTimer()
	require.NoError(b, exe.Close())
	b.StartTimer()
	return wall, cpu
}

// chainKernels runs an n-op chain once and counts its dispatches.
func chainKernels(b *testing.B, rt *vkxla.Runtime, n int) int {
	hb := hlo.NewBuilder("chain")
	m, err := hb.Build(Chain(hb, n, 64))
	require.NoError(b, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(b, err)
	defer func() { require.NoError(b, exe.Close()) }()
	_, err = exe.Run(context.Background(), F32Literal(1, 64), F32Literal(2, 64))
	require.NoError(b, err)
	p, err := exe.Profile()
	require.NoError(b, err)
	dispatches := 0
	for _, k := range p.Kernels {
		dispatches += k.Dispatches
	}
	return dispatches
}

// BenchmarkNestedTuple: tuples nested hlo.MaxTupleDepth deep compile; 20,000 deep
// (which never finished) are refused by the builder, the parser and Compile (a
// module made by hand, so that the verifier meets it).
func BenchmarkNestedTuple(b *testing.B) {
	rt := openRuntime(b)
	b.Run(fmt.Sprintf("depth=%d/compile", hlo.MaxTupleDepth), func(b *testing.B) {
		for i := range b.N {
			b.StopTimer()
			hb := hlo.NewBuilder("nested")
			m, err := hb.Build(NestedTuple(hb, hlo.MaxTupleDepth, 4+i))
			require.NoError(b, err)
			b.StartTimer()
			exe, err := rt.Compile(context.Background(), m)
			require.NoError(b, err)
			b.StopTimer()
			require.NoError(b, exe.Close())
			b.StartTimer()
		}
	})
	const deep = 20_000
	b.Run(fmt.Sprintf("depth=%d/build", deep), func(b *testing.B) {
		for range b.N {
			hb := hlo.NewBuilder("nested")
			_, err := hb.Build(NestedTuple(hb, deep, 4))
			requireNesting(b, err)
		}
	})
	b.Run(fmt.Sprintf("depth=%d/parse", deep), func(b *testing.B) {
		text := NestedTupleText(deep)
		for range b.N {
			_, err := hlo.ParseModule(text)
			requireNesting(b, err)
		}
	})
	b.Run(fmt.Sprintf("depth=%d/compile", deep), func(b *testing.B) {
		m := handMadeNested(deep)
		for range b.N {
			_, err := rt.Compile(context.Background(), m)
			requireNesting(b, err)
		}
	})
}

func requireNesting(b *testing.B, err error) {
	b.Helper()
	if !errors.Is(err, hlo.ErrTupleNesting) {
		b.Fatalf("got %v, want an error wrapping hlo.ErrTupleNesting", err)
	}
}

// handMadeNested is a module whose entry returns its parameter of a tuple shape
// nested depth deep, made without the builder (which refuses it).
func handMadeNested(depth int) *hlo.Module {
	s := hlo.MakeShape(hlo.F32, 4)
	for range depth {
		s = hlo.MakeTuple(s)
	}
	x := &hlo.Instruction{Name: "x", Op: hlo.OpParameter, Shape: s}
	c := &hlo.Computation{Name: "nested", Params: []*hlo.Instruction{x}, Instructions: []*hlo.Instruction{x}, Root: x}
	return &hlo.Module{Name: "nested", Entry: c, Computations: []*hlo.Computation{c}}
}

// openRuntime opens the test device (validation as devicetest decides) and a
// runtime on it, both closed at cleanup.
func openRuntime(b *testing.B) *vkxla.Runtime {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(b)))
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, rt.Close()) })
	return rt
}

// TestScalingWorkloads: the workloads build what the benchmarks say, and a chain
// splits into kernels of the fusion bound.
func TestScalingWorkloads(t *testing.T) {
	hb := hlo.NewBuilder("chain")
	m, err := hb.Build(Chain(hb, 600, 8))
	require.NoError(t, err)
	require.Len(t, m.Entry.Instructions, 602)
	require.NoError(t, passes.Run(m, passes.Config{}))
	require.Len(t, m.Entry.Instructions, 2+3, "600 ops: kernels of 256, 256 and 88")

	hb = hlo.NewBuilder("wide")
	m, err = hb.Build(Wide(hb, 5, 8))
	require.NoError(t, err)
	reductions := 0
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpReduce {
			reductions++
		}
	}
	require.Equal(t, 5, reductions)

	hb = hlo.NewBuilder("nested")
	m, err = hb.Build(NestedTuple(hb, hlo.MaxTupleDepth, 4))
	require.NoError(t, err)
	parsed, err := hlo.ParseModule(NestedTupleText(hlo.MaxTupleDepth))
	require.NoError(t, err)
	require.True(t, parsed.Entry.Root.Shape.Equal(m.Entry.Root.Shape))
	require.ErrorIs(t, hlo.Verify(handMadeNested(hlo.MaxTupleDepth+1)), hlo.ErrTupleNesting)
}

// processCPU is the CPU time (user and system, every thread: the driver's
// included) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
