package vkxla_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/passes"
)

// axpyModule is a*x + y over f32[n].
func axpyModule(t testing.TB, n int64) *hlo.Module {
	b := hlo.NewBuilder("axpy")
	a := b.Parameter(hlo.Scalar(hlo.F32), "a")
	x := b.Parameter(f32(n), "x")
	y := b.Parameter(f32(n), "y")
	return mustBuild(t, b, b.Add(b.Mul(b.BroadcastScalar(a, n), x), y))
}

func axpyInputs(rng *rand.Rand, n int64) []*hlo.Literal {
	return []*hlo.Literal{randomLiteral(rng, f32(), unitDomain), randomLiteral(rng, f32(n), unitDomain), randomLiteral(rng, f32(n), unitDomain)}
}

func TestRunChecksInputs(t *testing.T) {
	rt := newRuntime(t)
	exe, err := rt.Compile(context.Background(), axpyModule(t, 8))
	require.NoError(t, err)
	defer exe.Close()
	ctx := context.Background()
	good := axpyInputs(rand.New(rand.NewPCG(1, 1)), 8)

	_, err = exe.Run(ctx, good[:2]...)
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "2 inputs given")
	assert.Contains(t, err.Error(), "takes 3")

	_, err = exe.Run(ctx, good[0], hlo.NewLiteral(hlo.MakeShape(hlo.F64, 8)), good[2])
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "input 1 (parameter x): expected f32[8], got f64[8]")

	_, err = exe.Run(ctx, good[0], good[1], hlo.NewLiteral(f32(9)))
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "input 2 (parameter y): expected f32[8], got f32[9]")

	_, err = exe.Run(ctx, good[0], nil, good[2])
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)

	_, err = exe.RunOnDevice(ctx, good[0], "not a tensor", good[2])
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "string")
}

func TestRunAfterCloseAndCancelled(t *testing.T) {
	rt := newRuntime(t)
	exe, err := rt.Compile(context.Background(), axpyModule(t, 8), vkxla.WithoutCache())
	require.NoError(t, err)
	in := axpyInputs(rand.New(rand.NewPCG(2, 2)), 8)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = exe.Run(ctx, in...)
	require.ErrorIs(t, err, context.Canceled)

	_, err = exe.Run(context.Background(), in...) // still usable after a cancelled run
	require.NoError(t, err)

	require.NoError(t, exe.Close())
	require.NoError(t, exe.Close(), "a second Close does nothing")
	_, err = exe.Run(context.Background(), in...)
	require.ErrorIs(t, err, vkxla.ErrClosed)
}

func TestCompileErrors(t *testing.T) {
	rt := newRuntime(t)
	m := axpyModule(t, 4)
	m.Entry.Root.Shape = f32(5) // corrupt: the verifier names it
	_, err := rt.Compile(context.Background(), m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f32[5]")
}

func TestCompileCache(t *testing.T) {
	rt := newRuntime(t)
	e1, err := rt.Compile(context.Background(), axpyModule(t, 16))
	require.NoError(t, err)
	renamed := axpyModule(t, 16)
	for _, in := range renamed.Entry.Instructions {
		in.Name = "renamed_" + in.Name
	}
	e2, err := rt.Compile(context.Background(), renamed) // structurally identical: only the names differ
	require.NoError(t, err)
	st := rt.CacheStats()
	assert.Equal(t, vkxla.CacheStats{Entries: 1, Bytes: e1.MemoryStats().PeakBytes, Hits: 1, Misses: 1}, st)
	require.NoError(t, e1.Close())
	// e2 still runs after e1 closed: both are references to one compiled state.
	in := axpyInputs(rand.New(rand.NewPCG(3, 3)), 16)
	_, err = e2.Run(context.Background(), in...)
	require.NoError(t, err)
	require.NoError(t, rt.ClearCaches())
	_, err = e2.Run(context.Background(), in...)
	require.NoError(t, err, "a held executable outlives ClearCaches")
	require.NoError(t, e2.Close())
	assert.Equal(t, 0, rt.CacheStats().Entries)

	e3, err := rt.Compile(context.Background(), axpyModule(t, 16))
	require.NoError(t, err)
	defer e3.Close()
	assert.Equal(t, 2, rt.CacheStats().Misses, "cleared cache compiles again")
}

func TestCompileCacheIsBounded(t *testing.T) {
	d := newRuntime(t).Device()
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithCacheLimits(2, 1<<30))
	require.NoError(t, err)
	defer rt.Close()
	for n := int64(1); n <= 4; n++ {
		e, err := rt.Compile(context.Background(), axpyModule(t, n))
		require.NoError(t, err)
		require.NoError(t, e.Close())
	}
	assert.Equal(t, 2, rt.CacheStats().Entries)
	e, err := rt.Compile(context.Background(), axpyModule(t, 4)) // most recent: still cached
	require.NoError(t, err)
	defer e.Close()
	assert.Equal(t, 1, rt.CacheStats().Hits)
}

