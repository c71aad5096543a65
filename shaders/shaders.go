// Package shaders holds vkxla's hand-written GLSL compute shaders: runtime utilities
// (fill, strided copy) and performance baselines (saxpy, three sgemm variants, a
// two-pass sum) that generated kernels are measured against on the same device.
//
// Each shader is a *.comp file compiled by `go generate` with glslc into a committed
// *.spv file, which is embedded here. A test recompiles every shader and fails if the
// committed SPIR-V is stale, validates it with spirv-val, and checks the interface
// declared below (bindings, push-constant size, local size) against the SPIR-V itself.
//
// The package knows nothing of Vulkan objects: a Shader carries the SPIR-V and the
// numbers a runtime needs to build a pipeline, and each shader's *Dispatch function
// returns its push constants and workgroup counts. With the device package:
//
//	k, err := d.NewKernel(shaders.Fill.SPIRV, device.KernelSpec{
//		EntryPoint: shaders.Fill.EntryPoint, Bindings: shaders.Fill.Bindings,
//		PushConstantSize: shaders.Fill.PushConstantSize})
//	g := shaders.FillDispatch(0, words, 0)
//	cb.Dispatch(k, []device.BufferRange{{Buffer: buf}}, g.Push, g.Groups[0], g.Groups[1], g.Groups[2])
//
// Every shader loops grid-stride, so the workgroup counts the Dispatch functions
// return never exceed MaxGroups per dimension (the Vulkan minimum, and lavapipe's
// limit) whatever the problem size. Buffers are storage buffers at set 0, bindings 0..
// Bindings-1, std430; offsets and counts in push constants are in elements of the
// bound range, which the caller binds at an offset aligned to the device's
// minStorageBufferOffsetAlignment.
package shaders

import (
	"embed"
	"fmt"
)

// glslc flags: -O runs the SPIRV-Tools optimiser; Vulkan 1.1 (SPIR-V 1.3) is the oldest
// target vkxla supports. The up-to-date test compiles with the same line.
//
//go:generate glslc -O --target-env=vulkan1.1 -o fill.spv fill.comp
//go:generate glslc -O --target-env=vulkan1.1 -o copy.spv copy.comp
//go:generate glslc -O --target-env=vulkan1.1 -o saxpy.spv saxpy.comp
//go:generate glslc -O --target-env=vulkan1.1 -o saxpy_vec4.spv saxpy_vec4.comp
//go:generate glslc -O --target-env=vulkan1.1 -o sgemm_naive.spv sgemm_naive.comp
//go:generate glslc -O --target-env=vulkan1.1 -o sgemm_tiled.spv sgemm_tiled.comp
//go:generate glslc -O --target-env=vulkan1.1 -o sgemm_vec4.spv sgemm_vec4.comp
//go:generate glslc -O --target-env=vulkan1.1 -o reduce_sum.spv reduce_sum.comp

//go:embed *.spv
var spvFiles embed.FS

// Shader is one compute shader and its interface.
type Shader struct {
	Name             string    // file name without extension: Name.comp, Name.spv
	SPIRV            []byte    // the compiled module (shared; do not modify)
	EntryPoint       string    // always "main"
	Bindings         int       // storage buffers at set 0, bindings 0..Bindings-1
	PushConstantSize int       // bytes of push constants every dispatch passes
	LocalSize        [3]uint32 // workgroup size
}

func load(name string, bindings, push int, local [3]uint32) Shader {
	b, err := spvFiles.ReadFile(name + ".spv")
	if err != nil {
		// Only a missing go:embed file gets here, which the build would have caught.
		panic(fmt.Sprintf("shaders: %s.spv is not embedded: %v", name, err))
	}
	return Shader{Name: name, SPIRV: b, EntryPoint: "main", Bindings: bindings,
		PushConstantSize: push, LocalSize: local}
}

// The shaders. Bindings are listed in order; push constants are described on the
// matching *Dispatch function.
var (
	// Fill writes a 32-bit pattern to a range of words. Binding 0: the words.
	Fill = load("fill", 1, fillPushSize, [3]uint32{64, 1, 1})
	// Copy is a rank-≤4 strided copy of 32-bit elements. Bindings: 0 source,
	// 1 destination.
	Copy = load("copy", 2, copyPushSize, [3]uint32{64, 1, 1})
	// Saxpy computes y = a·x + y, one float per invocation. Bindings: 0 x, 1 y.
	Saxpy = load("saxpy", 2, saxpyPushSize, [3]uint32{64, 1, 1})
	// SaxpyVec4 computes y = a·x + y, four floats per invocation. Bindings: 0 x, 1 y.
	SaxpyVec4 = load("saxpy_vec4", 2, saxpyPushSize, [3]uint32{64, 1, 1})
	// SgemmNaive computes C = A·B, one output per invocation. Bindings: 0 A, 1 B, 2 C.
	SgemmNaive = load("sgemm_naive", 3, gemmPushSize, [3]uint32{16, 4, 1})
	// SgemmTiled computes C = A·B with 64×64 shared-memory tiles. Bindings: 0 A, 1 B, 2 C.
	SgemmTiled = load("sgemm_tiled", 3, gemmPushSize, [3]uint32{8, 8, 1})
	// SgemmVec4 computes C = A·B with 8×8 vec4 register blocks and no shared memory.
	// Bindings: 0 A, 1 B, 2 C.
	SgemmVec4 = load("sgemm_vec4", 3, gemmPushSize, [3]uint32{32, 1, 1})
	// ReduceSum sums floats into one partial sum per workgroup. Bindings: 0 input,
	// 1 partial sums.
	ReduceSum = load("reduce_sum", 2, reducePushSize, [3]uint32{64, 1, 1})
)

// All lists every shader, in the order of the go:generate lines.
func All() []Shader {
	return []Shader{Fill, Copy, Saxpy, SaxpyVec4, SgemmNaive, SgemmTiled, SgemmVec4, ReduceSum}
}

// ByName returns the shader called name.
func ByName(name string) (Shader, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Shader{}, false
}
