package shaders

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needTool returns the path of a command-line tool. Without it the test is skipped,
// except in CI (CI=true), where scripts/setup.sh installs it and its absence is a
// failure.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (CI=true makes this a failure): %v", name, err)
		}
		t.Skipf("%s is not installed (apt-get install glslc spirv-tools): %v", name, err)
	}
	return path
}

// generateLine matches this package's go:generate lines.
var generateLine = regexp.MustCompile(`(?m)^//go:generate glslc (.+) -o (\w+)\.spv (\w+)\.comp$`)

type generateCmd struct {
	flags []string
	name  string
}

// generateCmds parses the go:generate lines of shaders.go.
func generateCmds(t *testing.T) []generateCmd {
	t.Helper()
	src, err := os.ReadFile("shaders.go")
	require.NoError(t, err)
	var cmds []generateCmd
	for _, m := range generateLine.FindAllStringSubmatch(string(src), -1) {
		require.Equal(t, m[2], m[3], "go:generate line compiles %s.comp into %s.spv", m[3], m[2])
		cmds = append(cmds, generateCmd{flags: strings.Fields(m[1]), name: m[2]})
	}
	require.NotEmpty(t, cmds, "no go:generate glslc lines in shaders.go")
	return cmds
}

// TestEveryShaderIsGeneratedAndExported checks that the .comp files, the go:generate
// lines, the committed .spv files and All() name the same shaders.
func TestEveryShaderIsGeneratedAndExported(t *testing.T) {
	comps, err := filepath.Glob("*.comp")
	require.NoError(t, err)
	spvs, err := filepath.Glob("*.spv")
	require.NoError(t, err)
	var fromComp, fromSPV, fromGen, fromAll []string
	for _, f := range comps {
		fromComp = append(fromComp, strings.TrimSuffix(f, ".comp"))
	}
	for _, f := range spvs {
		fromSPV = append(fromSPV, strings.TrimSuffix(f, ".spv"))
	}
	for _, c := range generateCmds(t) {
		fromGen = append(fromGen, c.name)
	}
	for _, s := range All() {
		fromAll = append(fromAll, s.Name)
		got, ok := ByName(s.Name)
		assert.True(t, ok, s.Name)
		assert.Equal(t, s.SPIRV, got.SPIRV, s.Name)
	}
	slices.Sort(fromGen)
	slices.Sort(fromAll)
	assert.Equal(t, fromComp, fromGen, ".comp files vs go:generate lines")
	assert.Equal(t, fromComp, fromSPV, ".comp files vs committed .spv files")
	assert.Equal(t, fromComp, fromAll, ".comp files vs All()")
	_, ok := ByName("no_such_shader")
	assert.False(t, ok)
}

// TestSPIRVUpToDate recompiles every shader exactly as go:generate does and compares
// the bytes with the committed, embedded .spv.
func TestSPIRVUpToDate(t *testing.T) {
	glslc := needTool(t, "glslc")
	dir := t.TempDir()
	for _, c := range generateCmds(t) {
		out := filepath.Join(dir, c.name+".spv")
		args := append(append([]string{}, c.flags...), "-o", out, c.name+".comp")
		msg, err := exec.Command(glslc, args...).CombinedOutput()
		require.NoError(t, err, "glslc %s: %s", strings.Join(args, " "), msg)
		fresh, err := os.ReadFile(out)
		require.NoError(t, err)
		committed, err := os.ReadFile(c.name + ".spv")
		require.NoError(t, err)
		s, ok := ByName(c.name)
		require.True(t, ok, c.name)
		assert.True(t, bytes.Equal(fresh, committed), "%s.spv is stale: run go generate ./shaders", c.name)
		assert.True(t, bytes.Equal(committed, s.SPIRV), "embedded %s.spv differs from the file: rebuild", c.name)
	}
}

// TestSPIRVValid runs spirv-val for every Vulkan version vkxla targets.
func TestSPIRVValid(t *testing.T) {
	val := needTool(t, "spirv-val")
	dir := t.TempDir()
	for _, s := range All() {
		path := filepath.Join(dir, s.Name+".spv")
		require.NoError(t, os.WriteFile(path, s.SPIRV, 0o644))
		for _, env := range []string{"vulkan1.1", "vulkan1.2", "vulkan1.3"} {
			msg, err := exec.Command(val, "--target-env", env, path).CombinedOutput()
			assert.NoError(t, err, "spirv-val --target-env %s %s: %s", env, s.Name, msg)
		}
	}
}