// TestMemoryStatsExact: the plan's bytes follow from the buffers, their alignment and
// which outputs are written in place.
func TestMemoryStatsExact(t *testing.T) {
	rt := newRuntime(t)
	align := rt.Device().Caps().MinStorageBufferOffsetAlignment
	round := func(n int64) int64 { a := max(align, 16); return (n + a - 1) / a * a }
	cases := []struct {
		name string
		opts []vkxla.CompileOption
		want vkxla.MemoryStats
	}{{
		// One fused kernel reads a, x and y and writes its output over x (x and y
		// both die there; the first is taken): three buffers.
		name: "fused",
		want: vkxla.MemoryStats{PeakBytes: round(4) + 2*round(4096), ParameterBytes: 4 + 4096 + 4096,
			OutputBytes: 4096, InPlaceBytes: 4096, LowerBoundBytes: round(4) + 2*round(4096), Buffers: 3},
	}, {
		// Three kernels: the broadcast gets a buffer; the product is written over
		// it (the broadcast dies there), the sum over the product: four buffers.
		name: "unfused",
		opts: []vkxla.CompileOption{vkxla.WithoutPasses("fusion")},
		want: vkxla.MemoryStats{PeakBytes: round(4) + 3*round(4096), ParameterBytes: 4 + 4096 + 4096,
			OutputBytes: 4096, TemporaryBytes: 4096 + 4096, InPlaceBytes: 4096 + 4096,
			LowerBoundBytes: round(4) + 3*round(4096), Buffers: 4},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			exe, err := rt.Compile(context.Background(), axpyModule(t, 1024), tc.opts...)
			require.NoError(t, err)
			defer exe.Close()
			assert.Equal(t, tc.want, exe.MemoryStats())
			in := axpyInputs(rand.New(rand.NewPCG(3, 3)), 1024)
			got, err := exe.Run(context.Background(), in...)
			require.NoError(t, err)
			want, err := cpuref.Eval(exe.Module(), in...)
			require.NoError(t, err)
			require.NoError(t, hlo.LiteralsClose(got[0], want, 1e-6, 1e-6))
		})
	}
}

func TestConcurrentRuns(t *testing.T) {
	rt := newRuntime(t)
	m := axpyModule(t, 999)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 10 {
				in := axpyInputs(rng, 999)
				want, err := cpuref.Eval(m, in...)
				if err == nil {
					var got []*hlo.Literal
					if got, err = exe.Run(context.Background(), in...); err == nil {
						err = hlo.LiteralsClose(got[0], want, 1e-6, 1e-6)
					}
				}
				if err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
}

// TestRunOnDeviceChains feeds one executable's device outputs to another.
func TestRunOnDeviceChains(t *testing.T) {
	rt := newRuntime(t)
	m := axpyModule(t, 64)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	ctx := context.Background()
	in := axpyInputs(rand.New(rand.NewPCG(4, 4)), 64)
	first, err := exe.RunOnDevice(ctx, in[0], in[1], in[2])
	require.NoError(t, err)
	a, err := rt.Upload(ctx, in[0])
	require.NoError(t, err)
	second, err := exe.RunOnDevice(ctx, a, first[0], in[2])
	require.NoError(t, err)
	got, err := second[0].ToHost(ctx)
	require.NoError(t, err)

	mid, err := cpuref.Eval(m, in...)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in[0], mid, in[2])
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsClose(got, want, 1e-6, 1e-6))
	for _, dt := range []*vkxla.DeviceTensor{a, first[0], second[0]} {
		require.NoError(t, dt.Close())
	}
	_, err = first[0].ToHost(ctx)
	require.ErrorIs(t, err, vkxla.ErrClosed)
}

