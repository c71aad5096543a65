package vkxla_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/arena"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// negateModule is -x over f32[n].
func negateModule(t testing.TB, n int64) *hlo.Module {
	b := hlo.NewBuilder("negate")
	x := b.Parameter(f32(n), "x")
	return mustBuild(t, b, b.Negate(x))
}

func f32Literal(vs ...float32) *hlo.Literal {
	return hlo.MustFromSlice([]int64{int64(len(vs))}, vs)
}

func f32Values(t testing.TB, lit *hlo.Literal) []float32 {
	t.Helper()
	vs, err := hlo.Values[float32](lit)
	require.NoError(t, err)
	return vs
}

// TestConcurrentCompileAndClose: Close while compiles are in flight waits for them
// (or stops them between stages); every compile either succeeds or fails with
// ErrClosed, and no Vulkan object is left once Close returns.
func TestConcurrentCompileAndClose(t *testing.T) {
	d := devicetest.Open(t)
	var compiled atomic.Int32
	for trial := range 8 {
		rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
		require.NoError(t, err)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for g := range errs {
			wg.Go(func() {
				for i := range 4 {
					exe, err := rt.Compile(context.Background(), axpyModule(t, int64(1+64*trial+16*g+i)))
					if err != nil {
						errs[g] = err
						return
					}
					compiled.Add(1)
					if err := exe.Close(); err != nil {
						errs[g] = err
						return
					}
				}
			})
		}
		time.Sleep(time.Duration(trial) * 3 * time.Millisecond)
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "trial %d: Vulkan objects left after Close", trial)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				require.ErrorIs(t, err, vkxla.ErrClosed, "trial %d", trial)
			}
		}
		require.Zero(t, d.LiveObjects(), "trial %d: Vulkan objects made after Close", trial)
	}
	t.Logf("%d compiles finished before Close", compiled.Load())
}

// TestRunOnDeviceRejectsClosedTensor: a closed tensor's pool memory may already hold
// another tensor; RunOnDevice must refuse it rather than read that tensor.
func TestRunOnDeviceRejectsClosedTensor(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, negateModule(t, 4))
	require.NoError(t, err)
	defer exe.Close()
	x, err := rt.Upload(ctx, f32Literal(1, 2, 3, 4))
	require.NoError(t, err)
	require.NoError(t, x.Close())
	y, err := rt.Upload(ctx, f32Literal(5, 6, 7, 8)) // takes x's freed memory
	require.NoError(t, err)
	defer y.Close()

	_, err = exe.RunOnDevice(ctx, x)
	require.ErrorIs(t, err, vkxla.ErrClosed)
	assert.Contains(t, err.Error(), "input 0")
	_, err = x.ToHost(ctx)
	require.ErrorIs(t, err, vkxla.ErrClosed)

	outs, err := exe.RunOnDevice(ctx, y) // the live tensor still works
	require.NoError(t, err)
	got, err := outs[0].ToHost(ctx)
	require.NoError(t, err)
	require.NoError(t, outs[0].Close())
	assert.Equal(t, []float32{-5, -6, -7, -8}, f32Values(t, got))
}

