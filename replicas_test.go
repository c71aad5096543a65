package vkxla_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective/cases"
)

// Device tests of Replicated: every collective on 2 and 4 logical devices (one
// runtime, so one VkDevice, each, on the one physical device), against
// cpuref.EvalReplicas, with the validation layer on (devicetest).

// newRuntimes opens n runtimes, each on its own logical device.
func newRuntimes(t *testing.T, n int) []*vkxla.Runtime {
	rts := make([]*vkxla.Runtime, n)
	for i := range rts {
		rts[i] = newRuntime(t)
	}
	return rts
}

type replicatedCase struct {
	name                 string
	replicas, partitions int
	entry                string // after cases.Reducers
	opts                 []vkxla.CompileOption
}

// check runs the case on devices with random inputs and compares every device's
// outputs with cpuref's.
func (c replicatedCase) check(t *testing.T, rts []*vkxla.Runtime) {
	m, err := cases.Parse(c.entry)
	require.NoError(t, err)
	n := c.replicas * c.partitions
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	inputs := make([][]*hlo.Literal, n)
	for d := range inputs {
		for _, p := range m.Entry.Params {
			inputs[d] = append(inputs[d], randomLiteral(rng, p.Shape, unitDomain))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want, err := cpuref.EvalReplicas(ctx, m, c.replicas, c.partitions, inputs)
	require.NoError(t, err, "cpuref")
	r, err := vkxla.CompileReplicated(ctx, m, rts[:n], append(c.opts, vkxla.WithPartitions(c.partitions))...)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	got, err := r.Run(ctx, inputs)
	require.NoError(t, err)
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	for d := range got {
		leaves := want[d].Leaves()
		require.Len(t, got[d], len(leaves), "device %d", d)
		for i := range leaves {
			require.NoError(t, spec.Check(got[d][i], leaves[i]), "device %d output %d", d, i)
		}
	}
}

// TestReplicatedCollectives runs every case of internal/collective/cases (on 2
// and 4 devices), and those that need this runtime's options or sizes.
func TestReplicatedCollectives(t *testing.T) {
	rts := newRuntimes(t, 4)
	all := []replicatedCase{
		{"all-reduce/2", 2, 1, `ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] multiply(x, x)
  r = f32[8] all-reduce(y), replica_groups={}, to_apply=add
  ROOT z = f32[8] add(r, x)
}`, nil},
		// 4 MiB: the host step's transfers of a large buffer.
		{"all-reduce/2/large", 2, 1, `ENTRY e {
  x = f32[1024,1024] parameter(0)
  ROOT r = f32[1024,1024] all-reduce(x), replica_groups={{1,0}}, to_apply=add
}`, nil},
		// The result may be written over the donated parameter it reduces.
		{"all-reduce/2/donated", 2, 1, `ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  r = f32[64] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[64] add(r, y)
}`, []vkxla.CompileOption{vkxla.WithDonation(0)}},
		{"all-gather/2/unfused", 2, 1, `ENTRY e {
  x = f32[3,2] parameter(0)
  y = f32[3,2] exponential(x)
  g = f32[6,2] all-gather(y), replica_groups={{0,1}}, dimensions={0}
  ROOT n = f32[6,2] negate(g)
}`, []vkxla.CompileOption{vkxla.WithoutPasses("fusion")}},
	}
	for _, c := range cases.Collectives {
		all = append(all, replicatedCase{c.Name, c.Replicas, c.Partitions, c.Entry, nil})
	}
	for _, c := range all {
		t.Run(c.name, func(t *testing.T) { c.check(t, rts) })
	}
}

// A data-parallel training step of a linear model, loss mean((x·w − y)²): two
// devices each take half the batch, all-reduce their gradients' sums, and take
// the same step as one device on the whole batch.
func TestReplicatedDataParallelStep(t *testing.T) {
	const step = `ENTRY e {
  w = f32[4] parameter(0)
  x = f32[%B,4] parameter(1)
  y = f32[%B] parameter(2)
  p = f32[%B] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[%B] subtract(p, y)
  g = f32[4] dot(e, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  s = f32[4] %REDUCE
  k = f32[] constant(-0.0125)
  kb = f32[4] broadcast(k), dimensions={}
  d = f32[4] multiply(s, kb)
  ROOT w2 = f32[4] add(w, d)
}`
	// The step is w − lr·(2/16)·Σ e·x with lr = 0.1: −0.0125 per summed term.
	text := func(batch, reduce string) string {
		return cases.Reducers + strings.NewReplacer("%B", batch, "%REDUCE", reduce).Replace(step)
	}
	one, err := hlo.ParseModule(text("16", "copy(g)"))
	require.NoError(t, err)
	two, err := hlo.ParseModule(text("8", "all-reduce(g), replica_groups={{0,1}}, to_apply=add"))
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(7, 1))
	w := randomLiteral(rng, hlo.MakeShape(hlo.F32, 4), unitDomain)
	x := randomLiteral(rng, hlo.MakeShape(hlo.F32, 16, 4), unitDomain)
	y := randomLiteral(rng, hlo.MakeShape(hlo.F32, 16), unitDomain)
	xs, err := hlo.Values[float32](x)
	require.NoError(t, err)
	ys, err := hlo.Values[float32](y)
	require.NoError(t, err)
	half := func(d int) []*hlo.Literal {
		return []*hlo.Literal{w, hlo.MustFromSlice([]int64{8, 4}, xs[32*d:32*(d+1)]), hlo.MustFromSlice([]int64{8}, ys[8*d:8*(d+1)])}
	}

	rts := newRuntimes(t, 2)
	ctx := context.Background()
	exe, err := rts[0].Compile(ctx, one)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	want, err := exe.Run(ctx, w, x, y)
	require.NoError(t, err)

	r, err := vkxla.CompileReplicated(ctx, two, rts)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	got, err := r.Run(ctx, [][]*hlo.Literal{half(0), half(1)})
	require.NoError(t, err)
	spec := vkxla.ErrorSpec{Abs: 1e-5, Rel: 1e-5}
	for d := range got {
		require.NoError(t, spec.Check(got[d][0], want[0]), "device %d", d)
	}
	assert.Error(t, vkxla.ErrorSpec{}.Check(want[0], w), "the step moved w")
	// Every device holds the same plan's memory.
	assert.Equal(t, r.MemoryStats(0), r.MemoryStats(1))
	assert.Positive(t, r.MemoryStats(0).PeakBytes)
}

// A device-dependent trip count runs the loop's all-reduce a different number of
// times per device: Run fails with ErrMismatch instead of waiting forever.
func TestReplicatedMismatchFails(t *testing.T) {
	m, err := cases.Parse(cases.MismatchedLoop)
	require.NoError(t, err)
	rts := newRuntimes(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := vkxla.CompileReplicated(ctx, m, rts)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	x := hlo.MustFromSlice([]int64{2}, []float32{1, 2})
	_, err = r.Run(ctx, [][]*hlo.Literal{{x}, {x}})
	require.Error(t, err)
	assert.ErrorIs(t, err, vkxla.ErrMismatch)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	assert.Contains(t, err.Error(), "finished without reaching it")

	// A second Run meets the same mismatch: the first left no device waiting.
	_, err = r.Run(ctx, [][]*hlo.Literal{{x}, {x}})
	assert.ErrorIs(t, err, vkxla.ErrMismatch)
}

func TestReplicatedInvalid(t *testing.T) {
	rts := newRuntimes(t, 2)
	m, err := cases.Parse(`ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}`)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = vkxla.CompileReplicated(ctx, m, []*vkxla.Runtime{rts[0], rts[0]})
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	_, err = vkxla.CompileReplicated(ctx, m, rts, vkxla.WithPartitions(3))
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)

	r, err := vkxla.CompileReplicated(ctx, m, rts)
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	_, err = r.Run(ctx, [][]*hlo.Literal{{hlo.MustFromSlice([]int64{2}, []float32{1, 2})}})
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	_, err = rts[0].Compile(ctx, m, vkxla.WithDevices(2))
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument, "Compile makes no executable for several devices")
	// One device's executable alone cannot run a two-device program.
	_, err = r.Executable(0).Run(ctx, hlo.MustFromSlice([]int64{2}, []float32{1, 2}))
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)

	bad, err := cases.Parse(`ENTRY e {
  x = f32[2] parameter(0)
  ROOT bad = f32[2] all-reduce(x), replica_groups={{0,0}}, to_apply=add
}`)
	require.NoError(t, err)
	rb, err := vkxla.CompileReplicated(ctx, bad, rts)
	require.NoError(t, err)
	defer func() { require.NoError(t, rb.Close()) }()
	x := hlo.MustFromSlice([]int64{2}, []float32{1, 2})
	_, err = rb.Run(ctx, [][]*hlo.Literal{{x}, {x}})
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "%bad")
}