func TestProfileAndDump(t *testing.T) {
	d := newRuntime(t).Device()
	dir := t.TempDir()
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(d), vkxla.WithDumpDir(dir))
	require.NoError(t, err)
	defer rt.Close()
	exe, err := rt.Compile(context.Background(), axpyModule(t, 256))
	require.NoError(t, err)
	defer exe.Close()
	p, err := exe.Profile()
	require.NoError(t, err)
	assert.Empty(t, p.Kernels, "no profile before the first run")
	_, err = exe.Run(context.Background(), axpyInputs(rand.New(rand.NewPCG(5, 5)), 256)...)
	require.NoError(t, err)
	if rt.Device().Caps().TimestampsSupported {
		p, err := exe.Profile()
		require.NoError(t, err)
		require.Len(t, p.Kernels, 1) // broadcast, multiply and add fused
		assert.Equal(t, exe.Module().Entry.Root.Name, p.Kernels[0].Instruction)
		assert.Equal(t, 1, p.Kernels[0].Dispatches)
	}
	fusion := fmt.Sprintf("01-%02d-fusion.hlo", slices.Index(passes.Names(), "fusion"))
	for _, name := range []string{"00-input.hlo", fusion, "05-kernels.hlo", "10-plan.txt", "11-memory.svg"} {
		_, err := os.Stat(filepath.Join(dir, "axpy", name))
		assert.NoError(t, err)
	}
	kernels, err := filepath.Glob(filepath.Join(dir, "axpy", "kernels", "*.spvasm"))
	require.NoError(t, err)
	assert.Len(t, kernels, 1)
	plan, err := os.ReadFile(filepath.Join(dir, "axpy", "10-plan.txt"))
	require.NoError(t, err)
	// x and y both die at the kernel; the first in operand order, x, is taken.
	assert.Contains(t, string(plan), `3 output     "add.6" block 0 [0, +1024) in place over 1`, "the output shares x's buffer")
}

// TestCompileBindsBufferBeyondOneBinding: a tensor one element larger than
// maxStorageBufferRange, which Compile used to refuse, runs on both paths (by
// device address; split, with a last piece of 4 bytes) and matches cpuref.
func TestCompileBindsBufferBeyondOneBinding(t *testing.T) {
	rt := newRuntime(t)
	require.Equal(t, int64(128<<20), rt.Device().Caps().MaxStorageBufferRange, "the test is sized for lavapipe's limit")
	n := int64(128<<20)/4 + 1
	b := hlo.NewBuilder("huge")
	x := b.Parameter(hlo.MakeShape(hlo.S32, n), "x")
	m := mustBuild(t, b, b.Negate(x))
	in := smallInts(hlo.MakeShape(hlo.S32, n), 11)
	in.SetInt64(int(n-1), 12345) // the element alone in the last piece
	for _, opts := range [][]vkxla.CompileOption{nil, {vkxla.WithSplitBindings()}} {
		checkCompiledAgainstCPU(t, rt, m, opts, vkxla.ErrorSpec{}, in)
	}
}

// TestProfileCountsLoopIterations: kernels inside a while body are timed on every
// iteration (their segments' timestamps are read after each submission).
func TestProfileCountsLoopIterations(t *testing.T) {
	rt := newRuntime(t)
	if !rt.Device().Caps().TimestampsSupported {
		t.Skip("the device has no timestamp queries")
	}
	m, err := hlo.ParseModuleFile("testdata/programs/while_loop.hlo")
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	rng := rand.New(rand.NewPCG(6, 6))
	inputs := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		inputs[i] = randomLiteral(rng, p.Shape, unitDomain)
	}
	_, err = exe.Run(context.Background(), inputs...)
	require.NoError(t, err)
	p, err := exe.Profile()
	require.NoError(t, err)
	counts := map[string]int{}
	for _, k := range p.Kernels {
		counts[k.Instruction] = k.Dispatches
		assert.Positive(t, k.GPUTime, k.Instruction)
	}
	// The body's dot xw runs in the kernel of its epilogue x1 (dot epilogue fusion).
	assert.Equal(t, 10, counts["x1"], "the body's dot runs once per iteration: %v", counts)
	assert.Equal(t, 11, counts["lt"], "the condition runs once more than the body: %v", counts)
}