// TestNilArgumentsAreInvalid: nil contexts, literals and tensors, and zero values,
// are ErrInvalidArgument, never a panic.
func TestNilArgumentsAreInvalid(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, axpyModule(t, 4))
	require.NoError(t, err)
	defer exe.Close()
	in := axpyInputs(rand.New(rand.NewPCG(1, 4)), 4)
	x, err := rt.Upload(ctx, in[1])
	require.NoError(t, err)
	defer x.Close()
	var nilCtx context.Context
	var zero vkxla.DeviceTensor
	var nilTensor *vkxla.DeviceTensor

	for name, call := range map[string]func() error{
		"Run(nil ctx)":               func() error { _, err := exe.Run(nilCtx, in...); return err },
		"RunOnDevice(nil ctx)":       func() error { _, err := exe.RunOnDevice(nilCtx, in[0], x, in[2]); return err },
		"Run(nil literals)":          func() error { _, err := exe.Run(ctx, nil, nil, nil); return err },
		"RunOnDevice(nil tensor)":    func() error { _, err := exe.RunOnDevice(ctx, in[0], nilTensor, in[2]); return err },
		"RunOnDevice(zero tensor)":   func() error { _, err := exe.RunOnDevice(ctx, in[0], &zero, in[2]); return err },
		"RunOnDevice(nil literal)":   func() error { _, err := exe.RunOnDevice(ctx, in[0], (*hlo.Literal)(nil), in[2]); return err },
		"Upload(nil literal)":        func() error { _, err := rt.Upload(ctx, nil); return err },
		"Upload(nil ctx)":            func() error { _, err := rt.Upload(nilCtx, in[1]); return err },
		"ToHost(nil ctx)":            func() error { _, err := x.ToHost(nilCtx); return err },
		"zero tensor ToHost":         func() error { _, err := zero.ToHost(ctx); return err },
		"zero tensor Close":          zero.Close,
		"nil tensor ToHost":          func() error { _, err := nilTensor.ToHost(ctx); return err },
		"nil tensor Close":           nilTensor.Close,
		"zero executable Run":        func() error { _, err := (&vkxla.Executable{}).Run(ctx); return err },
		"zero executable Close":      (&vkxla.Executable{}).Close,
		"zero executable Profile":    func() error { _, err := (&vkxla.Executable{}).Profile(); return err },
		"nil executable RunOnDevice": func() error { _, err := (*vkxla.Executable)(nil).RunOnDevice(ctx); return err },
		"Compile(nil ctx)":           func() error { _, err := rt.Compile(nilCtx, axpyModule(t, 4)); return err },
		"Compile(nil module)":        func() error { _, err := rt.Compile(ctx, nil); return err },
	} {
		require.NotPanics(t, func() { err = call() }, name)
		require.ErrorIs(t, err, vkxla.ErrInvalidArgument, name)
	}
	assert.Equal(t, hlo.Shape{}, zero.Shape())
	assert.Equal(t, hlo.Shape{}, nilTensor.Shape())

	// A module made by hand with a nil operand is the verifier's to refuse.
	m := negateModule(t, 4)
	m.Entry.Root.Operands[0] = nil
	require.NotPanics(t, func() { _, err = rt.Compile(ctx, m) })
	require.ErrorIs(t, err, hlo.ErrVerify)
	assert.Contains(t, err.Error(), "operand 0 is nil")
}

// TestClosedErrorsAreErrClosed: whatever layer notices the closed runtime (the
// runtime, the tensor pool, the device), callers see vkxla.ErrClosed.
func TestClosedErrorsAreErrClosed(t *testing.T) {
	d := newRuntime(t).Device()
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
	require.NoError(t, err)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, axpyModule(t, 4))
	require.NoError(t, err)
	in := axpyInputs(rand.New(rand.NewPCG(1, 5)), 4)
	_, err = exe.Run(ctx, in...)
	require.NoError(t, err)
	require.NoError(t, rt.Close())

	_, err = rt.Upload(ctx, in[1])
	require.ErrorIs(t, err, vkxla.ErrClosed, "Upload")
	_, err = exe.Profile()
	require.ErrorIs(t, err, vkxla.ErrClosed, "Profile")
	_, err = exe.RunOnDevice(ctx, in[0], in[1], in[2])
	require.ErrorIs(t, err, vkxla.ErrClosed, "RunOnDevice")
	require.ErrorIs(t, rt.ClearCaches(), vkxla.ErrClosed, "ClearCaches")
	require.NoError(t, exe.Close())
	assert.ErrorIs(t, arena.ErrClosed, vkxla.ErrClosed)
	assert.ErrorIs(t, device.ErrClosed, vkxla.ErrClosed)
}

// TestCompileKeepsItsOwnModule: editing the module after Compile changes nothing
// about the executable.
func TestCompileKeepsItsOwnModule(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m := negateModule(t, 8)
	exe, err := rt.Compile(ctx, m, vkxla.WithoutCache())
	require.NoError(t, err)
	defer exe.Close()
	m.Entry.Params[0].Shape = f32(4)
	m.Entry.Root.Shape = f32(4)
	m.Entry.Root.Name = "edited"

	_, err = exe.Run(ctx, f32Literal(1, 2, 3, 4))
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "expected f32[8], got f32[4]")
	outs, err := exe.Run(ctx, f32Literal(1, 2, 3, 4, 5, 6, 7, 8))
	require.NoError(t, err)
	assert.Equal(t, []float32{-1, -2, -3, -4, -5, -6, -7, -8}, f32Values(t, outs[0]))
	assert.NotEqual(t, "edited", exe.Module().Entry.Root.Name)
	exe.Module().Entry.Root.Name = "edited too"
	assert.NotEqual(t, "edited too", exe.Module().Entry.Root.Name, "Module returns a copy")
}

// TestNewRuntimeOnClosedDevice fails at once, not at the first Compile.
func TestNewRuntimeOnClosedDevice(t *testing.T) {
	devicetest.Open(t) // a device exists (or the test skips / fails in CI)
	d, err := device.Open(device.Options{Validation: devicetest.Validation()})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = vkxla.NewRuntime(vkxla.WithDevice(d))
	require.ErrorIs(t, err, vkxla.ErrClosed)
}

