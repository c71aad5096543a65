package cpuref

import "unsafe"

// The AVX2 kernels of kernel_amd64.s. They compute exactly what macKernel does.

func cpuidAVX2() bool

//go:noescape
func macF32x64(acc *float32, a *float32, k *int32, n int, b *float32)

//go:noescape
func macF32x8(acc *float32, a *float32, k *int32, n int, b *float32)

func cpuidAVX512() bool

//go:noescape
func macF32x64Z(acc *float32, a *float32, k *int32, n int, b *float32)

var (
	hasAVX2   = cpuidAVX2()
	hasAVX512 = hasAVX2 && cpuidAVX512()
)

// f32Kernel is the fastest exact float32 kernel this processor runs.
func f32Kernel() kernelFunc[float32] {
	if !hasAVX2 {
		return macKernel[float32]
	}
	return simdF32Kernel
}

func simdF32Kernel(acc, a []float32, k []int32, b []float32, nr int) {
	if len(a) == 0 {
		return
	}
	_ = acc[nr-1]
	_ = k[len(a)-1]
	if nr == wideLanes && hasAVX512 {
		macF32x64Z(&acc[0], &a[0], &k[0], len(a), unsafe.SliceData(b))
	} else if nr == wideLanes {
		macF32x64(&acc[0], &a[0], &k[0], len(a), unsafe.SliceData(b))
	} else {
		macF32x8(&acc[0], &a[0], &k[0], len(a), unsafe.SliceData(b))
	}
}

func cpuidFMA() bool

// fmaPeakLoop runs n iterations of 12 independent 8-lane fused multiply-adds (192
// flops each): the benchmarks' measure of the processor's float32 peak. Only
// benchmarks call it.
func fmaPeakLoop(n int) float32