// TestRuntimeCloseReleasesEverything: a runtime that owns its device, closed while an
// executable and a device tensor are still held, leaves no Vulkan object behind (the
// validation layer reports leaks when the device is destroyed), and what was held
// then reports ErrClosed instead of crashing.
func TestRuntimeCloseReleasesEverything(t *testing.T) {
	devicetest.Open(t) // a device must exist (fails in CI when none does)
	var mu sync.Mutex
	var messages []string
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(devicetest.Validation()),
		vkxla.WithValidationHandler(func(severity, msg string) {
			mu.Lock()
			defer mu.Unlock()
			messages = append(messages, severity+": "+msg)
		}))
	require.NoError(t, err)
	ctx := context.Background()
	exe, err := rt.Compile(context.Background(), axpyModule(t, 32))
	require.NoError(t, err)
	in := axpyInputs(rand.New(rand.NewPCG(8, 8)), 32)
	outs, err := exe.RunOnDevice(ctx, in[0], in[1], in[2])
	require.NoError(t, err)

	require.NoError(t, rt.Close())
	_, err = exe.Run(ctx, in...)
	require.ErrorIs(t, err, vkxla.ErrClosed)
	_, err = outs[0].ToHost(ctx)
	require.ErrorIs(t, err, vkxla.ErrClosed)
	assert.NoError(t, outs[0].Close())
	assert.NoError(t, exe.Close())
	_, err = rt.Compile(context.Background(), axpyModule(t, 32))
	require.ErrorIs(t, err, vkxla.ErrClosed)
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, messages)
}