// TestDumpStaysInsideItsDirectory: module names are sanitised, ".." included.
func TestDumpStaysInsideItsDirectory(t *testing.T) {
	d := newRuntime(t).Device()
	parent := t.TempDir()
	dir := filepath.Join(parent, "dump")
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithDumpDir(dir))
	require.NoError(t, err)
	defer rt.Close()
	for _, name := range []string{"..", ".", "../escape", ""} {
		m := negateModule(t, 4)
		m.Name = name
		exe, err := rt.Compile(context.Background(), m, vkxla.WithoutCache())
		require.NoError(t, err, "module %q", name)
		require.NoError(t, exe.Close())
	}
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the dump directory is in its parent")
	inputs, err := filepath.Glob(filepath.Join(dir, "*", "00-input.hlo"))
	require.NoError(t, err)
	assert.Len(t, inputs, 4, "%v", inputs)
}

// TestDumpDirUnwritable: a dump directory that cannot be written is an error of
// the option, reported once by NewRuntime; one that stops being writable later
// fails the Compile that could not dump.
func TestDumpDirUnwritable(t *testing.T) {
	d := newRuntime(t).Device()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithDumpDir(filepath.Join(file, "dump")))
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "dump directory")

	dir := filepath.Join(t.TempDir(), "dump")
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithDumpDir(dir))
	require.NoError(t, err)
	defer rt.Close()
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.WriteFile(dir, nil, 0o644)) // the directory is now a file
	_, err = rt.Compile(context.Background(), negateModule(t, 4))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dump")
	assert.Zero(t, rt.MemoryStats().Executables, "the failed compile released its executable")
}

// TestCompileChecksDeviceMemory: a plan larger than the device's memory fails at
// Compile with ErrOutOfDeviceMemory naming the sizes, before anything is allocated;
// what the runtime already holds counts against it.
func TestCompileChecksDeviceMemory(t *testing.T) {
	rt := newRuntime(t)
	caps := rt.Device().Caps()
	var heap int64
	for _, h := range caps.MemoryHeaps {
		heap += h.Size
	}
	outputs := func(k int) *hlo.Module { return wideOutputs(t, k) }
	k := int(heap/(4*chunk)) + 2
	_, err := rt.Compile(context.Background(), outputs(k))
	require.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
	assert.Contains(t, err.Error(), "device memory")
	t.Log(err)
	assert.Zero(t, rt.MemoryStats().Executables)
	require.Zero(t, rt.Device().LiveObjects()-liveBaseline(rt))

	// Two plans that each fit, but not together.
	half := int(heap/(4*chunk))/2 + 1
	exe, err := rt.Compile(context.Background(), outputs(half))
	require.NoError(t, err)
	_, err = rt.Compile(context.Background(), outputs(half+1))
	require.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
	assert.Contains(t, err.Error(), "held by the runtime")

	// Once no caller holds the first, its cache entry makes room for the second.
	require.NoError(t, exe.Close())
	require.Equal(t, 1, rt.CacheStats().Entries)
	exe, err = rt.Compile(context.Background(), outputs(half+1))
	require.NoError(t, err)
	require.NoError(t, exe.Close())
	assert.Equal(t, 1, rt.CacheStats().Entries, "the unheld entry was dropped")
	assert.Equal(t, 1, rt.MemoryStats().Executables)
}

// TestCompileRefusesOverflowingShapes: f32[2^31,2^31,4] has 2^64 elements, which
// wrapped to 0 bytes, and a module made by hand with it compiled and "ran"
// returning nothing; Compile refuses it (the verifier), before any allocation.
func TestCompileRefusesOverflowingShapes(t *testing.T) {
	rt := newRuntime(t)
	x := &hlo.Instruction{Name: "x", Op: hlo.OpParameter, Shape: hlo.MakeShape(hlo.F32, 1<<31, 1<<31, 4)}
	c := &hlo.Computation{Name: "huge", Params: []*hlo.Instruction{x}, Instructions: []*hlo.Instruction{x}, Root: x}
	m := &hlo.Module{Name: "huge", Entry: c, Computations: []*hlo.Computation{c}}
	_, err := rt.Compile(context.Background(), m)
	require.ErrorIs(t, err, hlo.ErrShapeTooLarge)
	require.ErrorIs(t, err, hlo.ErrVerify)
	assert.Zero(t, rt.Device().LiveObjects())
}

// chunk is the f32 element count of wideOutputs' arrays: 128 MiB, lavapipe's
// binding limit.
const chunk = 32 << 20