// TestInterfaceMatchesSPIRV reads bindings, push-constant size, local size and entry
// point out of each module and compares them with the Shader's declared interface.
func TestInterfaceMatchesSPIRV(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			r := reflectSPIRV(t, s.SPIRV)
			assert.Equal(t, []string{s.EntryPoint}, r.entryPoints)
			assert.Equal(t, s.LocalSize, r.localSize)
			assert.Equal(t, s.PushConstantSize, r.pushSize)
			var want []int
			for b := range s.Bindings {
				want = append(want, b)
			}
			assert.Equal(t, want, r.bindings, "bindings at set 0 (aliased views share a binding)")
			assert.Equal(t, []int{0}, r.sets)
		})
	}
}

// reflection is what TestInterfaceMatchesSPIRV reads from a module.
type reflection struct {
	entryPoints []string
	localSize   [3]uint32
	pushSize    int
	bindings    []int // distinct, sorted
	sets        []int // distinct, sorted
}

// SPIR-V opcodes, decorations and storage classes the reflection needs.
const (
	opEntryPoint    = 15
	opExecutionMode = 16
	opTypeInt       = 21
	opTypeFloat     = 22
	opTypeVector    = 23
	opTypeArray     = 28
	opTypeStruct    = 30
	opTypePointer   = 32
	opConstant      = 43
	opVariable      = 59
	opDecorate      = 71
	opMemberDecor   = 72

	decArrayStride   = 6
	decBinding       = 33
	decDescriptorSet = 34
	decOffset        = 35

	execLocalSize = 17

	storagePushConstant = 9
)

func reflectSPIRV(t *testing.T, b []byte) reflection {
	t.Helper()
	require.Zero(t, len(b)%4)
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	require.Greater(t, len(w), 5)
	require.Equal(t, uint32(0x07230203), w[0], "SPIR-V magic")

	var r reflection
	insts := map[uint32][]uint32{} // result id -> instruction (types, constants)
	decor := map[[2]uint32]uint32{}
	memberOffset := map[[2]uint32]uint32{}
	var pushVar []uint32
	bindings, sets := map[int]bool{}, map[int]bool{}
	for i := 5; i < len(w); {
		n, op := int(w[i]>>16), w[i]&0xffff
		require.NotZero(t, n, "zero-length instruction at word %d", i)
		in := w[i : i+n]
		switch op {
		case opEntryPoint:
			r.entryPoints = append(r.entryPoints, spirvString(in[3:]))
		case opExecutionMode:
			if in[2] == execLocalSize {
				r.localSize = [3]uint32{in[3], in[4], in[5]}
			}
		case opTypeInt, opTypeFloat, opTypeVector, opTypeArray, opTypeStruct, opTypePointer, opConstant:
			id := in[1]
			if op == opConstant {
				id = in[2]
			}
			insts[id] = in
		case opVariable:
			if in[3] == storagePushConstant {
				pushVar = in
			}
		case opDecorate:
			if len(in) > 3 {
				decor[[2]uint32{in[1], in[2]}] = in[3]
			}
			switch in[2] {
			case decBinding:
				bindings[int(in[3])] = true
			case decDescriptorSet:
				sets[int(in[3])] = true
			}
		case opMemberDecor:
			if in[3] == decOffset {
				memberOffset[[2]uint32{in[1], in[2]}] = in[4]
			}
		}
		i += n
	}
	r.bindings, r.sets = sortedKeys(bindings), sortedKeys(sets)
	if pushVar != nil {
		ptr := insts[pushVar[1]]
		require.Equal(t, uint32(opTypePointer), ptr[0]&0xffff)
		block := insts[ptr[3]]
		require.Equal(t, uint32(opTypeStruct), block[0]&0xffff)
		var size func(id uint32) int
		size = func(id uint32) int {
			in := insts[id]
			switch in[0] & 0xffff {
			case opTypeInt, opTypeFloat:
				return int(in[2]) / 8
			case opTypeVector:
				return int(in[3]) * size(in[2])
			case opTypeArray:
				return int(insts[in[3]][3]) * int(decor[[2]uint32{id, decArrayStride}])
			}
			t.Fatalf("push-constant member of unexpected type (opcode %d)", in[0]&0xffff)
			return 0
		}
		for m, member := range block[2:] {
			off, ok := memberOffset[[2]uint32{block[1], uint32(m)}]
			require.True(t, ok, "push-constant member %d has no Offset", m)
			r.pushSize = max(r.pushSize, int(off)+size(member))
		}
	}
	return r
}

func spirvString(w []uint32) string {
	var b []byte
	for _, x := range w {
		for k := 0; k < 4; k++ {
			c := byte(x >> (8 * k))
			if c == 0 {
				return string(b)
			}
			b = append(b, c)
		}
	}
	return string(b)
}

func sortedKeys(m map[int]bool) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
