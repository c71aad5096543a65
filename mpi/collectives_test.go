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
	"github.com/vkxla/vkxla/internal/collective/cases"
)

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

// Every collective case for 2 devices (internal/collective/cases) over 2
// processes gives this device cpuref.EvalReplicas's result on the same inputs.
func testCollectives(t *testing.T, rt *vkxla.Runtime) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rank := world.Rank()
	for i, c := range cases.On(ranks) {
		t.Run(c.Name, func(t *testing.T) {
			m, err := c.Module()
			require.NoError(t, err)
			inputs := allInputs(m, ranks, uint64(i))
			want, err := cpuref.EvalReplicas(ctx, m, c.Replicas, c.Partitions, inputs)
			require.NoError(t, err, "cpuref")
			d, err := vkxla.CompileDistributed(ctx, m, rt, world, vkxla.WithPartitions(c.Partitions))
			require.NoError(t, err)
			defer func() { assert.NoError(t, d.Close()) }()
			assert.Equal(t, rank, d.Device())
			got, err := d.Run(ctx, inputs[rank]...)
			require.NoError(t, err)
			leaves := want[rank].Leaves()
			require.Len(t, got, len(leaves))
			spec := vkxla.ProgramTolerance(m, hlo.F32)
			for k := range leaves {
				if c.Exact {
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
		m, err := cases.Parse(entry)
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
	loop := parse(cases.MismatchedLoop)
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