// wideOutputs is a module of k outputs x + i over x of f32[chunk]: its plan holds
// k arrays of 128 MiB at once (one output takes the parameter's place).
func wideOutputs(t testing.TB, k int) *hlo.Module {
	b := hlo.NewBuilder("wide")
	x := b.Parameter(f32(chunk), "x")
	var outs []*hlo.Instruction
	for i := range k {
		outs = append(outs, b.Add(x, b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(i)), chunk)))
	}
	return mustBuild(t, b, b.Tuple(outs...))
}

// TestCompileCountsTheTensorPool: the device tensors the runtime holds count against
// a plan as its executables do. The plan fits the empty device, but not beside a
// tensor of one chunk; the error names the pool's bytes as held by the runtime.
func TestCompileCountsTheTensorPool(t *testing.T) {
	rt := newRuntime(t)
	var heap int64
	for _, h := range rt.Device().Caps().MemoryHeaps {
		heap += h.Size
	}
	x, err := rt.Upload(context.Background(), hlo.NewLiteral(f32(chunk)))
	require.NoError(t, err)
	defer x.Close()
	held := rt.MemoryStats().TotalBytes()
	require.GreaterOrEqual(t, held, int64(4*chunk), "the pool holds the tensor")

	k := int(heap / (4 * chunk)) // the whole heap
	_, err = rt.Compile(context.Background(), wideOutputs(t, k))
	require.ErrorIs(t, err, device.ErrOutOfDeviceMemory)
	assert.Contains(t, err.Error(), fmt.Sprintf("%d of them held by the runtime (executables and tensors)", held))
	m := regexp.MustCompile(`the plan needs (\d+) bytes`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, "%v", err)
	need, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	assert.LessOrEqual(t, need, heap, "the plan alone fits the device")
	assert.Zero(t, rt.MemoryStats().Executables)
}

// liveBaseline is the Vulkan objects a runtime holds with no executable: its tensor
// pool's (none until a tensor is made).
func liveBaseline(*vkxla.Runtime) int { return 0 }

// cancelAfter is a context whose Err reports cancellation from its n-th call on: it
// stops a compile at the n-th place the compile looks.
type cancelAfter struct {
	context.Context
	n, calls atomic.Int32
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

// TestCompileCancelledBetweenStages: Compile looks at its context between its
// stages (after the passes, after each kernel, before recording), and a cancelled
// compile leaves nothing behind.
func TestCompileCancelledBetweenStages(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/while_loop.hlo")
	require.NoError(t, err)
	checks := 0
	for n := int32(1); ; n++ {
		ctx := &cancelAfter{Context: context.Background()}
		ctx.n.Store(n)
		exe, err := rt.Compile(ctx, m, vkxla.WithoutCache())
		if err == nil {
			require.NoError(t, exe.Close())
			checks = int(n) - 1
			break
		}
		require.ErrorIs(t, err, context.Canceled, "stop %d", n)
		require.Zero(t, rt.Device().LiveObjects(), "stop %d left Vulkan objects", n)
		require.Less(t, n, int32(1000))
	}
	assert.GreaterOrEqual(t, checks, 4, "places Compile looks at its context")
}

// TestConcurrentStress: compiles, runs (host and device), uploads, tensor closes
// and cache clears race each other and the runtime's Close. Nothing panics, every
// error is ErrClosed, every result is right, and Close leaves no Vulkan object.
func TestConcurrentStress(t *testing.T) {
	d := devicetest.Open(t)
	const n = 64
	in := axpyInputs(rand.New(rand.NewPCG(7, 7)), n)
	want, err := cpuref.Eval(axpyModule(t, n), in...)
	require.NoError(t, err)
	for trial := range 4 {
		rt, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithCacheLimits(3, 1<<30))
		require.NoError(t, err)
		ctx := context.Background()
		exe, err := rt.Compile(ctx, axpyModule(t, n))
		require.NoError(t, err)
		shared, err := rt.Upload(ctx, in[1])
		require.NoError(t, err)

		var stop atomic.Bool
		var wg sync.WaitGroup
		errs := make(chan error, 1000)
		check := func(got *hlo.Literal, err error) bool {
			if err == nil {
				err = hlo.LiteralsClose(got, want, 1e-6, 1e-6)
			}
			if err != nil {
				errs <- err
				return false
			}
			return true
		}
		loop := func(body func(i int) bool) {
			wg.Go(func() {
				for i := 0; !stop.Load() && body(i); i++ {
				}
			})
		}
		loop(func(i int) bool { // distinct compiles
			e, err := rt.Compile(ctx, axpyModule(t, int64(1+i%7)))
			if err == nil {
				err = e.Close()
			}
			return check(want, err)
		})
		loop(func(int) bool { outs, err := exe.Run(ctx, in...); return check(first(outs), err) })
		loop(func(int) bool { // device round trip through a private tensor
			y, err := rt.Upload(ctx, in[2])
			if err != nil {
				return check(nil, err)
			}
			outs, err := exe.RunOnDevice(ctx, in[0], shared, y)
			if err != nil {
				return check(nil, errors.Join(err, y.Close()))
			}
			got, err := outs[0].ToHost(ctx)
			return check(got, errors.Join(err, outs[0].Close(), y.Close()))
		})
		loop(func(int) bool { // a closed tensor is refused
			y, err := rt.Upload(ctx, in[2])
			if err != nil {
				return check(nil, err)
			}
			if err := y.Close(); err != nil {
				return check(nil, err)
			}
			_, err = exe.RunOnDevice(ctx, in[0], shared, y)
			if !errors.Is(err, vkxla.ErrClosed) {
				errs <- errors.Join(errors.New("RunOnDevice took a closed tensor"), err)
				return false
			}
			return true
		})
		loop(func(int) bool { return check(want, rt.ClearCaches()) })
		time.Sleep(time.Duration(20+10*trial) * time.Millisecond)
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "trial %d: Vulkan objects left after Close", trial)
		stop.Store(true)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.ErrorIs(t, err, vkxla.ErrClosed, "trial %d", trial)
		}
		require.NoError(t, shared.Close())
		require.NoError(t, exe.Close())
		require.Zero(t, d.LiveObjects(), "trial %d", trial)
	}
}

