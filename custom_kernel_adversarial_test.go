package vkxla_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv"
	"github.com/vkxla/vkxla/targets"
)

// Adversarial inputs to the user-kernel path (issue 20): modules that are not
// SPIR-V, calls whose operands and results do not match the module's bindings, a
// kernel that writes past its results, a name registered twice, registrations
// from many goroutines. Each is a clear error or a documented behaviour
// (docs/custom-calls.md), never a crash.

// refused asserts that registering target failed with ErrInvalidArgument, naming
// the target and want, and registered nothing.
func refused(t *testing.T, target hlo.CustomCallTarget, want string) {
	t.Helper()
	err := vkxla.RegisterKernelTarget(target)
	require.Error(t, err)
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), fmt.Sprintf("%q", target.Name))
	assert.Contains(t, err.Error(), want)
	_, registered := hlo.LookupCustomCall(target.Name)
	assert.False(t, registered)
}

// Words that are not a valid module are refused at registration by SPIRV-Tools,
// whatever they hold: none, random words, a wrong or byte-swapped magic number,
// a header with random instructions after it.
func TestCustomKernelInvalidModules(t *testing.T) {
	words := axpyWords(t)
	rng := rand.New(rand.NewPCG(20, 4))
	random := func(n int) []uint32 {
		w := make([]uint32, n)
		for i := range w {
			w[i] = rng.Uint32()
		}
		return w
	}
	withMagic := func(m uint32) []uint32 { w := slices.Clone(words); w[0] = m; return w }
	for _, c := range []struct {
		name  string
		words []uint32
		want  string
	}{
		{"no words", nil, "does not validate"},
		{"random words", random(64), "does not validate"},
		{"wrong magic", withMagic(0xdeadbeef), "does not validate"},
		{"byte-swapped magic", withMagic(0x03022307), "does not validate"},
		{"header and random instructions", append(slices.Clone(words[:5]), random(40)...), "does not validate"},
		{"header only", slices.Clone(words[:5]), "does not validate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused(t, hlo.CustomCallTarget{Name: "test.invalid." + c.name, Kernel: axpyKernel(c.words), Reference: axpyReference}, c.want)
		})
	}
}

// Every proper prefix of a valid module (a file cut short anywhere) is refused.
func TestCustomKernelTruncatedModules(t *testing.T) {
	words := axpyWords(t)
	for n := range len(words) {
		err := vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: fmt.Sprintf("test.truncated.%d", n),
			Kernel: axpyKernel(slices.Clone(words[:n])), Reference: axpyReference})
		require.ErrorIs(t, err, vkxla.ErrInvalidArgument, "the first %d of %d words", n, len(words))
	}
}

// Modules with one word changed at random go through validation and the
// interface reader without a panic: each is refused with ErrInvalidArgument. (The
// targets have no Reference, so a mutant that passes both readers is refused by
// the registry's own check and none is registered.)
func TestCustomKernelMutatedModules(t *testing.T) {
	words := axpyWords(t)
	rng := rand.New(rand.NewPCG(20, 5))
	for i := range 300 {
		w := slices.Clone(words)
		at := 5 + rng.IntN(len(w)-5)
		switch i % 3 {
		case 0:
			w[at] = rng.Uint32()
		case 1:
			w[at] ^= 1 << rng.IntN(32)
		default:
			w[at] = w[at]&0xffff0000 | uint32(rng.IntN(400)) // another opcode, the same length
		}
		err := vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: fmt.Sprintf("test.mutant.%d", i), Kernel: axpyKernel(w)})
		require.ErrorIs(t, err, vkxla.ErrInvalidArgument, "word %d changed to %#x", at, w[at])
	}
}

// patchDecoration returns words with the value of the first OpDecorate of
// decoration dec whose value is from changed to to.
func patchDecoration(t *testing.T, words []uint32, dec spirv.Decoration, from, to uint32) []uint32 {
	t.Helper()
	w := slices.Clone(words)
	for i := 5; i < len(w); i += int(w[i] >> 16) {
		if spirv.Op(w[i]&0xffff) == spirv.OpDecorate && w[i]>>16 == 4 && spirv.Decoration(w[i+2]) == dec && w[i+3] == from {
			w[i+3] = to
			return w
		}
	}
	t.Fatalf("no decoration %v %d", dec, from)
	return nil
}

// Modules whose bindings break the interface (operands then results at bindings
// 0..n-1 of set 0) are refused at registration, naming the binding.
func TestCustomKernelBadBindings(t *testing.T) {
	words := axpyWords(t)
	for _, c := range []struct {
		name  string
		words []uint32
		want  string
	}{
		{"a gap", patchDecoration(t, words, spirv.DecorationBinding, 3, 4), "binding 3 is missing"},
		{"a binding twice", patchDecoration(t, words, spirv.DecorationBinding, 3, 1), "binding 1 is declared twice"},
		{"another set", patchDecoration(t, words, spirv.DecorationDescriptorSet, 0, 1), "descriptor set 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused(t, hlo.CustomCallTarget{Name: "test.bindings." + c.name, Kernel: axpyKernel(c.words), Reference: axpyReference}, c.want)
		})
	}
}

