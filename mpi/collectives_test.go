package mpi_test

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
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// The reducers the cases' all-reduces apply.
const reducers = `HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
and {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] and(a, b)
}
`

// randomLiteral: floats uniform in [-1, 1), preds and integers at random.
func randomLiteral(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		switch {
		case s.DType == hlo.Pred:
			lit.SetBool(i, rng.IntN(4) != 0) // mostly true: and-reductions of both outcomes
		case s.DType.IsFloat():
			lit.SetFloat64(i, 2*rng.Float64()-1)
		default:
			lit.SetBits(i, rng.Uint64())
		}
	}
	return lit
}

// allInputs are every device's inputs, the same on every rank (one seed).
func allInputs(m *hlo.Module, devices int, seed uint64) [][]*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 1))
	inputs := make([][]*hlo.Literal, devices)
	for d := range inputs {
		for _, p := range m.Entry.Params {
			inputs[d] = append(inputs[d], randomLiteral(rng, p.Shape))
		}
	}
	return inputs
}

type collectiveCase struct {
	name       string
	partitions int
	entry      string
	// exact: the module is collectives only (computed on the host with cpuref's
	// reducer) and exact ops, so the run must give cpuref's bits; otherwise its
	// kernels are checked within the program tolerance.
	exact bool
}

var collectiveCases = []collectiveCase{
	{"all-reduce/add", 1, `ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}`, true},
	{"all-reduce/max/tuple", 1, `ENTRY e {
  x = f32[5] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = (f32[5], f32[2,3]) all-reduce(x, y), replica_groups={}, to_apply=max
}`, true},
	{"all-reduce/and", 1, `ENTRY e {
  x = pred[16] parameter(0)
  ROOT r = pred[16] all-reduce(x), replica_groups={{1,0}}, to_apply=and
}`, true},
	// Each process is a group of its own: still one round per execution.
	{"all-reduce/groups-of-one", 1, `ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={{1},{0}}, to_apply=add
}`, true},
	{"all-reduce-start-done", 1, `ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] all-reduce-start(x), replica_groups={{1,0}}, to_apply=add
  ROOT d = f32[8] all-reduce-done(s)
}`, true},
	{"all-gather", 1, `ENTRY e {
  x = f32[3,2] parameter(0)
  ROOT g = f32[3,4] all-gather(x), replica_groups={{0,1}}, dimensions={1}
}`, true},
	{"all-gather-start-done", 1, `ENTRY e {
  x = f32[2,3] parameter(0)
  s = (f32[2,3], f32[4,3]) all-gather-start(x), replica_groups={{1,0}}, dimensions={0}
  ROOT d = f32[4,3] all-gather-done(s)
}`, true},
	{"reduce-scatter", 1, `ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT r = f32[2,6] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add
}`, true},
	{"all-to-all", 1, `ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT a = f32[2,4] all-to-all(x), replica_groups={{0,1}}, dimensions={1}
}`, true},
	{"all-to-all/tuple", 1, `ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT t = (f32[3], f32[3]) all-to-all(a, b), replica_groups={{1,0}}
}`, true},
	{"collective-permute/swap", 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), source_target_pairs={{0,1},{1,0}}
}`, true},
	// Device 0 is no pair's target: zeros.
	{"collective-permute/one-way", 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), source_target_pairs={{0,1}}
}`, true},
	{"collective-permute-start-done", 1, `ENTRY e {
  x = f32[5] parameter(0)
  s = (f32[5], f32[5]) collective-permute-start(x), source_target_pairs={{1,0}}
  ROOT d = f32[5] collective-permute-done(s)
}`, true},
	{"collective-broadcast", 1, `ENTRY e {
  x = f32[3] parameter(0)
  ROOT b = f32[3] collective-broadcast(x), replica_groups={{1,0}}
}`, true},
	{"ids/2x1", 1, `ENTRY e {
  x = f32[2] parameter(0)
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
}`, true},
	{"ids/1x2", 2, `ENTRY e {
  x = f32[2] parameter(0)
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
}`, true},
	{"cross-partition/1x2", 2, `ENTRY e {
  x = f32[4] parameter(0)
  ROOT a = f32[4] all-to-all(x), channel_id=1, replica_groups={}, dimensions={0}
}`, true},
	{"in-a-loop", 1, `cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  h = f32[4] constant({0.5, 0.5, 0.5, 0.5})
  y = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  z = f32[4] multiply(y, h)
  ROOT t = (s32[], f32[4]) tuple(j, z)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(s), condition=cond, body=body
  ROOT y = f32[4] get-tuple-element(w), index=1
}`, true},
	{"between-kernels", 1, `ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] exponential(x)
  r = f32[64] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[64] tanh(r)
}`, false},
}