func first(ls []*hlo.Literal) *hlo.Literal {
	if len(ls) == 0 {
		return nil
	}
	return ls[0]
}

// TestCompileKeysLargeConstantsByBytes: the cache key hashes a constant's bytes
// instead of printing them (Compile of a module with a 64 MiB constant allocated
// 556 MiB, nearly all of it the printed key), and a constant that differs in one
// element of 4M is another cache entry.
func TestCompileKeysLargeConstantsByBytes(t *testing.T) {
	rt := newRuntime(t)
	const n = 4 << 20 // f32 elements: 16 MiB
	lit := hlo.NewLiteral(f32(n))
	for i := 0; i < n; i += 7 {
		lit.SetFloat64(i, float64(i)*0.37)
	}
	module := func(c *hlo.Literal) *hlo.Module {
		b := hlo.NewBuilder("big")
		x := b.Parameter(f32(n), "x")
		return mustBuild(t, b, b.Add(x, b.Constant(c)))
	}
	ctx := context.Background()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	exe, err := rt.Compile(ctx, module(lit))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	defer exe.Close()
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes Compile allocated for a module with a 16 MiB constant")

	same, err := rt.Compile(ctx, module(lit))
	require.NoError(t, err)
	require.NoError(t, same.Close())
	other := lit.Clone()
	other.SetFloat64(n-1, 1)
	diff, err := rt.Compile(ctx, module(other))
	require.NoError(t, err)
	require.NoError(t, diff.Close())
	assert.Equal(t, vkxla.CacheStats{Entries: 2, Bytes: 2 * exe.MemoryStats().PeakBytes, Hits: 1, Misses: 2}, rt.CacheStats())
}

// TestExecutableCloseRacingRuntimeClose: Executable.Close on other goroutines while
// the runtime closes. Runtime.Close returns only once every Vulkan object is gone:
// an executable's Close that began first has finished, one that comes later finds
// the runtime closed and leaves the release to it. (Executable.Close once released
// outside the runtime's accounting, so Close could return with its objects still
// being freed, and with a device the runtime owns free them twice.)
func TestExecutableCloseRacingRuntimeClose(t *testing.T) {
	d := devicetest.Open(t)
	for trial := range 24 {
		rt, err := vkxla.NewRuntime(vkxla.WithDevice(d))
		require.NoError(t, err)
		var exes []*vkxla.Executable
		for i := range 12 {
			exe, err := rt.Compile(context.Background(), axpyModule(t, int64(8+i)), vkxla.WithoutCache())
			require.NoError(t, err)
			exes = append(exes, exe)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, exe := range exes {
			wg.Go(func() {
				<-start
				assert.NoError(t, exe.Close())
			})
		}
		close(start)
		time.Sleep(time.Duration(trial*25) * time.Microsecond)
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects(), "trial %d: Vulkan objects left after Close", trial)
		wg.Wait()
		require.Zero(t, d.LiveObjects(), "trial %d", trial)
	}
}
