//go:build !amd64

package cpuref

// f32Kernel is the portable kernel where there is no SIMD one.
func f32Kernel() kernelFunc[float32] { return macKernel[float32] }