// A call with more or fewer operands or results than the module has bindings
// fails to compile, giving both counts.
func TestCustomKernelBindingCounts(t *testing.T) {
	rt := newRuntime(t)
	require.NoError(t, registerAxpy())
	for _, c := range []struct {
		name, hlo, want string
	}{
		{"an operand more", `x = f32[8] parameter(0)
  ROOT c = (f32[8], f32[8]) custom-call(x, x, x), custom_call_target="test.axpy_diff", backend_config="{\"a\": 1}"`,
			"the kernel binds 4 storage buffers; the call has 3 operands and 2 results"},
		{"a result fewer", `x = f32[8] parameter(0)
  ROOT c = f32[8] custom-call(x, x), custom_call_target="test.axpy_diff", backend_config="{\"a\": 1}"`,
			"the kernel binds 4 storage buffers; the call has 2 operands and 1 results"},
		{"a result more", `x = f32[8] parameter(0)
  ROOT c = (f32[8], f32[8], f32[8]) custom-call(x, x), custom_call_target="test.axpy_diff", backend_config="{\"a\": 1}"`,
			"the kernel binds 4 storage buffers; the call has 2 operands and 3 results"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlo.ParseModule("HloModule counts\nENTRY e {\n  " + c.hlo + "\n}")
			require.NoError(t, err)
			_, err = rt.Compile(context.Background(), m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), `custom-call c (kernel target "test.axpy_diff")`)
		})
	}
}

// Push constants shorter than the module's block fail to compile, naming both
// sizes (the device's interface check): the kernel would read past them.
func TestCustomKernelShortPushConstants(t *testing.T) {
	rt := newRuntime(t)
	k := axpyKernel(axpyWords(t))
	k.Push = func(*hlo.Instruction) ([]byte, error) { return make([]byte, 4), nil }
	require.NoError(t, vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.short_push", Kernel: k, Reference: axpyReference}))
	_, err := rt.Compile(context.Background(), kernelCallModule(t, "test.short_push", "f32", 8, "f32[8]"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "push constants: the module's block is 8 bytes, the spec passes 4")
}

// registerPastEnd registers testdata/kernels/axpy_past_end.spv: axpy_diff's
// results, plus writes one result length past each result's end and 64 Ki
// elements past the first's.
var registerPastEnd = sync.OnceValue(func() error {
	bin, err := os.ReadFile("testdata/kernels/axpy_past_end.spv")
	if err != nil {
		return err
	}
	words, err := spirv.Words(bin)
	if err != nil {
		return err
	}
	return vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.axpy_past_end", Summary: "axpy_diff, writing past its results",
		Kernel: axpyKernel(words), Reference: axpyReference})
})

// A kernel that writes past its results cannot be told at registration (the
// index is computed at run time). vkxla binds every argument with its exact byte
// range, so on a device that bounds-checks storage-buffer access (lavapipe
// always does; other drivers with robustBufferAccess, which vkxla does not
// enable) the stray writes are dropped: here the buffers planned right after the
// kernel's results, live across the call, keep their values, and every output
// equals cpuref's bit for bit. On other devices such a write is undefined
// behaviour (docs/custom-calls.md).
func TestCustomKernelWritesPastItsResults(t *testing.T) {
	require.NoError(t, registerPastEnd())
	const n = 256
	m, err := hlo.ParseModule(fmt.Sprintf(`HloModule past_end, entry_computation_layout={(f32[%[1]d]{0}, f32[%[1]d]{0})->(f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0})}

ENTRY %%main (x: f32[%[1]d], y: f32[%[1]d]) -> (f32[%[1]d], f32[%[1]d], f32[%[1]d], f32[%[1]d], f32[%[1]d]) {
  %%x = f32[%[1]d]{0} parameter(0)
  %%y = f32[%[1]d]{0} parameter(1)
  %%neg = f32[%[1]d]{0} negate(f32[%[1]d]{0} %%y)
  %%before = f32[%[1]d]{0} multiply(f32[%[1]d]{0} %%x, f32[%[1]d]{0} %%x)
  %%call = (f32[%[1]d]{0}, f32[%[1]d]{0}) custom-call(f32[%[1]d]{0} %%x, f32[%[1]d]{0} %%neg), custom_call_target="test.axpy_past_end", backend_config="{\"a\": 2.5}"
  %%sum = f32[%[1]d]{0} get-tuple-element((f32[%[1]d]{0}, f32[%[1]d]{0}) %%call), index=0
  %%diff = f32[%[1]d]{0} get-tuple-element((f32[%[1]d]{0}, f32[%[1]d]{0}) %%call), index=1
  %%after = f32[%[1]d]{0} add(f32[%[1]d]{0} %%before, f32[%[1]d]{0} %%sum)
  ROOT %%out = (f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0}, f32[%[1]d]{0}) tuple(%%sum, %%diff, %%neg, %%before, %%after)
}
`, n))
	require.NoError(t, err)

	// The stray writes land on planned buffers: some range starts within one
	// result length after the end of a result of the call.
	dev, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	p, err := vkxla.PlanFor(context.Background(), m, dev, "")
	require.NoError(t, err)
	rs := p.Arena().Ranges
	neighbours := 0
	for _, r := range rs {
		if r.Size != 4*n {
			continue
		}
		for _, o := range rs {
			if o.Block == r.Block && o.Offset >= r.Offset+r.Size && o.Offset < r.Offset+2*r.Size {
				neighbours++
			}
		}
	}
	require.Positive(t, neighbours, "no buffer planned within a result length after another:\n%s", p)

	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(20, 6))
	s := hlo.MakeShape(hlo.F32, n)
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, randomLiteral(rng, s, unitDomain), randomLiteral(rng, s, unitDomain))
}