// TestConcurrentCompile: many goroutines compiling one module get working
// executables that share one cache entry; racing compilations are released.
func TestConcurrentCompile(t *testing.T) {
	rt := newRuntime(t)
	m := axpyModule(t, 40)
	in := axpyInputs(rand.New(rand.NewPCG(9, 9)), 40)
	want, err := cpuref.Eval(m, in...)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for g := range errs {
		wg.Go(func() {
			exe, err := rt.Compile(context.Background(), axpyModule(t, 40))
			if err != nil {
				errs[g] = err
				return
			}
			defer exe.Close()
			got, err := exe.Run(context.Background(), in...)
			if err == nil {
				err = hlo.LiteralsClose(got[0], want, 1e-6, 1e-6)
			}
			errs[g] = err
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	st := rt.CacheStats()
	assert.Equal(t, 1, st.Entries)
	assert.Equal(t, 6, st.Hits+st.Misses)
}

// TestTupleParameter: an entry parameter of tuple shape takes a tuple literal.
func TestTupleParameter(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("tuple_param")
	p := b.Parameter(hlo.MakeTuple(f32(3), hlo.MakeTuple(hlo.Scalar(hlo.F32), f32(3))), "p")
	inner := b.GetTupleElement(p, 1)
	sum := b.Add(b.GetTupleElement(p, 0), b.Mul(b.BroadcastScalar(b.GetTupleElement(inner, 0), 3), b.GetTupleElement(inner, 1)))
	m := mustBuild(t, b, b.Tuple(sum, b.GetTupleElement(inner, 0)))
	arg := hlo.TupleLiteral(hlo.MustFromSlice([]int64{3}, []float32{1, 2, 3}),
		hlo.TupleLiteral(hlo.ScalarLiteral(float32(10)), hlo.MustFromSlice([]int64{3}, []float32{1, 0.5, -1})))
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	got, err := exe.Run(context.Background(), arg)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.NoError(t, hlo.LiteralsEqual(got[0], hlo.MustFromSlice([]int64{3}, []float32{11, 7, -7})))
	require.NoError(t, hlo.LiteralsEqual(got[1], hlo.ScalarLiteral(float32(10))))

	_, err = exe.Run(context.Background(), hlo.MustFromSlice([]int64{3}, []float32{1, 2, 3}))
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "expected (f32[3], (f32[], f32[3])), got f32[3]")
}

// TestInPlaceWaitsForTheLastRead: unfused, negate(x) cannot write over x (the add
// reads x afterwards), but the add may write over either operand, both dying there;
// the result matches cpuref, so no kernel read a buffer that was already overwritten.
func TestInPlaceWaitsForTheLastRead(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("later")
	x := b.Parameter(f32(1000), "x")
	n := b.Negate(x)
	e := b.Exp(n)
	m := mustBuild(t, b, b.Tuple(b.Add(e, x), b.Mul(n, n)))
	exe, err := rt.Compile(context.Background(), m, vkxla.WithoutPasses("fusion"))
	require.NoError(t, err)
	defer exe.Close()
	// x, n (own buffer: x is read later), e (own: n is read later by the multiply),
	// add over e (its last reader; x is taken by nothing), multiply over n.
	st := exe.MemoryStats()
	assert.Equal(t, 3, st.Buffers, st.String())
	assert.Equal(t, int64(2*4000), st.InPlaceBytes, st.String())
	in := randomLiteral(rand.New(rand.NewPCG(8, 8)), f32(1000), unitDomain)
	got, err := exe.Run(context.Background(), in)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in)
	require.NoError(t, err)
	for i, w := range want.Leaves() {
		require.NoError(t, hlo.LiteralsClose(got[i], w, 1e-6, 1e-6), "output %d", i)
	}
}

// TestBufferReuseByLifetime: four transposes in a row (unfused; a transpose reads
// elsewhere, so nothing is written in place) need only two buffers at a time: x and
// t1, t1 and t2, ... The plan packs five 4 KiB buffers into two slots, and the
// result still matches cpuref (a buffer is only rewritten after its last read).
// simplify is off too: it would compose the four transposes into none.
func TestBufferReuseByLifetime(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("transposes")
	v := b.Parameter(f32(32, 32), "x")
	for range 4 {
		v = b.Transpose(v, 1, 0)
	}
	m := mustBuild(t, b, v)
	exe, err := rt.Compile(context.Background(), m, vkxla.WithoutPasses("fusion", "simplify"))
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	assert.Equal(t, int64(2*4096), st.PeakBytes, st.String())
	assert.Equal(t, int64(2*4096), st.LowerBoundBytes, st.String())
	assert.Equal(t, 5, st.Buffers, st.String())
	assert.Equal(t, int64(3*4096), st.TemporaryBytes, st.String())
	in := randomLiteral(rand.New(rand.NewPCG(9, 9)), f32(32, 32), unitDomain)
	got, err := exe.Run(context.Background(), in)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got[0], in), "four transposes are the identity")
}

