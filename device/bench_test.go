package device_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

// Benchmarks run without the validation layer: they measure the binding and the
// driver, not the layer.
func openBench(b *testing.B) *device.Device {
	b.Helper()
	d, err := device.Open(device.Options{})
	if err != nil {
		b.Skipf("no Vulkan device: %v", err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

// BenchmarkOpen: instance and device creation plus destruction.
func BenchmarkOpen(b *testing.B) {
	for _, validation := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "validation"}[validation]
		b.Run(name, func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				d, err := device.Open(device.Options{Validation: validation})
				if err != nil {
					b.Skipf("cannot open: %v", err)
				}
				require.NoError(b, d.Close())
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/open")
		})
	}
}

// BenchmarkDispatchRoundTrip: submit a recorded one-workgroup dispatch and wait.
func BenchmarkDispatchRoundTrip(b *testing.B) {
	d := openBench(b)
	k := newKernel(b, d, incSPV, incSpec)
	buf := newBuffer(b, d, 256)
	cb := newCommandBuffer(b, d)
	recordInc(b, cb, k, buf, 64)
	ctx := context.Background()
	start := time.Now()
	for b.Loop() {
		if err := d.Submit(ctx, cb); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/1000/float64(b.N), "µs/op")
}

// BenchmarkRecordDispatch: recording cost of a dispatch with its barrier (the host
// side only; nothing is submitted).
func BenchmarkRecordDispatch(b *testing.B) {
	d := openBench(b)
	k := newKernel(b, d, incSPV, incSpec)
	buf := newBuffer(b, d, 256)
	cb := newCommandBuffer(b, d)
	r := []device.BufferRange{{Buffer: buf}}
	push := devicetest.U32Bytes(64)
	const perRecording = 100
	n := 0
	start := time.Now()
	for b.Loop() {
		if n%perRecording == 0 {
			require.NoError(b, cb.Begin())
		}
		require.NoError(b, cb.Dispatch(k, r, push, 1, 1, 1))
		require.NoError(b, cb.Barrier())
		n++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/dispatch")
}

// BenchmarkNewKernel: shader module, layouts and compute pipeline for a small kernel.
func BenchmarkNewKernel(b *testing.B) {
	d := openBench(b)
	spec := device.KernelSpec{Bindings: 3, PushConstantSize: 8, SpecConstants: []uint32{64, 0x3f800000}}
	for b.Loop() {
		k, err := d.NewKernel(addSPV, spec)
		if err != nil {
			b.Fatal(err)
		}
		k.Close()
	}
}

// BenchmarkWriteRead: 1 MiB host copies into and out of a mapped buffer.
func BenchmarkWriteRead(b *testing.B) {
	d := openBench(b)
	buf := newBuffer(b, d, 1<<20)
	data := make([]byte, 1<<20)
	b.SetBytes(2 << 20)
	for b.Loop() {
		require.NoError(b, buf.Write(0, data))
		require.NoError(b, buf.Read(0, data))
	}
}
