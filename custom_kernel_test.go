package vkxla_test

//go:generate glslc -O --target-env=vulkan1.1 -o testdata/kernels/axpy_diff.spv testdata/kernels/axpy_diff.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/kernels/axpy_past_end.spv testdata/kernels/axpy_past_end.comp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/targets"
)

// A user kernel in the custom-call registry: testdata/kernels/axpy_diff.comp
// (compiled by the go:generate line above) takes x, y: f32[n] and a from the
// call's backend_config, and gives (a·x + y, x − y). "test.axpy_diff" is defined
// for cpuref by a Go function, "test.axpy_diff_hlo" by an HLO decomposition.

const axpySPV = "testdata/kernels/axpy_diff.spv"

func axpyWords(t testing.TB) []uint32 {
	t.Helper()
	bin, err := os.ReadFile(axpySPV)
	require.NoError(t, err)
	words, err := spirv.Words(bin)
	require.NoError(t, err)
	return words
}

// axpyA reads a from the call's backend_config {"a": …}.
func axpyA(call *hlo.Instruction) (float32, error) {
	cfg, err := call.Attrs.CustomCall.BackendConfigMap()
	if err != nil {
		return 0, err
	}
	a, ok := cfg["a"].(float64)
	if !ok {
		return 0, fmt.Errorf("backend_config has no number a: %v", cfg)
	}
	return float32(a), nil
}

// axpyShapes accepts x, y: f32[n] of one shape and the result (x's, x's).
func axpyShapes(call *hlo.Instruction) (int64, error) {
	if len(call.Operands) != 2 {
		return 0, fmt.Errorf("takes x and y, got %d operands", len(call.Operands))
	}
	x, y := call.Operands[0].Shape, call.Operands[1].Shape
	if !x.Equal(y) || x.Rank() != 1 || !call.Shape.Equal(hlo.MakeTuple(x, x)) {
		return 0, fmt.Errorf("wants x, y: f32[n] alike and a result (f32[n], f32[n]); got %v, %v → %v", x, y, call.Shape)
	}
	return x.NumElements(), nil
}

func axpyKernel(words []uint32) *hlo.SPIRVKernel {
	return &hlo.SPIRVKernel{Words: words, EntryPoint: "main",
		Groups: func(call *hlo.Instruction) ([3]uint32, error) {
			n, err := axpyShapes(call)
			return [3]uint32{uint32((n + 63) / 64), 1, 1}, err
		},
		Push: func(call *hlo.Instruction) ([]byte, error) {
			n, err := axpyShapes(call)
			if err != nil {
				return nil, err
			}
			a, err := axpyA(call)
			if err != nil {
				return nil, err
			}
			return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(n)), math.Float32bits(a)), nil
		}}
}

// axpyReference is the kernel's definition, rounding each step as the kernel does.
func axpyReference(call *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	a, err := axpyA(call)
	if err != nil {
		return nil, err
	}
	x, y := ops[0], ops[1]
	sum, diff := hlo.NewLiteral(x.Shape()), hlo.NewLiteral(x.Shape())
	for i := range x.NumElements() {
		xi, yi := float32(x.Float64(i)), float32(y.Float64(i))
		sum.SetFloat64(i, float64(float32(a*xi)+yi))
		diff.SetFloat64(i, float64(xi-yi))
	}
	return hlo.TupleLiteral(sum, diff), nil
}

// axpyExpand is the same as HLO.
func axpyExpand(b *hlo.Builder, call *hlo.Instruction, xs []*hlo.Instruction) (*hlo.Instruction, error) {
	if _, err := axpyShapes(call); err != nil {
		return nil, err
	}
	a, err := axpyA(call)
	if err != nil {
		return nil, err
	}
	av := b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(a)), xs[0].Shape.Dims...)
	return b.Tuple(b.Add(b.Mul(av, xs[0]), xs[1]), b.Sub(xs[0], xs[1])), nil
}

var registerAxpy = sync.OnceValue(func() error {
	bin, err := os.ReadFile(axpySPV)
	if err != nil {
		return err
	}
	words, err := spirv.Words(bin)
	if err != nil {
		return err
	}
	return errors.Join(
		vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.axpy_diff", Summary: "(a·x + y, x − y)",
			Kernel: axpyKernel(words), Reference: axpyReference}),
		vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.axpy_diff_hlo", Summary: "(a·x + y, x − y)",
			Kernel: axpyKernel(words), Expand: axpyExpand}))
})

// kernelCallModule calls target on x: f32[n] and y (of shape ys), in the style of an
// XLA dump, and feeds both results to fused arithmetic around the call.
func kernelCallModule(t testing.TB, target, ty string, n int, ys string) *hlo.Module {
	t.Helper()
	require.NoError(t, registerAxpy())
	xs := fmt.Sprintf("%s[%d]", ty, n)
	m, err := hlo.ParseModule(fmt.Sprintf(`HloModule user_kernel, entry_computation_layout={(%[1]s{0}, %[2]s{0})->%[1]s{0}}

ENTRY %%main (x: %[1]s, y: %[2]s) -> %[1]s {
  %%x = %[1]s{0} parameter(0)
  %%y = %[2]s{0} parameter(1)
  %%neg = %[2]s{0} negate(%[2]s{0} %%y)
  %%call = (%[1]s{0}, %[1]s{0}) custom-call(%[1]s{0} %%x, %[2]s{0} %%neg), custom_call_target="%[3]s", backend_config="{\"a\": 2.5}"
  %%sum = %[1]s{0} get-tuple-element((%[1]s{0}, %[1]s{0}) %%call), index=0
  %%diff = %[1]s{0} get-tuple-element((%[1]s{0}, %[1]s{0}) %%call), index=1
  ROOT %%out = %[1]s{0} multiply(%[1]s{0} %%sum, %[1]s{0} %%diff)
}
`, xs, ys, target))
	require.NoError(t, err)
	return m
}