// TestReuseInsideLoopBodies: a loop body that transposes its state four times makes
// four 4 KiB temporaries per iteration; they are remade by every iteration, so they
// share two slots, and x (dead once copied into the loop state) lends its memory
// too: the big buffers are the state and two slots, 3 × 4 KiB, where a buffer per
// value would need 6 × 4 KiB. The loop state itself is never overwritten early:
// the result matches cpuref after 3 iterations.
func TestReuseInsideLoopBodies(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule loop
%cond (s: (s32[], f32[32,32])) -> pred[] {
  %s = (s32[], f32[32,32]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[32,32])) -> (s32[], f32[32,32]) {
  %s = (s32[], f32[32,32]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v = f32[32,32] get-tuple-element(%s), index=1
  %t1 = f32[32,32] transpose(%v), dimensions={1,0}
  %t2 = f32[32,32] transpose(%t1), dimensions={1,0}
  %t3 = f32[32,32] transpose(%t2), dimensions={1,0}
  %t4 = f32[32,32] transpose(%t3), dimensions={1,0}
  %h = f32[32,32] negate(%t4)
  ROOT %next = (s32[], f32[32,32]) tuple(%i1, %h)
}
ENTRY %main (x: f32[32,32]) -> f32[32,32] {
  %x = f32[32,32] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[32,32]) tuple(%zero, %x)
  %w = (s32[], f32[32,32]) while(%init), condition=%cond, body=%body
  ROOT %r = f32[32,32] get-tuple-element(%w), index=1
}
`)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m, vkxla.WithoutPasses("fusion"))
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	assert.LessOrEqual(t, st.PeakBytes, int64(3*4096+256), st.String())
	assert.Equal(t, st.LowerBoundBytes, st.PeakBytes, st.String())
	assert.Equal(t, int64(2*4096+4), st.InPlaceBytes, "the state takes over x, the negation is written over t4, i+1 over the counter: %v", st)
	in := randomLiteral(rand.New(rand.NewPCG(4, 4)), f32(32, 32), unitDomain)
	got, err := exe.Run(context.Background(), in)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got[0], want))
}

// TestScheduleLowersPeak: two products each reduced to a row sum. In the module's
// order both 16 KiB products are live at once; the schedule pass reduces the first
// before making the second, so one product slot serves both.
func TestScheduleLowersPeak(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/two_chains.hlo")
	require.NoError(t, err)
	stats := map[bool]vkxla.MemoryStats{}
	rng := rand.New(rand.NewPCG(6, 6))
	var in []*hlo.Literal
	for _, p := range m.Entry.Params {
		in = append(in, randomLiteral(rng, p.Shape, unitDomain))
	}
	for _, scheduled := range []bool{true, false} {
		var opts []vkxla.CompileOption
		if !scheduled {
			opts = append(opts, vkxla.WithoutPasses("schedule"))
		}
		checkCompiledAgainstCPU(t, rt, m, opts, vkxla.ProgramTolerance(m, hlo.F32), in...)
		exe, err := rt.Compile(context.Background(), m, opts...)
		require.NoError(t, err)
		stats[scheduled] = exe.MemoryStats()
		require.NoError(t, exe.Close())
	}
	// Unscheduled, x, w2 and both products are live when p2 is made (w1 died at
	// p1): 2·2 KiB + 2·16 KiB. Scheduled, the peak is p1 with the three
	// parameters (2 KiB each), and p2 takes p1's slot after r1: 3·2 KiB + 16 KiB.
	// (The zero is fused into the reductions: no constant buffer.)
	assert.Equal(t, int64(2*2048+2*16384), stats[false].PeakBytes, "%v", stats)
	assert.Equal(t, int64(3*2048+16384), stats[true].PeakBytes, "%v", stats)
	assert.Equal(t, stats[true].LowerBoundBytes, stats[true].PeakBytes)
}

// TestMemoryBudget: without a budget the plan holds v and three products at the
// peak (x and w die at a): 16+48 KiB. Under a 56 KiB budget a is recomputed before
// the add, so x and w stay but only two products are live at once: 4+16+32 KiB.
// The result matches cpuref either way. A budget below what any order needs fails
// with ErrOverBudget, saying what the plan needs; a negative one is refused.
func TestMemoryBudget(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/checkpoint.hlo")
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(7, 7))
	var in []*hlo.Literal
	for _, p := range m.Entry.Params {
		in = append(in, randomLiteral(rng, p.Shape, unitDomain))
	}
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	for _, tc := range []struct {
		budget, peak int64
	}{{0, 64 << 10}, {56 << 10, 52 << 10}, {52 << 10, 52 << 10}} {
		opts := []vkxla.CompileOption{vkxla.WithMemoryBudget(tc.budget)}
		exe, err := rt.Compile(context.Background(), m, opts...)
		require.NoError(t, err, "budget %d", tc.budget)
		assert.Equal(t, tc.peak, exe.MemoryStats().PeakBytes, "budget %d: %v", tc.budget, exe.MemoryStats())
		require.NoError(t, exe.Close())
		checkCompiledAgainstCPU(t, rt, m, opts, spec, in...)
	}
	_, err = rt.Compile(context.Background(), m, vkxla.WithMemoryBudget(40<<10))
	require.ErrorIs(t, err, vkxla.ErrOverBudget)
	assert.Contains(t, err.Error(), "needs 49152 bytes of device memory, over the budget of 40960 bytes")
	assert.Contains(t, err.Error(), "largest live at the peak: ")
	_, err = rt.Compile(context.Background(), m, vkxla.WithMemoryBudget(-1))
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
}

// TestLiveAtPeak: unscheduled, the two-chain program peaks when p2 is made: x, w2
// and both products are live (w1 died at p1), the products largest.
func TestLiveAtPeak(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModuleFile("testdata/programs/two_chains.hlo")
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m, vkxla.WithoutPasses("schedule"))
	require.NoError(t, err)
	defer exe.Close()
	var got []string
	for _, b := range exe.LiveAtPeak() {
		got = append(got, b.String())
	}
	assert.Equal(t, []string{"p1 16384 B (temporary)", "p2 16384 B (temporary)", "x 2048 B (parameter)", "w2 2048 B (parameter)"}, got)
	var sum int64
	for _, b := range exe.LiveAtPeak() {
		sum += b.Bytes
	}
	assert.Equal(t, exe.MemoryStats().LowerBoundBytes, sum)
}

// TestLoopStateUpdatedInPlace: a body whose new state is an elementwise function
// of the old one, read nowhere after, writes it over the state itself (no second
// copy of the state, no end-of-iteration copy). x stays live across the loop (the
// entry adds it to the result, written over the final state), so the saving shows
// in the peak: x and the state, 2 × 4 KiB, and three 16-byte slots (the counter,
// the loop predicate and the initial counter's constant 0; the other constants are
// fused), where a separate next state would need a third 4 KiB buffer.
func TestLoopStateUpdatedInPlace(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule sgd
%cond (s: (s32[], f32[1024])) -> pred[] {
  %s = (s32[], f32[1024]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[1024])) -> (s32[], f32[1024]) {
  %s = (s32[], f32[1024]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %w = f32[1024] get-tuple-element(%s), index=1
  %half = f32[] constant(0.5)
  %hb = f32[1024] broadcast(%half), dimensions={}
  %step = f32[1024] multiply(%w, %hb)
  %w1 = f32[1024] subtract(%w, %step)
  ROOT %next = (s32[], f32[1024]) tuple(%i1, %w1)
}
ENTRY %main (x: f32[1024]) -> f32[1024] {
  %x = f32[1024] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[1024]) tuple(%zero, %x)
  %loop = (s32[], f32[1024]) while(%init), condition=%cond, body=%body
  %w = f32[1024] get-tuple-element(%loop), index=1
  ROOT %r = f32[1024] add(%w, %x)
}
`)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	assert.Equal(t, int64(4096+4+4096), st.InPlaceBytes, "w1 over the state, i1 over the counter, r over the state: %v", st)
	assert.Equal(t, int64(2*4096+48), st.PeakBytes, st.String())
	in := randomLiteral(rand.New(rand.NewPCG(2, 2)), f32(1024), unitDomain)
	got, err := exe.Run(context.Background(), in)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got[0], want))
}

