package spirv_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/spirv/internal/testkernels"
	"github.com/vkxla/vkxla/spirv/tools"
)

var update = flag.Bool("update", false, "rewrite the golden disassembly in testdata/")

// envs pairs each Vulkan environment with the newest SPIR-V it consumes; the
// 1.4 pair checks the entry-point interface rule that changes there.
var envs = []tools.TargetEnv{tools.Vulkan1_1, tools.Vulkan1_1SPIRV1_4, tools.Vulkan1_2, tools.Vulkan1_3}

func assemble(t testing.TB, m *spirv.Module) []uint32 {
	t.Helper()
	words, err := m.Assemble()
	require.NoError(t, err)
	return words
}

func TestKernelsValidate(t *testing.T) {
	for _, env := range envs {
		for _, k := range testkernels.All {
			t.Run(env.String()+"/"+k.Name, func(t *testing.T) {
				words := assemble(t, k.Build(env.MaxVersion()))
				if err := tools.Validate(words, env); err != nil {
					text, _ := tools.Disassemble(words)
					t.Fatalf("%v\n%s", err, text)
				}
			})
		}
	}
}

func TestKernelsOptimize(t *testing.T) {
	for _, k := range testkernels.All {
		t.Run(k.Name, func(t *testing.T) {
			words := assemble(t, k.Build(spirv.Version1_3))
			opt, err := tools.Optimize(words, tools.Vulkan1_1)
			require.NoError(t, err)
			require.NoError(t, tools.Validate(opt, tools.Vulkan1_1))
		})
	}
}

func TestOptimizeShrinksRedundantLoads(t *testing.T) {
	words := assemble(t, testkernels.RedundantLoads(spirv.Version1_3))
	opt, err := tools.Optimize(words, tools.Vulkan1_1)
	require.NoError(t, err)
	require.NoError(t, tools.Validate(opt, tools.Vulkan1_1))
	assert.Less(t, len(opt), len(words), "optimised module should be smaller")
	before, after := countOps(t, words, "OpLoad"), countOps(t, opt, "OpLoad")
	assert.Less(t, after, before, "loads: %d before, %d after", before, after)
	assert.Zero(t, countOps(t, opt, "OpVariable %_ptr_Function"), "mem2reg leaves no Function variable")
}

func countOps(t *testing.T, words []uint32, needle string) int {
	text, err := tools.Disassemble(words)
	require.NoError(t, err)
	return strings.Count(text, needle)
}

func TestOptimizeKeepsBindings(t *testing.T) {
	m := spirv.NewModule(spirv.Version1_3)
	f32 := m.TypeF32()
	m.StorageBuffer("unused", 0, 3, f32, spirv.ReadOnly)
	out := m.StorageBuffer("out", 0, 4, f32, 0)
	k := m.Kernel("main", 1, 1, 1)
	k.StoreElem(out, m.U32(0), m.F32(1))
	opt, err := tools.Optimize(assemble(t, m), tools.Vulkan1_1)
	require.NoError(t, err)
	text, err := tools.Disassemble(opt)
	require.NoError(t, err)
	assert.Contains(t, text, "Binding 3", "an unused binding stays, so descriptor layouts match")
}

// TestGoldenDisassembly pins the exact output of the builder for two small
// kernels; refresh with `go test ./spirv -run Golden -update`.
func TestGoldenDisassembly(t *testing.T) {
	for _, k := range []testkernels.Kernel{{Name: "vector_add", Build: testkernels.VectorAdd}, {Name: "shared_reduce", Build: testkernels.SharedReduce}} {
		text, err := tools.Disassemble(assemble(t, k.Build(spirv.Version1_3)))
		require.NoError(t, err)
		path := filepath.Join("testdata", k.Name+".spvasm")
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run with -update to create the golden file")
		assert.Equal(t, string(want), text)
	}
}

// TestInvalidModuleError checks that a module the builder assembles but the
// validator rejects (an f32 pointer stored with a u32) yields an error that
// names the instruction and the problem.
func TestInvalidModuleError(t *testing.T) {
	m := spirv.NewModule(spirv.Version1_3)
	out := m.StorageBuffer("out", 0, 0, m.TypeF32(), 0)
	k := m.Kernel("main", 1, 1, 1)
	k.StoreElem(out, m.U32(0), m.U32(7))
	err := tools.Validate(assemble(t, m), tools.Vulkan1_1)
	require.Error(t, err)
	var te *tools.Error
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "validate", te.Op)
	assert.Contains(t, err.Error(), "OpStore")
	assert.Contains(t, err.Error(), "Vulkan 1.1")
	assert.Positive(t, te.WordIndex)
	t.Log(err)
}

// TestVersionRules covers what changes with the SPIR-V version: the
// StorageBuffer extension before 1.3 and the full interface from 1.4.
func TestVersionRules(t *testing.T) {
	text := func(v spirv.Version) string {
		s, err := tools.Disassemble(assemble(t, testkernels.VectorAdd(v)))
		require.NoError(t, err)
		return s
	}
	assert.Contains(t, text(spirv.Version1_0), `OpExtension "SPV_KHR_storage_buffer_storage_class"`)
	assert.NotContains(t, text(spirv.Version1_3), "OpExtension")
	assert.Contains(t, text(spirv.Version1_3), `OpEntryPoint GLCompute %main "main" %GlobalInvocationId`+"\n")
	assert.Contains(t, text(spirv.Version1_4), `OpEntryPoint GLCompute %main "main" %a %b %c %params %GlobalInvocationId`)
}

func TestCapabilitiesFollowTypes(t *testing.T) {
	caps := func(build func(spirv.Version) *spirv.Module) string {
		s, err := tools.Disassemble(assemble(t, build(spirv.Version1_3)))
		require.NoError(t, err)
		return s
	}
	assert.Contains(t, caps(testkernels.Int64), "OpCapability Int64\n")
	assert.Contains(t, caps(testkernels.Int64), "OpCapability Int64Atomics")
	assert.Contains(t, caps(testkernels.Float16), "OpCapability Float16")
	assert.Contains(t, caps(testkernels.Float16), "OpCapability StorageBuffer16BitAccess")
	assert.Contains(t, caps(testkernels.Int8), "OpCapability StorageBuffer8BitAccess")
	assert.Contains(t, caps(testkernels.Int8), `OpExtension "SPV_KHR_8bit_storage"`)
	assert.Contains(t, caps(testkernels.Subgroup), "OpCapability GroupNonUniformArithmetic")
	assert.Contains(t, caps(testkernels.Subgroup), "OpCapability GroupNonUniformShuffle")
	assert.NotContains(t, caps(testkernels.VectorAdd), "Int64")
}
