package shaders_test

// Baseline figures: go test -run '^$' -bench . -benchtime 3x ./shaders/
// The device is opened without the validation layer, which adds work to every
// submission. Each benchmark records one command buffer and times submit-and-wait;
// it reports the mean rate, the best single submission (best_*), and the work per
// CPU-second of the whole process (*/cpu-s: lavapipe's worker threads are threads of
// this process). On a machine shared with other jobs the wall-clock rates fall with the
// time-slicing; the per-CPU-second figure is spared that part (not shared caches or a
// hypervisor's contention, so it varies too), and on an idle machine the wall-clock
// rate approaches it times the number of lavapipe threads.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/shaders"
)

func openBench(b *testing.B) *device.Device {
	b.Helper()
	d, err := device.Open(device.Options{})
	if errors.Is(err, device.ErrNoDevice) {
		b.Skipf("no Vulkan device: %v", err)
	}
	require.NoError(b, err)
	b.Cleanup(func() { d.Close() })
	return d
}

// emptyBuffer creates a buffer of size bytes without uploading anything but zeros.
func emptyBuffer(b *testing.B, d *device.Device, size int) *device.Buffer {
	b.Helper()
	return newBuffer(b, d, make([]byte, size))
}

// benchSteps times the recorded steps and reports amount/second in unit (amount per
// submission: bytes or floating-point operations, scaled by 1e9 for GB/s, GFLOP/s).
func benchSteps(b *testing.B, d *device.Device, amount float64, unit string, steps ...step) {
	b.Helper()
	cb, err := d.NewCommandBuffer()
	require.NoError(b, err)
	b.Cleanup(func() { cb.Close() })
	record(b, cb, steps...)
	ctx := context.Background()
	require.NoError(b, d.Submit(ctx, cb)) // warm-up: first touch of the memory
	best := time.Duration(1<<63 - 1)
	cpu0 := cpuTime(b)
	for b.Loop() {
		start := time.Now()
		if err := d.Submit(ctx, cb); err != nil {
			b.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	cpu := (cpuTime(b) - cpu0).Seconds() / float64(b.N)
	mean := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(amount/mean/1e9, unit)
	b.ReportMetric(amount/best.Seconds()/1e9, "best_"+unit)
	b.ReportMetric(amount/cpu/1e9, strings.TrimSuffix(unit, "/s")+"/cpu-s")
}

// cpuTime is the user plus system time of the process, all threads.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const n16M = 16 << 20

func BenchmarkFill(b *testing.B) {
	d := openBench(b)
	k := newKernel(b, d, shaders.Fill)
	buf := emptyBuffer(b, d, 4*n16M)
	g, err := shaders.FillDispatch(0, n16M, 7)
	require.NoError(b, err)
	benchSteps(b, d, 4*n16M, "GB/s", step{k, []device.BufferRange{{Buffer: buf}}, g})
}

// BenchmarkCopy counts bytes read plus bytes written.
func BenchmarkCopy(b *testing.B) {
	d := openBench(b)
	k := newKernel(b, d, shaders.Copy)
	src, dst := emptyBuffer(b, d, 4*n16M), emptyBuffer(b, d, 4*n16M)
	for _, c := range []struct {
		name string
		c    shaders.StridedCopy
	}{
		{"contiguous16M", rowMajorCopy([]int{n16M}, 0, 0)},
		{"transpose4096", transposeCopy(4096, 4096)},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, err := shaders.CopyDispatch(c.c)
			require.NoError(b, err)
			benchSteps(b, d, 8*n16M, "GB/s", step{k, []device.BufferRange{{Buffer: src}, {Buffer: dst}}, g})
		})
	}
}

// BenchmarkSaxpy counts 12 bytes per element: x read, y read and written.
func BenchmarkSaxpy(b *testing.B) {
	d := openBench(b)
	x, y := emptyBuffer(b, d, 4*n16M), emptyBuffer(b, d, 4*n16M)
	for _, v := range []struct {
		s        shaders.Shader
		dispatch func(int, float32) (shaders.Dispatch, error)
	}{
		{shaders.Saxpy, shaders.SaxpyDispatch},
		{shaders.SaxpyVec4, shaders.SaxpyVec4Dispatch},
	} {
		b.Run(v.s.Name+"/16M", func(b *testing.B) {
			k := newKernel(b, d, v.s)
			g, err := v.dispatch(n16M, 1.5)
			require.NoError(b, err)
			benchSteps(b, d, 12*n16M, "GB/s", step{k, []device.BufferRange{{Buffer: x}, {Buffer: y}}, g})
		})
	}
}

func BenchmarkSgemm(b *testing.B) {
	d := openBench(b)
	const maxN = 1024
	a, bm, c := emptyBuffer(b, d, 4*maxN*maxN), emptyBuffer(b, d, 4*maxN*maxN), emptyBuffer(b, d, 4*maxN*maxN)
	for _, v := range []struct {
		s        shaders.Shader
		dispatch func(m, n, k int) (shaders.Dispatch, error)
	}{
		{shaders.SgemmNaive, shaders.SgemmNaiveDispatch},
		{shaders.SgemmTiled, shaders.SgemmTiledDispatch},
		{shaders.SgemmVec4, shaders.SgemmVec4Dispatch},
	} {
		for _, n := range []int{512, maxN} {
			b.Run(fmt.Sprintf("%s/%d", v.s.Name, n), func(b *testing.B) {
				k := newKernel(b, d, v.s)
				g, err := v.dispatch(n, n, n)
				require.NoError(b, err)
				benchSteps(b, d, 2*float64(n)*float64(n)*float64(n), "GFLOP/s",
					step{k, []device.BufferRange{{Buffer: a}, {Buffer: bm}, {Buffer: c}}, g})
			})
		}
	}
}

// BenchmarkReduceSum times both passes and counts the input bytes.
func BenchmarkReduceSum(b *testing.B) {
	d := openBench(b)
	k := newKernel(b, d, shaders.ReduceSum)
	x := emptyBuffer(b, d, 4*n16M)
	pass1, pass2, partials, err := shaders.ReduceSumDispatch(n16M)
	require.NoError(b, err)
	p, out := emptyBuffer(b, d, 4*partials), emptyBuffer(b, d, 16)
	benchSteps(b, d, 4*n16M, "GB/s",
		step{k, []device.BufferRange{{Buffer: x}, {Buffer: p}}, pass1},
		step{k, []device.BufferRange{{Buffer: p}, {Buffer: out}}, pass2})
}