// Every collective over 2 processes gives this device cpuref.EvalReplicas's
// result on the same inputs.
func testCollectives(t *testing.T, rt *vkxla.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rank := world.Rank()
	for i, c := range collectiveCases {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlo.ParseModule(reducers + c.entry)
			require.NoError(t, err)
			inputs := allInputs(m, ranks, uint64(i))
			want, err := cpuref.EvalReplicas(ctx, m, ranks/c.partitions, c.partitions, inputs)
			require.NoError(t, err, "cpuref")
			d, err := vkxla.CompileDistributed(ctx, m, rt, world, vkxla.WithPartitions(c.partitions))
			require.NoError(t, err)
			defer func() { assert.NoError(t, d.Close()) }()
			assert.Equal(t, rank, d.Device())
			got, err := d.Run(ctx, inputs[rank]...)
			require.NoError(t, err)
			leaves := want[rank].Leaves()
			require.Len(t, got, len(leaves))
			spec := vkxla.ProgramTolerance(m, hlo.F32)
			for k := range leaves {
				if c.exact {
					assert.Equal(t, leaves[k].Bytes(), got[k].Bytes(), "output %d, bit for bit", k)
				} else {
					assert.NoError(t, spec.Check(got[k], leaves[k]), "output %d", k)
				}
			}
		})
	}
}

// hlo/nn/train's MLP, data-parallel: each process takes half the batch, and the
// step (gradients all-reduced, divided by 2) updates the weights as the
// one-device step on the whole batch does, within the program tolerance; both
// processes hold the same bits.
func testMLPStep(t *testing.T, rt *vkxla.Runtime) {
	const batch = 16
	testDataParallelStep(t, rt, batch, func(b int64) train.Model { return train.MLP("mlp", hlo.F32, b, 4, 16, 3) },
		func() []*hlo.Literal {
			x, labels := train.Blobs(1, hlo.F32, batch, 4, 3, 0.5)
			return []*hlo.Literal{x, labels}
		})
}

// The transformer LM step (2 blocks, causal attention, GELU MLP) likewise, on
// a batch of 4 sequences split in two.
func testTransformerStep(t *testing.T, rt *vkxla.Runtime) {
	c := train.LMConfig{Blocks: 2, Seq: 8, Dim: 16, Heads: 2, Hidden: 32, Vocab: 11, Batch: 4}
	testDataParallelStep(t, rt, c.Batch, func(b int64) train.Model { bc := c; bc.Batch = b; return train.TransformerLM("lm", hlo.F32, bc) },
		func() []*hlo.Literal {
			tokens, targets := train.OneHotSequences(3, hlo.F32, c.Batch, c.Seq, c.Vocab)
			return []*hlo.Literal{tokens, targets}
		})
}

// testDataParallelStep: the step of model (SGD with momentum) over a batch split
// between the ranks (train.BuildDataParallel, each rank its train.Shard of every
// batch input) gives the one-device step on the whole batch, within the program
// tolerance, and the same bits on every rank.
func testDataParallelStep(t *testing.T, rt *vkxla.Runtime, batch int64, model func(batch int64) train.Model, batchInputs func() []*hlo.Literal) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opt := train.SGD{LR: 0.1, Momentum: 0.9}
	whole, err := train.Build(model(batch), opt)
	require.NoError(t, err)
	step, err := train.BuildDataParallel(model(batch/ranks), opt, ranks)
	require.NoError(t, err)
	state := whole.Init(7)
	data := batchInputs()

	exe, err := rt.Compile(ctx, whole.Module)
	require.NoError(t, err)
	defer func() { assert.NoError(t, exe.Close()) }()
	want, err := exe.Run(ctx, append(append([]*hlo.Literal{}, state...), data...)...)
	require.NoError(t, err)

	d, err := vkxla.CompileDistributed(ctx, step.Module, rt, world)
	require.NoError(t, err)
	defer func() { assert.NoError(t, d.Close()) }()
	in := append([]*hlo.Literal{}, state...)
	for _, x := range data {
		shard, err := train.Shard(x, ranks, world.Rank())
		require.NoError(t, err)
		in = append(in, shard)
	}
	got, err := d.Run(ctx, in...)
	require.NoError(t, err)
	require.Len(t, got, len(want))
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	for k := range want {
		assert.NoError(t, spec.Check(got[k], want[k]), "output %d", k)
	}
	assert.Error(t, vkxla.ErrorSpec{}.Check(got[1], state[0]), "the step moved the first parameter")
	// Both processes' updated weights, bit for bit.
	var mine []byte
	for _, g := range got[:step.Updated+1] {
		mine = append(mine, g.Bytes()...)
	}
	all, err := world.AllGather(ctx, mine)
	require.NoError(t, err)
	assert.Equal(t, all[0], all[1], "the processes' parameters and state differ")
}

