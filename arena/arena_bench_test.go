package arena

import (
	"context"
	"strconv"
	"testing"

	"github.com/vkxla/vkxla/device/devicetest"
)

// BenchmarkArenaAllocFree is BenchmarkHeapAllocFree through the device-backed
// Arena (its lock and Range construction); blocks are allocated before timing.
func BenchmarkArenaAllocFree(b *testing.B) {
	_, a := newArena(b, Options{})
	held := make([]Allocation, 256)
	var err error
	for i := range held {
		if held[i], err = a.Alloc(int64(16 << (i % 14))); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		j := i % len(held)
		if err := a.Free(held[j]); err != nil {
			b.Fatal(err)
		}
		if held[j], err = a.Alloc(int64(16 << (i * 7 % 14))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransfer measures Upload, Download and Zero in GB/s, with the memory
// mapped (lavapipe's memory is host-visible) and forced through the staging buffer,
// next to a plain Go copy of the same size as the baseline of this machine.
func BenchmarkTransfer(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		b.Run("gocopy/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) { benchGoCopy(b, size) })
	}
	for _, staged := range []bool{false, true} {
		for _, size := range []int{1 << 20, 64 << 20} {
			mode := map[bool]string{false: "mapped", true: "staged"}[staged]
			name := mode + "/" + strconv.Itoa(size>>20) + "MiB"
			b.Run("upload/"+name, func(b *testing.B) { benchTransfer(b, staged, size, "upload") })
			b.Run("download/"+name, func(b *testing.B) { benchTransfer(b, staged, size, "download") })
			if !staged {
				b.Run("zero/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) { benchTransfer(b, false, size, "zero") })
			}
		}
	}
}

func benchTransfer(b *testing.B, staged bool, size int, op string) {
	d := devicetest.Open(b)
	a, err := New(d, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	a.xfer.force = staged
	x, err := a.Alloc(int64(size))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	buf := randomBytes(size, 1)
	if err := a.Upload(ctx, x.Range, buf); err != nil { // warm: pages touched, staging made
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		switch op {
		case "upload":
			err = a.Upload(ctx, x.Range, buf)
		case "download":
			err = a.Download(ctx, x.Range, buf)
		default:
			err = a.Zero(ctx, x.Range)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

// benchGoCopy is the baseline: copy() between two Go slices of size bytes.
func benchGoCopy(b *testing.B, size int) {
	src, dst := randomBytes(size, 1), make([]byte, size)
	copy(dst, src)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		copy(dst, src)
	}
	b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