// The kernel runs on the device, between fused kernels, and agrees bit for bit
// with its Go reference and with its HLO decomposition on cpuref.
func TestKernelTargetMatchesReference(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(4, 5))
	for _, target := range []string{"test.axpy_diff", "test.axpy_diff_hlo"} {
		for _, n := range []int{1, 64, 1000} {
			t.Run(fmt.Sprintf("%s/%d", target, n), func(t *testing.T) {
				m := kernelCallModule(t, target, "f32", n, fmt.Sprintf("f32[%d]", n))
				s := hlo.MakeShape(hlo.F32, int64(n))
				checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, randomLiteral(rng, s, unitDomain), randomLiteral(rng, s, unitDomain))
			})
		}
	}
}

// The call reaches code generation as one dispatch of the user's module, which
// SPIRV-Tools validated at registration and validates again with the kernels.
func TestKernelTargetIsOneDispatch(t *testing.T) {
	require.NoError(t, registerAxpy())
	dev, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	p, err := vkxla.PlanFor(context.Background(), kernelCallModule(t, "test.axpy_diff", "f32", 100, "f32[100]"), dev, "")
	require.NoError(t, err)
	var found int
	for _, ref := range p.Kernels() {
		if bytes.Equal(ref.Kernel.SPIRV, spirv.Bytes(axpyWords(t))) {
			found++
			assert.Equal(t, 4, ref.Kernel.Bindings)
			assert.Equal(t, 8, ref.Kernel.PushConstantSize)
			assert.Equal(t, [3]uint32{64, 1, 1}, ref.Kernel.LocalSize)
		}
	}
	assert.Equal(t, 1, found, "the user's kernel among the plan's kernels")
}

// Calls that do not fit the kernel fail to compile, naming the target and the
// instruction: a binding count, an element type, shapes the kernel's Groups refuses.
func TestKernelTargetMismatches(t *testing.T) {
	rt := newRuntime(t)
	require.NoError(t, registerAxpy())
	one, err := hlo.ParseModule(`HloModule one
ENTRY e {
  x = f32[8] parameter(0)
  ROOT c = (f32[8], f32[8]) custom-call(x), custom_call_target="test.axpy_diff", backend_config="{\"a\": 1}"
}`)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		m    *hlo.Module
		want string
	}{
		{"binding count", one, "the kernel binds 4 storage buffers; the call has 1 operands and 2 results"},
		{"element type", kernelCallModule(t, "test.axpy_diff", "s32", 8, "s32[8]"), "binding 0 is an array of 32-bit floats, but operand 0 is s32[8]"},
		{"shapes", kernelCallModule(t, "test.axpy_diff", "f32", 8, "f32[9]"), "wants x, y: f32[n] alike"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := rt.Compile(context.Background(), c.m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), `kernel target "test.axpy_diff"`)
			assert.Regexp(t, `custom-call (c|call)\b`, err.Error())
		})
	}
}

// Registration refuses what could never run: an invalid module (SPIRV-Tools), a
// missing entry point, no definition for cpuref.
func TestRegisterKernelTargetRefuses(t *testing.T) {
	words := axpyWords(t)
	broken := append([]uint32{}, words...)
	broken = broken[:len(broken)-3] // cut inside the function
	for _, c := range []struct {
		name string
		t    hlo.CustomCallTarget
		want string
	}{
		{"invalid module", hlo.CustomCallTarget{Name: "test.broken", Kernel: axpyKernel(broken), Reference: axpyReference}, "does not validate"},
		{"entry point", hlo.CustomCallTarget{Name: "test.entry", Kernel: &hlo.SPIRVKernel{Words: words, EntryPoint: "nope",
			Groups: func(*hlo.Instruction) ([3]uint32, error) { return [3]uint32{1, 1, 1}, nil }}, Reference: axpyReference}, `no GLCompute entry point "nope"`},
		{"no definition", hlo.CustomCallTarget{Name: "test.undefined", Kernel: axpyKernel(words)}, "needs a Reference function or an Expand decomposition"},
		{"no kernel", hlo.CustomCallTarget{Name: "test.nokernel", Reference: axpyReference}, "no Kernel"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := vkxla.RegisterKernelTarget(c.t)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			_, registered := hlo.LookupCustomCall(c.t.Name)
			assert.False(t, registered)
		})
	}
}

// The committed .spv files are what their go:generate lines make of the GLSL.
func TestKernelSPIRVUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("glslc is not installed: %v", err)
		}
		t.Skipf("glslc is not installed (apt-get install glslc): %v", err)
	}
	src, err := os.ReadFile("custom_kernel_test.go")
	require.NoError(t, err)
	var lines [][]string
	for _, line := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(line, "//go:generate glslc "); ok {
			lines = append(lines, strings.Fields(rest))
		}
	}
	require.Len(t, lines, 2)
	for _, args := range lines {
		var committed string
		out := filepath.Join(t.TempDir(), "k.spv")
		for i, a := range args {
			if a == "-o" {
				committed, args[i+1] = args[i+1], out
			}
		}
		require.NotEmpty(t, committed, "-o in %v", args)
		msg, err := exec.Command(glslc, args...).CombinedOutput()
		require.NoError(t, err, "%s", msg)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		want, err := os.ReadFile(committed)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(got, want), "%s is stale: run go generate", committed)
	}
}