// TestRuntimeMemoryStats: the runtime's memory is its executables' plans plus its
// tensor pool; a cached executable counts until ClearCaches releases it.
func TestRuntimeMemoryStats(t *testing.T) {
	rt := newRuntime(t)
	require.Equal(t, 0, rt.MemoryStats().Executables)
	exe, err := rt.Compile(context.Background(), axpyModule(t, 1024))
	require.NoError(t, err)
	peak := exe.MemoryStats().PeakBytes
	st := rt.MemoryStats()
	assert.Equal(t, 1, st.Executables)
	assert.Equal(t, peak, st.ExecutableBytes)
	x, err := rt.Upload(context.Background(), randomLiteral(rand.New(rand.NewPCG(1, 1)), f32(1000), unitDomain))
	require.NoError(t, err)
	st = rt.MemoryStats()
	assert.Equal(t, int64(4000), st.Tensors.BytesInUse)
	assert.Equal(t, peak+st.Tensors.BytesReserved, st.TotalBytes(), st.String())
	require.NoError(t, x.Close())
	require.NoError(t, exe.Close())
	assert.Equal(t, 1, rt.MemoryStats().Executables, "still cached")
	require.NoError(t, rt.ClearCaches())
	st = rt.MemoryStats()
	assert.Equal(t, 0, st.Executables)
	assert.Equal(t, int64(0), st.ExecutableBytes)
	assert.Equal(t, int64(0), st.Tensors.BytesInUse)
}

