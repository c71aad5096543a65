package vkxla

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// TestOverlappingSteps: a step joins the group since the last barrier only when
// it neither reads what the group writes nor writes what the group touches;
// reads of the same bytes, and writes of disjoint bytes of one buffer, overlap.
func TestOverlappingSteps(t *testing.T) {
	a, b := &device.Buffer{}, &device.Buffer{}
	rd := func(buf *device.Buffer, s, e int64) access { return access{buf: buf, start: s, end: e} }
	wr := func(buf *device.Buffer, s, e int64) access { return access{buf: buf, start: s, end: e, write: true} }
	steps := [][]access{
		{rd(a, 0, 64), wr(a, 64, 128)},    // 0: first
		{rd(a, 0, 64), wr(b, 0, 64)},      // 1: reads what 0 reads, writes elsewhere: overlaps
		{rd(b, 0, 64), wr(a, 256, 320)},   // 2: reads what 1 writes: barrier
		{wr(a, 320, 384)},                 // 3: disjoint bytes of a: overlaps
		{rd(a, 330, 340)},                 // 4: reads what 3 writes: barrier
		{wr(a, 330, 331)},                 // 5: writes what 4 reads: barrier
		{rd(b, 64, 128), wr(b, 128, 192)}, // 6: touches none of 5's bytes: overlaps
		{},                                // 7: touches nothing
	}
	require.Equal(t, []bool{false, true, false, true, false, false, true, true}, overlapping(steps))
}

// TestOffloadCopyOverlapsKernel: the copy of a to the host needs a barrier (it
// reads what a's kernel wrote), and the kernel after it (log of x, into memory
// of its own: a is still live) runs beside it; the result is cpuref's. Every
// device test runs with synchronisation validation on, which reports any hazard
// a missing barrier leaves.
func TestOffloadCopyOverlapsKernel(t *testing.T) {
	d := devicetest.Open(t)
	rt, err := NewRuntime(WithDevice(d))
	require.NoError(t, err)
	defer func() {
		require.NoError(t, rt.Close())
		require.Zero(t, d.LiveObjects())
	}()
	m, err := hlo.ParseModule(`HloModule overlap
ENTRY e {
  x = f32[1024] parameter(0)
  a = f32[1024] exponential(x)
  h = f32[1024] custom-call(a), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  b = f32[1024] log(x)
  s = f32[1024] add(a, b)
  ROOT t = (f32[1024], f32[1024]) tuple(s, h)
}`)
	require.NoError(t, err)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, m, WithoutPasses("fusion", "sibling-fusion"))
	require.NoError(t, err)
	defer exe.Close()
	steps := exe.c.main.Steps
	free := overlapping(exe.c.rec.accesses(steps))
	var order []string
	for i, st := range steps {
		order = append(order, st.Name)
		if st.Kind == plan.StepCopy && st.Name == "h" {
			require.False(t, free[i], "the copy of a reads what a's kernel wrote")
			require.Less(t, i+1, len(steps))
			require.True(t, free[i+1], "%s after the copy to the host needs no barrier", steps[i+1].Name)
		}
	}
	require.Equal(t, []string{"a", "h", "b", "s"}, order)

	x := hlo.NewLiteral(m.Entry.Params[0].Shape)
	for i := range 1024 {
		x.SetFloat64(i, 0.5+float64(i)/1024)
	}
	want, err := cpuref.EvalContext(ctx, m, x)
	require.NoError(t, err)
	got, err := exe.Run(ctx, x)
	require.NoError(t, err)
	for i, w := range want.Leaves() {
		require.NoError(t, ErrorSpec{ULP: 4}.Check(got[i], w), "output %d", i)
	}
}
