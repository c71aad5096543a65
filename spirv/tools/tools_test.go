package tools_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/internal/testkernels"
	"github.com/vkxla/vkxla/spirv/tools"
)

// scalarLayout is a compute module whose block puts a vec3 at offset 8 (straddling a
// 16-byte boundary): valid
// only with scalar block layout.
const scalarLayout = `
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %Block Block
OpMemberDecorate %Block 0 Offset 0
OpMemberDecorate %Block 1 Offset 8
OpDecorate %buf DescriptorSet 0
OpDecorate %buf Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%v3float = OpTypeVector %float 3
%Block = OpTypeStruct %float %v3float
%ptr = OpTypePointer StorageBuffer %Block
%buf = OpVariable %ptr StorageBuffer
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
`

func TestTargetEnv(t *testing.T) {
	assert.Equal(t, "Vulkan 1.1", tools.Vulkan1_1.String())
	assert.Equal(t, spirv.Version1_3, tools.Vulkan1_1.MaxVersion())
	assert.Equal(t, spirv.Version1_4, tools.Vulkan1_1SPIRV1_4.MaxVersion())
	assert.Equal(t, spirv.Version1_5, tools.Vulkan1_2.MaxVersion())
	assert.Equal(t, spirv.Version1_6, tools.Vulkan1_3.MaxVersion())
	bad := tools.TargetEnv(99)
	assert.Equal(t, "TargetEnv(99)", bad.String())
	assert.Error(t, tools.Validate(nil, bad))
	_, err := tools.Optimize(nil, bad)
	assert.Error(t, err)
	_, err = tools.Assemble("", bad)
	assert.Error(t, err)
}

func TestAssembleDisassembleRoundTrip(t *testing.T) {
	words, err := tools.Assemble(scalarLayout, tools.Vulkan1_1)
	require.NoError(t, err)
	assert.Equal(t, uint32(spirv.Version1_3), words[1], "Assemble uses the env's SPIR-V version")
	text, err := tools.Disassemble(words)
	require.NoError(t, err)
	again, err := tools.Assemble(text, tools.Vulkan1_1)
	require.NoError(t, err)
	assert.Equal(t, words, again)
	assert.True(t, strings.HasPrefix(text, "OpCapability Shader\n"), "no header by default")
}

func TestDisassembleFlags(t *testing.T) {
	words, err := tools.Assemble(scalarLayout, tools.Vulkan1_1)
	require.NoError(t, err)
	withHeader, err := tools.Disassemble(words, tools.Header)
	require.NoError(t, err)
	assert.Contains(t, withHeader, "; SPIR-V\n; Version: 1.3")
	indented, err := tools.Disassemble(words, tools.Indent)
	require.NoError(t, err)
	assert.Contains(t, indented, "               OpCapability Shader")
	_, err = tools.Disassemble([]uint32{1, 2, 3})
	assert.Error(t, err)
}

func TestAssembleErrorHasPosition(t *testing.T) {
	_, err := tools.Assemble("OpCapability Shader\nOpNotAnInstruction %x\n", tools.Vulkan1_1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
	assert.Contains(t, err.Error(), "OpNotAnInstruction")
}

func TestValidateLayoutOptions(t *testing.T) {
	words, err := tools.Assemble(scalarLayout, tools.Vulkan1_1)
	require.NoError(t, err)
	err = tools.Validate(words, tools.Vulkan1_1)
	require.Error(t, err, "std430 and relaxed layout forbid the straddling vec3")
	assert.Contains(t, err.Error(), "straddling vector at offset 8")
	assert.NoError(t, tools.Validate(words, tools.Vulkan1_1, tools.ScalarBlockLayout()))
	_, err = tools.Optimize(words, tools.Vulkan1_1)
	assert.Error(t, err, "the optimiser validates its input too")
	_, err = tools.Optimize(words, tools.Vulkan1_1, tools.ScalarBlockLayout())
	assert.NoError(t, err)
}

func TestValidateRejectsGarbage(t *testing.T) {
	for name, words := range map[string][]uint32{
		"empty":    nil,
		"no magic": {1, 2, 3, 4, 5},
		"truncated": func() []uint32 {
			w, _ := tools.Assemble(scalarLayout, tools.Vulkan1_1)
			return w[:len(w)-3]
		}(),
	} {
		err := tools.Validate(words, tools.Vulkan1_1)
		assert.Error(t, err, name)
	}
	_, err := tools.Optimize([]uint32{1, 2, 3}, tools.Vulkan1_1)
	var te *tools.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "optimize", te.Op)
}

// TestConcurrentUse runs every tool from several goroutines at once: the
// cached contexts must be safe to share.
func TestConcurrentUse(t *testing.T) {
	words, err := testkernels.GEMM(spirv.Version1_3).Assemble()
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 8 {
		wg.Go(func() {
			errs <- tools.Validate(words, tools.Vulkan1_1)
			_, err := tools.Disassemble(words)
			errs <- err
			_, err = tools.Optimize(words, tools.Vulkan1_1)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func gemmWords(b *testing.B) []uint32 {
	words, err := testkernels.GEMM(spirv.Version1_3).Assemble()
	require.NoError(b, err)
	return words
}

// The benchmarks time SPIRV-Tools on the tiled GEMM, the largest kernel in
// testkernels (about the size of what the compiler emits for a dot).

func BenchmarkValidate(b *testing.B) {
	words := gemmWords(b)
	for b.Loop() {
		if err := tools.Validate(words, tools.Vulkan1_1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(words)), "words")
}

func BenchmarkOptimize(b *testing.B) {
	words := gemmWords(b)
	var out []uint32
	for b.Loop() {
		var err error
		if out, err = tools.Optimize(words, tools.Vulkan1_1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(out))/float64(len(words)), "size-ratio")
}

func BenchmarkDisassemble(b *testing.B) {
	words := gemmWords(b)
	for b.Loop() {
		if _, err := tools.Disassemble(words); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildGEMM(b *testing.B) {
	for b.Loop() {
		if _, err := testkernels.GEMM(spirv.Version1_3).Assemble(); err != nil {
			b.Fatal(err)
		}
	}
}