// Processes that cannot meet fail, every one of them, with an error saying why,
// and none waits.
func testMismatch(t *testing.T, rt *vkxla.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rank := world.Rank()
	parse := func(entry string) *hlo.Module {
		m, err := hlo.ParseModule(reducers + entry)
		require.NoError(t, err)
		return m
	}
	reduce := parse(`ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}`)
	gather := parse(`ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[4] all-gather(x), replica_groups={{0,1}}, dimensions={0}
}`)
	x := hlo.MustFromSlice([]int64{2}, []float32{1, 2})

	t.Run("modules", func(t *testing.T) {
		_, err := vkxla.CompileDistributed(ctx, []*hlo.Module{reduce, gather}[rank], rt, world)
		require.ErrorIs(t, err, vkxla.ErrMismatch)
		assert.Contains(t, err.Error(), "the plans' collectives differ")
		assert.Contains(t, err.Error(), "all-reduce r f32[2]")
		assert.Contains(t, err.Error(), "all-gather r f32[4]")
	})
	t.Run("compile-error", func(t *testing.T) {
		rts := []*vkxla.Runtime{rt, nil}
		_, err := vkxla.CompileDistributed(ctx, reduce, rts[rank], world)
		require.Error(t, err)
		if rank == 1 {
			assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
		} else {
			assert.ErrorIs(t, err, vkxla.ErrMismatch)
			assert.Contains(t, err.Error(), "device 1 (replica 1, partition 0) failed to compile")
		}
	})
	t.Run("partitions", func(t *testing.T) {
		_, err := vkxla.CompileDistributed(ctx, reduce, rt, world, vkxla.WithPartitions(1+rank))
		require.ErrorIs(t, err, vkxla.ErrMismatch)
		assert.Contains(t, err.Error(), "devices (replicas×partitions)")
	})

	// A device-dependent trip count runs the loop's all-reduce once on device 0,
	// twice on device 1.
	loop := parse(`cond {
  s = (u32[], f32[2]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  r = u32[] replica-id()
  one = u32[] constant(1)
  n = u32[] add(r, one)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (u32[], f32[2]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = u32[] constant(1)
  j = u32[] add(i, one)
  y = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT t = (u32[], f32[2]) tuple(j, y)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = u32[] constant(0)
  s = (u32[], f32[2]) tuple(zero, x)
  w = (u32[], f32[2]) while(s), condition=cond, body=body
  ROOT y = f32[2] get-tuple-element(w), index=1
}`)
	t.Run("loop", func(t *testing.T) {
		d, err := vkxla.CompileDistributed(ctx, loop, rt, world)
		require.NoError(t, err)
		defer func() { assert.NoError(t, d.Close()) }()
		for range 2 { // the first run left nothing behind: the second fails alike
			_, err = d.Run(ctx, x)
			require.ErrorIs(t, err, vkxla.ErrMismatch)
			assert.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			assert.Contains(t, err.Error(), "device 0 (replica 0, partition 0) finished; device 1 (replica 1, partition 0) waits at all-reduce %y (execution 2)")
		}
	})

	t.Run("inputs", func(t *testing.T) {
		d, err := vkxla.CompileDistributed(ctx, reduce, rt, world)
		require.NoError(t, err)
		defer func() { assert.NoError(t, d.Close()) }()
		inputs := [][]*hlo.Literal{{x}, {x, x}}[rank] // device 1 gives two inputs
		_, err = d.Run(ctx, inputs...)
		require.Error(t, err)
		if rank == 1 {
			assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
		} else {
			assert.ErrorIs(t, err, vkxla.ErrMismatch)
			assert.Contains(t, err.Error(), "device 1 (replica 1, partition 0) stopped with an error")
		}
		// The processes meet again at the next run.
		got, err := d.Run(ctx, x)
		require.NoError(t, err)
		assert.Equal(t, []float32{2, 4}, must(hlo.Values[float32](got[0])))
	})

	t.Run("cancelled", func(t *testing.T) {
		d, err := vkxla.CompileDistributed(ctx, reduce, rt, world)
		require.NoError(t, err)
		defer func() { assert.NoError(t, d.Close()) }()
		cctx, cancel := context.WithCancel(ctx)
		if rank == 0 {
			cancel()
		}
		defer cancel()
		_, err = d.Run(cctx, x)
		require.Error(t, err)
		if rank == 0 {
			assert.ErrorIs(t, err, context.Canceled)
		} else {
			assert.ErrorIs(t, err, vkxla.ErrMismatch)
			assert.True(t, strings.Contains(err.Error(), "stopped with an error"), "%v", err)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
