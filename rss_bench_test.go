package vkxla_test

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// Resident memory per compile: does the process grow with every distinct compile,
// and is it the runtime's doing or the driver's? The first benchmark compiles and
// closes distinct modules through the runtime; the others create and destroy raw
// pipelines of distinct (or identical) SPIR-V through package device alone. Equal
// growth per kernel in both says the driver (or layer) keeps it; scripts/rssprobe
// shows that the device's destruction gives it back. Linux only (RSS from
// /proc/self/statm); docs/runtime.md has the figures:
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench RSS -benchtime 2000x .

// addConstModule is x + i over f32[16]: each i is a distinct kernel (the constant
// is part of the SPIR-V).
func addConstModule(tb testing.TB, i int) *hlo.Module {
	b := hlo.NewBuilder("addc")
	x := b.Parameter(f32(16), "x")
	return mustBuild(tb, b, b.Add(x, b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(i)), 16)))
}

// rssWarmup compiles this many kernels before measuring, so that one-time costs
// (the driver's first pipeline, caches reaching their steady size) are excluded.
const rssWarmup = 100

func BenchmarkRSSDistinctCompiles(b *testing.B) {
	rt := newRuntime(b)
	ctx := context.Background()
	compile := func(i int) {
		exe, err := rt.Compile(ctx, addConstModule(b, i), vkxla.WithoutCache())
		require.NoError(b, err)
		require.NoError(b, exe.Close())
	}
	for i := range rssWarmup {
		compile(-1 - i)
	}
	measureRSS(b, "compile", func(i int) { compile(i) })
}

func BenchmarkRSSRawPipelinesDistinct(b *testing.B) {
	benchRawPipelines(b, func(i int) int { return i })
}

func BenchmarkRSSRawPipelinesSame(b *testing.B) {
	benchRawPipelines(b, func(int) int { return 0 })
}

// benchRawPipelines creates and destroys one pipeline per op straight through
// package device, of the SPIR-V of addConstModule(which(i)), generated beforehand.
func benchRawPipelines(b *testing.B, which func(int) int) {
	d := devicetest.Open(b)
	target := vkxla.TargetFromCaps(d.Caps())
	kernel := func(i int) *codegen.Kernel {
		prog, err := codegen.Lower(addConstModule(b, which(i)).Entry, target)
		require.NoError(b, err)
		require.Len(b, prog.Dispatches, 1)
		return prog.Dispatches[0].Kernel
	}
	if which(0) != which(1) {
		require.False(b, bytes.Equal(kernel(0).SPIRV, kernel(1).SPIRV), "distinct constants give distinct SPIR-V")
	}
	kernels := make([]*codegen.Kernel, rssWarmup+b.N)
	for i := range kernels {
		kernels[i] = kernel(i)
	}
	create := func(k *codegen.Kernel) {
		dk, err := d.NewKernel(k.SPIRV, vkxla.KernelSpec(k))
		require.NoError(b, err)
		require.NoError(b, dk.Close())
	}
	for _, k := range kernels[:rssWarmup] {
		create(k)
	}
	measureRSS(b, "pipeline", func(i int) { create(kernels[rssWarmup+i]) })
	require.Zero(b, d.LiveObjects())
}

// measureRSS runs op b.N times and reports the growth of resident memory and of
// the Go heap per op.
func measureRSS(b *testing.B, unit string, op func(i int)) {
	rss0, heap0 := settledMemory(b)
	b.ResetTimer()
	for i := range b.N {
		op(i)
	}
	b.StopTimer()
	rss1, heap1 := settledMemory(b)
	b.ReportMetric(float64(rss1-rss0)/float64(b.N), "rss-B/"+unit)
	b.ReportMetric(float64(heap1-heap0)/float64(b.N), "goheap-B/"+unit)
	b.ReportMetric(float64(rss1)/(1<<20), "rss-MiB")
}

// settledMemory is the resident set and the Go heap in use after a full GC.
func settledMemory(b *testing.B) (rss, heap int64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("resident memory is read from /proc/self/statm (Linux): %v", err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(statm))[1], 10, 64)
	require.NoError(b, err)
	return pages * int64(os.Getpagesize()), int64(ms.HeapInuse)
}