// Each device's memory is the plan's, stated before the run: x and y = x·x (1 KiB
// each) are live at the host step, which writes the all-reduce's result g over y;
// z is written over g.
func TestReplicatedMemoryPerDevice(t *testing.T) {
	m, err := cases.Parse(`ENTRY e {
  x = f32[256] parameter(0)
  y = f32[256] multiply(x, x)
  g = f32[256] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[256] add(g, x)
}`)
	require.NoError(t, err)
	rts := newRuntimes(t, 2)
	ctx := context.Background()
	r, err := vkxla.CompileReplicated(ctx, m, rts)
	require.NoError(t, err)
	for d := range r.Devices() {
		assert.Equal(t, int64(2*1024), r.MemoryStats(d).PeakBytes, "device %d", d)
	}
	// A cancelled run stops before any device starts.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	x := hlo.MustFromSlice([]int64{256}, make([]float32, 256))
	_, err = r.Run(cancelled, [][]*hlo.Literal{{x}, {x}})
	assert.ErrorIs(t, err, context.Canceled)
	// Closing the runtimes first releases the executables; Close then does nothing.
	for _, rt := range rts {
		require.NoError(t, rt.Close())
	}
	assert.NoError(t, r.Close())
	assert.Nil(t, r.Executable(0), "closed")
	assert.Zero(t, r.MemoryStats(5))
	_, err = r.Run(ctx, [][]*hlo.Literal{{x}, {x}})
	assert.ErrorIs(t, err, vkxla.ErrClosed)
}
