package vkxla

// KernelSpec is kernelSpec, for the external tests that run generated kernels on
// the device directly.
var KernelSpec = kernelSpec
