package vkxla_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// offloadText holds a (exp of x) in host memory while the next kernels run, as
// XLA's host offloading writes it; the device moves it back for the last kernel.
const offloadText = `HloModule offload
ENTRY e {
  x = f32[65536] parameter(0)
  a = f32[65536] exponential(x)
  h = f32[65536] custom-call(a), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  b = f32[131072] concatenate(x, x), dimensions={0}
  c = f32[131072] sine(b)
  c1 = f32[65536] slice(c), slice={[0:65536]}
  c2 = f32[65536] slice(c), slice={[65536:131072]}
  e = f32[65536] multiply(c1, c2)
  d = f32[65536] custom-call(h), custom_call_target="MoveToDevice"
  ROOT s = f32[65536] add(d, e)
}`

// TestOffloadRunsOnDevice: the offloaded value goes to host memory and back
// through copies recorded with the kernels (validation layer on), the result is
// cpuref's, and the executable states its host memory apart from its device peak.
// Unfused, the middle kernels reuse a's device memory once a is on the host, so a
// copy back that went missing would read their values, not a's.
func TestOffloadRunsOnDevice(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(offloadText)
	require.NoError(t, err)
	x := randomLiteral(rand.New(rand.NewPCG(1, 2)), m.Entry.Params[0].Shape, unitDomain)
	spec := vkxla.ErrorSpec{ULP: 8} // exp + sin·sin: a few ulp each
	checkAgainstCPU(t, rt, m, spec, x)
	unfused := []vkxla.CompileOption{vkxla.WithoutPasses("fusion", "sibling-fusion")}
	checkCompiledAgainstCPU(t, rt, m, unfused, spec, x)

	fresh := newRuntime(t) // rt's cache holds the executables above
	exe, err := fresh.Compile(context.Background(), m)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	st := exe.MemoryStats()
	require.Equal(t, int64(65536*4), st.HostBytes, "host memory: a, 256 KiB\n%v", st)
	require.Equal(t, 1, st.HostBuffers)
	require.Equal(t, int64(65536*4), fresh.MemoryStats().HostBytes)
}

// entryOffloadText keeps y (read before and after the peak at c) and o (an
// output made first) live across the peak, 256 KiB each beside b and c.
const entryOffloadText = `HloModule entry_offload
ENTRY e {
  x = f32[65536] parameter(0)
  y = f32[65536] parameter(1)
  o = f32[65536] exponential(x)
  a = f32[65536] multiply(x, y)
  b = f32[131072] concatenate(a, a), dimensions={0}
  c = f32[131072] reverse(b), dimensions={0}
  d = f32[65536] slice(c), slice={[0:65536]}
  e = f32[65536] add(d, y)
  ROOT s = (f32[65536], f32[65536]) tuple(e, o)
}`

// TestHostResidentEntryValuesOnDevice: under a budget that moving temporaries
// cannot meet, the parameter y stays in host memory (staged there by Run, read
// through copies on each side of the peak) and the output o is returned from
// host memory; the results are cpuref's whether the inputs are literals or
// device tensors and the outputs literals or device tensors. Unfused, so that the
// peak is the one planned here.
func TestHostResidentEntryValuesOnDevice(t *testing.T) {
	const kib = 1024
	rt := newRuntime(t)
	m, err := hlo.ParseModule(entryOffloadText)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	x := randomLiteral(rng, m.Entry.Params[0].Shape, unitDomain)
	y := randomLiteral(rng, m.Entry.Params[1].Shape, unitDomain)
	opts := []vkxla.CompileOption{vkxla.WithoutPasses("fusion", "sibling-fusion"), vkxla.WithMemoryBudget(1024 * kib)}
	spec := vkxla.ErrorSpec{ULP: 4}
	checkCompiledAgainstCPU(t, rt, m, opts, spec, x, y)

	ctx := context.Background()
	exe, err := rt.Compile(ctx, m, opts...)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	st := exe.MemoryStats()
	require.Equal(t, int64(1024*kib), st.PeakBytes, "b and c alone at the peak\n%v", st)
	require.Equal(t, int64(512*kib), st.HostBytes, "y and o on the host\n%v", st)
	require.Equal(t, int64(256*kib), st.ParameterBytes, "x alone staged on the device\n%v", st)

	want, err := exe.Run(ctx, x, y)
	require.NoError(t, err)
	xt, err := rt.Upload(ctx, x)
	require.NoError(t, err)
	defer func() { require.NoError(t, xt.Close()) }()
	yt, err := rt.Upload(ctx, y)
	require.NoError(t, err)
	defer func() { require.NoError(t, yt.Close()) }()
	outs, err := exe.RunOnDevice(ctx, xt, yt)
	require.NoError(t, err)
	for i, out := range outs {
		got, err := out.ToHost(ctx)
		require.NoError(t, err)
		require.NoError(t, out.Close())
		require.Equal(t, want[i].Bytes(), got.Bytes(), "output %d from device tensors", i)
	}
}