// TestScatterInPlace: two scatter-adds in a row (gradients accumulated into a
// table) write over the table: one buffer for the table and both results, and the
// results match cpuref (duplicate indices included).
func TestScatterInPlace(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule acc
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %acc (table: f32[64,16], i: s32[5,1], u: f32[5,16], j: s32[3,1], v: f32[3,16]) -> f32[64,16] {
  %table = f32[64,16] parameter(0)
  %i = s32[5,1] parameter(1)
  %u = f32[5,16] parameter(2)
  %j = s32[3,1] parameter(3)
  %v = f32[3,16] parameter(4)
  %s1 = f32[64,16] scatter(%table, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
  ROOT %s2 = f32[64,16] scatter(%s1, %j, %v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
}
`)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	assert.Equal(t, int64(2*4096), st.InPlaceBytes, "s1 over the table, s2 over s1: %v", st)
	rng := rand.New(rand.NewPCG(12, 12))
	in := []*hlo.Literal{randomLiteral(rng, f32(64, 16), unitDomain),
		hlo.MustFromSlice([]int64{5, 1}, []int32{3, 60, 3, 0, 63}), randomLiteral(rng, f32(5, 16), unitDomain),
		hlo.MustFromSlice([]int64{3, 1}, []int32{60, 7, 60}), randomLiteral(rng, f32(3, 16), unitDomain)}
	got, err := exe.Run(context.Background(), in...)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in...)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got[0], want))
}

// TestDynamicUpdateSliceInPlace: a loop that writes one row per iteration into a
// carried cache (a KV cache's pattern) updates the cache in place and writes only
// the row: the operand copy is skipped, so the update runs one dispatch per
// iteration, and the result matches cpuref. At the top level, a dying operand is
// written over the same way.
func TestDynamicUpdateSliceInPlace(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule kv
%cond (s: (s32[], f32[64,16], f32[1,16])) -> pred[] {
  %s = (s32[], f32[64,16], f32[1,16]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(8)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[64,16], f32[1,16])) -> (s32[], f32[64,16], f32[1,16]) {
  %s = (s32[], f32[64,16], f32[1,16]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %cache = f32[64,16] get-tuple-element(%s), index=1
  %row = f32[1,16] get-tuple-element(%s), index=2
  %zero = s32[] constant(0)
  %put = f32[64,16] dynamic-update-slice(%cache, %row, %i, %zero)
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %half = f32[] constant(0.5)
  %hb = f32[1,16] broadcast(%half), dimensions={}
  %row1 = f32[1,16] multiply(%row, %hb)
  ROOT %next = (s32[], f32[64,16], f32[1,16]) tuple(%i1, %put, %row1)
}
ENTRY %kv (cache: f32[64,16], row: f32[1,16]) -> f32[64,16] {
  %cache = f32[64,16] parameter(0)
  %row = f32[1,16] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[64,16], f32[1,16]) tuple(%zero, %cache, %row)
  %loop = (s32[], f32[64,16], f32[1,16]) while(%init), condition=%cond, body=%body
  %c = f32[64,16] get-tuple-element(%loop), index=1
  %r = f32[1,16] get-tuple-element(%loop), index=2
  %three = s32[] constant(3)
  %z = s32[] constant(0)
  ROOT %last = f32[64,16] dynamic-update-slice(%c, %r, %three, %z)
}
`)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	rng := rand.New(rand.NewPCG(13, 13))
	in := []*hlo.Literal{randomLiteral(rng, f32(64, 16), unitDomain), randomLiteral(rng, f32(1, 16), unitDomain)}
	got, err := exe.Run(context.Background(), in...)
	require.NoError(t, err)
	want, err := cpuref.Eval(m, in...)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got[0], want))
	if !rt.Device().Caps().TimestampsSupported {
		return
	}
	p, err := exe.Profile()
	require.NoError(t, err)
	dispatches := map[string]int{}
	for _, k := range p.Kernels {
		dispatches[k.Instruction] = k.Dispatches
	}
	assert.Equal(t, 8, dispatches["put"], "one window write per iteration, no copy: %v", p.Kernels)
	assert.Equal(t, 1, dispatches["last"], "the top-level update writes over the loop's result: %v", p.Kernels)
}