// runMatchesCPU compiles and runs m on rt and compares its one output with
// cpuref's bit for bit: checkAgainstCPU for a goroutine other than the test's.
func runMatchesCPU(rt *vkxla.Runtime, m *hlo.Module, inputs ...*hlo.Literal) (err error) {
	want, err := cpuref.Eval(m, inputs...)
	if err != nil {
		return err
	}
	exe, err := rt.Compile(context.Background(), m)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	got, err := exe.Run(context.Background(), inputs...)
	if err != nil {
		return err
	}
	return vkxla.ErrorSpec{}.Check(got[0], want)
}

// A name registered twice: the second fails with hlo.ErrDuplicateCustomCall (not
// ErrInvalidArgument: the entry is fine, the name is taken), the first stays.
func TestCustomKernelRegisteredTwice(t *testing.T) {
	words := axpyWords(t)
	first := hlo.CustomCallTarget{Name: "test.twice", Summary: "first", Kernel: axpyKernel(words), Reference: axpyReference}
	require.NoError(t, vkxla.RegisterKernelTarget(first))
	second := first
	second.Summary = "second"
	err := vkxla.RegisterKernelTarget(second)
	require.ErrorIs(t, err, hlo.ErrDuplicateCustomCall)
	assert.NotErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), `"test.twice"`)
	got, ok := hlo.LookupCustomCall("test.twice")
	require.True(t, ok)
	assert.Equal(t, "first", got.Summary)
}

// The registry keeps its own copy of the module: overwriting the caller's words
// after registration changes nothing that was validated.
func TestCustomKernelKeepsItsOwnWords(t *testing.T) {
	words := axpyWords(t)
	want := slices.Clone(words)
	require.NoError(t, vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.own_words", Kernel: axpyKernel(words), Reference: axpyReference}))
	clear(words)
	got, ok := hlo.LookupCustomCall("test.own_words")
	require.True(t, ok)
	assert.Equal(t, want, got.Kernel.Words)
}

// Registrations from many goroutines at once, while others compile and run a
// program that calls a registered kernel: each distinct name is registered, of
// one shared name exactly one registration wins and the rest get
// ErrDuplicateCustomCall, and the running program is right. Run with -race.
func TestCustomKernelRegisterConcurrently(t *testing.T) {
	rt := newRuntime(t)
	m := kernelCallModule(t, "test.axpy_diff", "f32", 64, "f32[64]")
	words := axpyWords(t)
	const goroutines = 8
	shared := make([]error, goroutines)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range goroutines {
		wg.Add(3)
		go func() {
			defer wg.Done()
			<-start
			assert.NoError(t, vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: fmt.Sprintf("test.concurrent.%d", i),
				Kernel: axpyKernel(words), Reference: axpyReference}))
		}()
		go func() {
			defer wg.Done()
			<-start
			shared[i] = vkxla.RegisterKernelTarget(hlo.CustomCallTarget{Name: "test.concurrent.shared",
				Kernel: axpyKernel(words), Reference: axpyReference})
		}()
		go func() {
			defer wg.Done()
			<-start
			rng := rand.New(rand.NewPCG(20, uint64(i)))
			s := hlo.MakeShape(hlo.F32, 64)
			assert.NoError(t, runMatchesCPU(rt, m, randomLiteral(rng, s, unitDomain), randomLiteral(rng, s, unitDomain)))
		}()
	}
	close(start)
	wg.Wait()
	for i := range goroutines {
		_, ok := hlo.LookupCustomCall(fmt.Sprintf("test.concurrent.%d", i))
		assert.True(t, ok, "test.concurrent.%d", i)
	}
	wins := 0
	for _, err := range shared {
		if err == nil {
			wins++
			continue
		}
		assert.True(t, errors.Is(err, hlo.ErrDuplicateCustomCall), "%v", err)
	}
	assert.Equal(t, 1, wins, "registrations of one name that succeeded")
}
