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
