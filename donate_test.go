package vkxla_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
	"github.com/vkxla/vkxla/targets"
)

// decodeStepHLO is one attention decode step written as jax dumps it
// (donate_argnums=(3, 4)): the key and value projections of the new token are
// written into the KV caches at pos with dynamic-update-slice, and the token
// attends over the updated caches. The caches are aliased to outputs 1 and 2.
const decodeStepHLO = `HloModule jit_decode_step, is_scheduled=false, input_output_alias={ {1}: (3, {}, must-alias), {2}: (4, {}, must-alias) }, entry_computation_layout={(f32[32,32]{1,0}, f32[32,32]{1,0}, f32[1,32]{1,0}, f32[16,32]{1,0}, f32[16,32]{1,0}, s32[])->(f32[1,32]{1,0}, f32[16,32]{1,0}, f32[16,32]{1,0})}

%region_max.1 (Arg_0.2: f32[], Arg_1.3: f32[]) -> f32[] {
  %Arg_0.2 = f32[] parameter(0)
  %Arg_1.3 = f32[] parameter(1)
  ROOT %maximum.4 = f32[] maximum(f32[] %Arg_0.2, f32[] %Arg_1.3)
}

%region_add.5 (Arg_0.6: f32[], Arg_1.7: f32[]) -> f32[] {
  %Arg_0.6 = f32[] parameter(0)
  %Arg_1.7 = f32[] parameter(1)
  ROOT %add.8 = f32[] add(f32[] %Arg_0.6, f32[] %Arg_1.7)
}

ENTRY %main.30 (Arg_0.1: f32[32,32], Arg_1.2: f32[32,32], Arg_2.3: f32[1,32], Arg_3.4: f32[16,32], Arg_4.5: f32[16,32], Arg_5.6: s32[]) -> (f32[1,32], f32[16,32], f32[16,32]) {
  %Arg_0.1 = f32[32,32]{1,0} parameter(0), sharding={replicated}
  %Arg_1.2 = f32[32,32]{1,0} parameter(1), sharding={replicated}
  %Arg_2.3 = f32[1,32]{1,0} parameter(2), sharding={replicated}
  %Arg_3.4 = f32[16,32]{1,0} parameter(3), sharding={replicated}
  %Arg_4.5 = f32[16,32]{1,0} parameter(4), sharding={replicated}
  %Arg_5.6 = s32[] parameter(5), sharding={replicated}
  %dot.7 = f32[1,32]{1,0} dot(f32[1,32]{1,0} %Arg_2.3, f32[32,32]{1,0} %Arg_0.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(decode_step)/jit(main)/dot_general"}
  %dot.8 = f32[1,32]{1,0} dot(f32[1,32]{1,0} %Arg_2.3, f32[32,32]{1,0} %Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %constant.9 = s32[] constant(0)
  %dynamic-update-slice.10 = f32[16,32]{1,0} dynamic-update-slice(f32[16,32]{1,0} %Arg_3.4, f32[1,32]{1,0} %dot.7, s32[] %Arg_5.6, s32[] %constant.9), metadata={op_name="jit(decode_step)/jit(main)/dynamic_update_slice"}
  %dynamic-update-slice.11 = f32[16,32]{1,0} dynamic-update-slice(f32[16,32]{1,0} %Arg_4.5, f32[1,32]{1,0} %dot.8, s32[] %Arg_5.6, s32[] %constant.9)
  %dot.12 = f32[1,16]{1,0} dot(f32[1,32]{1,0} %Arg_2.3, f32[16,32]{1,0} %dynamic-update-slice.10), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %constant.13 = f32[] constant(-inf)
  %reduce.14 = f32[1]{0} reduce(f32[1,16]{1,0} %dot.12, f32[] %constant.13), dimensions={1}, to_apply=%region_max.1
  %broadcast.15 = f32[1,16]{1,0} broadcast(f32[1]{0} %reduce.14), dimensions={0}
  %subtract.16 = f32[1,16]{1,0} subtract(f32[1,16]{1,0} %dot.12, f32[1,16]{1,0} %broadcast.15)
  %exponential.17 = f32[1,16]{1,0} exponential(f32[1,16]{1,0} %subtract.16)
  %constant.18 = f32[] constant(0)
  %reduce.19 = f32[1]{0} reduce(f32[1,16]{1,0} %exponential.17, f32[] %constant.18), dimensions={1}, to_apply=%region_add.5
  %broadcast.20 = f32[1,16]{1,0} broadcast(f32[1]{0} %reduce.19), dimensions={0}
  %divide.21 = f32[1,16]{1,0} divide(f32[1,16]{1,0} %exponential.17, f32[1,16]{1,0} %broadcast.20)
  %dot.22 = f32[1,32]{1,0} dot(f32[1,16]{1,0} %divide.21, f32[16,32]{1,0} %dynamic-update-slice.11), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %tuple.23 = (f32[1,32]{1,0}, f32[16,32]{1,0}, f32[16,32]{1,0}) tuple(f32[1,32]{1,0} %dot.22, f32[16,32]{1,0} %dynamic-update-slice.10, f32[16,32]{1,0} %dynamic-update-slice.11)
}
`

// decodeStep parses the decode step, with the header's aliases or without them.
func decodeStep(t testing.TB, aliased bool) *hlo.Module {
	t.Helper()
	text := decodeStepHLO
	if !aliased {
		text = strings.Replace(text, "input_output_alias={ {1}: (3, {}, must-alias), {2}: (4, {}, must-alias) }, ", "", 1)
	}
	m, err := hlo.ParseModule(text)
	require.NoError(t, err)
	return m
}

// decodeInputs are random weights, token and caches, and position pos.
func decodeInputs(rng *rand.Rand, pos int32) []*hlo.Literal {
	d := domain{-0.5, 0.5}
	return []*hlo.Literal{
		randomLiteral(rng, f32(32, 32), d), randomLiteral(rng, f32(32, 32), d), randomLiteral(rng, f32(1, 32), d),
		randomLiteral(rng, f32(16, 32), d), randomLiteral(rng, f32(16, 32), d), hlo.ScalarLiteral(pos),
	}
}

// requireOutputsMatch compares device outputs with cpuref's within the module's
// tolerance.
func requireOutputsMatch(t testing.TB, m *hlo.Module, got []*hlo.Literal, inputs ...*hlo.Literal) {
	t.Helper()
	want, err := cpuref.Eval(m, inputs...)
	require.NoError(t, err)
	leaves := want.Leaves()
	require.Len(t, got, len(leaves))
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	for i := range got {
		require.NoError(t, spec.Check(got[i], leaves[i]), "output %d", i)
	}
}

func toHost(t testing.TB, ts []*vkxla.DeviceTensor) []*hlo.Literal {
	t.Helper()
	out := make([]*hlo.Literal, len(ts))
	for i, x := range ts {
		lit, err := x.ToHost(context.Background())
		require.NoError(t, err)
		out[i] = lit
	}
	return out
}

func upload(t testing.TB, rt *vkxla.Runtime, lits ...*hlo.Literal) []*vkxla.DeviceTensor {
	t.Helper()
	out := make([]*vkxla.DeviceTensor, len(lits))
	for i, l := range lits {
		x, err := rt.Upload(context.Background(), l)
		require.NoError(t, err)
		out[i] = x
	}
	return out
}

func anys(ts []*vkxla.DeviceTensor) []any {
	out := make([]any, len(ts))
	for i, x := range ts {
		out[i] = x
	}
	return out
}

// TestDonationMatchesCPU runs decode steps with the caches donated (aliased by
// the header) and the weights borrowed, each step's output caches feeding the
// next, and compares every step with cpuref; the same steps without aliases and
// through Run with host literals agree too.
func TestDonationMatchesCPU(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 21))
	in := decodeInputs(rng, 0)
	m := decodeStep(t, true)
	exe, err := rt.Compile(ctx, m, vkxla.WithBorrowedInputs(0, 1))
	require.NoError(t, err)
	defer exe.Close()
	plain, err := rt.Compile(ctx, decodeStep(t, false))
	require.NoError(t, err)
	defer plain.Close()

	got, err := exe.Run(ctx, in...)
	require.NoError(t, err)
	requireOutputsMatch(t, m, got, in...)
	got, err = plain.Run(ctx, in...)
	require.NoError(t, err)
	requireOutputsMatch(t, m, got, in...)

	dev := upload(t, rt, in[:5]...)
	weights, kc, vc := dev[:2], dev[3], dev[4]
	defer closeAll(t, append(weights, dev[2]))
	for pos := range int32(5) {
		step := []*hlo.Literal{in[0], in[1], in[2], in[3], in[4], hlo.ScalarLiteral(pos)}
		outs, err := exe.RunOnDevice(ctx, weights[0], weights[1], dev[2], kc, vc, step[5])
		require.NoError(t, err, "step %d", pos)
		host := toHost(t, outs)
		requireOutputsMatch(t, m, host, step...)
		in[3], in[4] = host[1], host[2] // cpuref's next inputs are the device's caches
		require.NoError(t, outs[0].Close())
		kc, vc = outs[1], outs[2]
	}
	closeAll(t, []*vkxla.DeviceTensor{kc, vc})
	if rt.Device().Caps().TimestampsSupported {
		p, err := exe.Profile()
		require.NoError(t, err, "the profile of a run recorded for its binding")
		assert.NotEmpty(t, p.Kernels)
	}
}

func closeAll(t testing.TB, ts []*vkxla.DeviceTensor) {
	t.Helper()
	for _, x := range ts {
		require.NoError(t, x.Close())
	}
}

// TestDonatedTensorIsDead: after a run, a donated tensor answers ErrClosed saying it
// was donated, wherever it is used; Close does nothing; the output that took its
// memory over lives on.
func TestDonatedTensorIsDead(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m := negateModule(t, 8)
	exe, err := rt.Compile(ctx, m, vkxla.WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	x, err := rt.Upload(ctx, f32Literal(1, 2, 3, 4, 5, 6, 7, 8))
	require.NoError(t, err)
	inUse := rt.MemoryStats().Tensors.BytesInUse
	outs, err := exe.RunOnDevice(ctx, x)
	require.NoError(t, err)
	assert.Equal(t, inUse, rt.MemoryStats().Tensors.BytesInUse, "the output took the donated memory over")
	assert.Equal(t, []float32{-1, -2, -3, -4, -5, -6, -7, -8}, f32Values(t, toHost(t, outs)[0]))

	_, err = x.ToHost(ctx)
	require.ErrorIs(t, err, vkxla.ErrClosed)
	assert.Contains(t, err.Error(), "donated")
	_, err = exe.RunOnDevice(ctx, x)
	require.ErrorIs(t, err, vkxla.ErrClosed)
	assert.Contains(t, err.Error(), "input 0: vkxla: device tensor f32[8] was donated to a run of")
	require.NoError(t, x.Close(), "closing a donated tensor does nothing")
	require.NoError(t, outs[0].Close())
}

// TestDonateTwiceInOneCall: a tensor donated by one input and passed by another is
// rejected before the run takes anything.
func TestDonateTwiceInOneCall(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	b := hlo.NewBuilder("add")
	x := b.Parameter(f32(4), "x")
	y := b.Parameter(f32(4), "y")
	m := mustBuild(t, b, b.Add(x, y))
	exe, err := rt.Compile(ctx, m, vkxla.WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	v, err := rt.Upload(ctx, f32Literal(1, 2, 3, 4))
	require.NoError(t, err)
	_, err = exe.RunOnDevice(ctx, v, v)
	require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "input 0 donates device tensor f32[4], and input 1 passes it again")
	got, err := v.ToHost(ctx)
	require.NoError(t, err, "the rejected call took nothing")
	assert.Equal(t, []float32{1, 2, 3, 4}, f32Values(t, got))
	w, err := rt.Upload(ctx, f32Literal(10, 20, 30, 40))
	require.NoError(t, err)
	outs, err := exe.RunOnDevice(ctx, v, w)
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22, 33, 44}, f32Values(t, toHost(t, outs)[0]))
	closeAll(t, append(outs, w))
}

// copyInsertionHLO aliases outputs whose parameters are read after the kernel
// writing them could start: output 0 reverses its parameter (its own kernel reads
// other elements), output 1's parameter is read again by output 2's kernel after
// output 1's.
const copyInsertionHLO = `HloModule copy_insertion, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}, must-alias) }

ENTRY %e (a: f32[64], b: f32[64,64]) -> (f32[64], f32[64,64], f32[64]) {
  %a = f32[64] parameter(0)
  %b = f32[64,64] parameter(1)
  %r = f32[64] reverse(%a), dimensions={0}
  %t = f32[64,64] transpose(%b), dimensions={1,0}
  %d = f32[64] dot(%b, %r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = (f32[64], f32[64,64], f32[64]) tuple(%r, %t, %d)
}`

// TestMustAliasCopyInsertion: where a must-alias output cannot be written over its
// parameter before the parameter's last read, the plan computes it apart and copies
// it over after the last step, and the results are right.
func TestMustAliasCopyInsertion(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(copyInsertionHLO)
	require.NoError(t, err)
	p, err := vkxla.PlanFor(context.Background(), m, builtinLavapipe(t), "")
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(p.String(), `output     "out.alias"`), "both outputs are copied over their parameters:\n%s", p)
	rng := rand.New(rand.NewPCG(5, 5))
	in := []*hlo.Literal{randomLiteral(rng, f32(64), unitDomain), randomLiteral(rng, f32(64, 64), unitDomain)}
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	got, err := exe.Run(context.Background(), in...)
	require.NoError(t, err)
	requireOutputsMatch(t, m, got, in...)
	dev := upload(t, rt, in...)
	outs, err := exe.RunOnDevice(context.Background(), anys(dev)...)
	require.NoError(t, err)
	requireOutputsMatch(t, m, toHost(t, outs), in...)
	closeAll(t, outs)
}

func builtinLavapipe(t testing.TB) targets.Device {
	t.Helper()
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	return d
}

// TestDecodeStepHoldsWeightsOnce: with the weights borrowed and the caches
// donated, the device holds the weights once (the caller's tensors), the caches
// once (taken over by the outputs) and the plan's temporaries and outputs: the
// executable's arena holds no parameter but the token and position.
func TestDecodeStepHoldsWeightsOnce(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, decodeStep(t, true), vkxla.WithBorrowedInputs(0, 1))
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	const weights, caches, token, pos = 2 * 32 * 32 * 4, 2 * 16 * 32 * 4, 32 * 4, 4
	assert.Equal(t, int64(weights), st.BorrowedBytes)
	assert.Equal(t, int64(caches), st.DonatedBytes)
	assert.Equal(t, int64(token+pos), st.ParameterBytes, "only the token and position are staged into the arena")

	in := decodeInputs(rand.New(rand.NewPCG(8, 8)), 3)
	dev := upload(t, rt, in[:5]...)
	outs, err := exe.RunOnDevice(ctx, dev[0], dev[1], dev[2], dev[3], dev[4], in[5])
	require.NoError(t, err)
	require.NoError(t, dev[2].Close()) // the token, no longer needed
	got := rt.MemoryStats()
	// The pool: the weights, the two caches (now outputs 1 and 2, in the donated
	// memory) and output 0. The executables: the plan alone, which holds the
	// token, the position, the temporaries and output 0's range, and no weight.
	assert.Equal(t, int64(weights+caches+32*4), got.Tensors.BytesInUse, got.String())
	assert.Equal(t, st.PeakBytes, got.ExecutableBytes, got.String())
	assert.Equal(t, int64(weights+caches+32*4)+st.PeakBytes, got.ExecutableBytes+got.Tensors.BytesInUse,
		"the device holds the weights once, the caches once, output 0 and the plan")
	arena := st.ParameterBytes + st.TemporaryBytes + st.ConstantBytes + st.OutputBytes - st.InPlaceBytes
	assert.LessOrEqual(t, st.PeakBytes, alignUp(arena, 16)+16*int64(st.Buffers), "the plan holds only its own buffers: %v", st)
	assert.Less(t, st.PeakBytes, int64(weights), "no copy of the weights: %v", st)
	closeAll(t, append(outs, dev[0], dev[1]))

	// Without donation and borrowing the plan holds the weights and caches again.
	copying, err := rt.Compile(ctx, decodeStep(t, false))
	require.NoError(t, err)
	defer copying.Close()
	assert.GreaterOrEqual(t, copying.MemoryStats().PeakBytes, int64(weights+caches))
}

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// pooledBytes is what tensors of these literals' shapes take in the pool: each at
// least 4 bytes, aligned to 16.
func pooledBytes(lits ...*hlo.Literal) int64 {
	var n int64
	for _, l := range lits {
		n += alignUp(max(l.Shape().ByteSize(), 4), 16)
	}
	return n
}

// TestConcurrentDonateAndClose: a run donating a tensor races the tensor's Close:
// either the run wins (its output took the memory over, the tensor says it was
// donated) or the Close does (the run fails with ErrClosed); nothing is freed twice
// or leaked.
func TestConcurrentDonateAndClose(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, negateModule(t, 256), vkxla.WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	lit := randomLiteral(rand.New(rand.NewPCG(2, 2)), f32(256), unitDomain)
	for range 20 {
		x, err := rt.Upload(ctx, lit)
		require.NoError(t, err)
		var wg sync.WaitGroup
		var outs []*vkxla.DeviceTensor
		var runErr, closeErr error
		wg.Go(func() { outs, runErr = exe.RunOnDevice(ctx, x) })
		wg.Go(func() { closeErr = x.Close() })
		wg.Wait()
		require.NoError(t, closeErr)
		if runErr != nil {
			require.ErrorIs(t, runErr, vkxla.ErrClosed)
			continue
		}
		closeAll(t, outs)
		_, err = x.ToHost(ctx)
		require.ErrorIs(t, err, vkxla.ErrClosed)
	}
	assert.Equal(t, int64(0), rt.MemoryStats().Tensors.BytesInUse, "every tensor's memory went back")
}

// TestDonatedHostLiteral: a host literal for a donated parameter is uploaded into
// memory the run owns: Run frees it, RunOnDevice's aliased output takes it over.
func TestDonatedHostLiteral(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	exe, err := rt.Compile(ctx, negateModule(t, 4), vkxla.WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	assert.Equal(t, int64(16), exe.MemoryStats().DonatedBytes)
	got, err := exe.Run(ctx, f32Literal(1, -2, 3, -4))
	require.NoError(t, err)
	assert.Equal(t, []float32{-1, 2, -3, 4}, f32Values(t, got[0]))
	assert.Equal(t, int64(0), rt.MemoryStats().Tensors.BytesInUse)
	outs, err := exe.RunOnDevice(ctx, f32Literal(5, 6, 7, 8))
	require.NoError(t, err)
	assert.Equal(t, []float32{-5, -6, -7, -8}, f32Values(t, toHost(t, outs)[0]))
	assert.Equal(t, int64(16), rt.MemoryStats().Tensors.BytesInUse, "the output owns the upload")
	closeAll(t, outs)
}

// TestDonationOptionErrors: parameter numbers out of range, or both donated and
// borrowed, or borrowed but aliased, fail Compile with ErrInvalidArgument.
func TestDonationOptionErrors(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	for _, c := range []struct {
		m    *hlo.Module
		opt  []vkxla.CompileOption
		want string
	}{
		{negateModule(t, 4), []vkxla.CompileOption{vkxla.WithDonation(1)}, "parameter 1 is donated or borrowed, but the entry"},
		{negateModule(t, 4), []vkxla.CompileOption{vkxla.WithBorrowedInputs(-1)}, "parameter -1 is donated or borrowed"},
		{negateModule(t, 4), []vkxla.CompileOption{vkxla.WithDonation(0), vkxla.WithBorrowedInputs(0)}, "parameter 0 is both donated and borrowed"},
		{decodeStep(t, true), []vkxla.CompileOption{vkxla.WithBorrowedInputs(3)}, "parameter 3 is borrowed, but input_output_alias {1}: (3, {}, must-alias) writes over it"},
	} {
		_, err := rt.Compile(ctx, c.m, c.opt...)
		require.ErrorIs(t, err, vkxla.ErrInvalidArgument)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestTrainStepDonatesWeights: an MLP step with momentum, compiled donating its
// weights, velocities and t (train.Step.Donating) and borrowing its batch, runs
// from device tensors fed back step after step: each step matches cpuref from the
// same state, the weights and state are updated in their own memory, and the
// device holds them once.
func TestTrainStepDonatesWeights(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	step, err := train.Build(train.MLP("mlp", hlo.F32, 16, 4, 16, 3), train.SGD{LR: 0.1, Momentum: 0.9})
	require.NoError(t, err)
	x, labels := train.Blobs(1, hlo.F32, 16, 4, 3, 0.5)
	m := step.Donating()
	batchParams := []int{step.Updated, step.Updated + 1}
	exe, err := rt.Compile(ctx, m, vkxla.WithBorrowedInputs(batchParams...))
	require.NoError(t, err)
	defer exe.Close()
	state := step.Init(5)
	var stateBytes int64
	for _, s := range state {
		stateBytes += s.Shape().ByteSize()
	}
	st := exe.MemoryStats()
	assert.Equal(t, stateBytes, st.DonatedBytes, st.String())
	assert.Equal(t, x.Shape().ByteSize()+labels.Shape().ByteSize(), st.BorrowedBytes, st.String())
	assert.Equal(t, int64(0), st.ParameterBytes, "the arena holds no input: %v", st)

	dev := upload(t, rt, state...)
	batch := upload(t, rt, x, labels)
	defer closeAll(t, batch)
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	for i := range 3 {
		outs, err := exe.RunOnDevice(ctx, append(anys(dev), anys(batch)...)...)
		require.NoError(t, err, "step %d", i+1)
		got := toHost(t, outs)
		want, err := cpuref.Eval(step.Module, append(append([]*hlo.Literal{}, state...), x, labels)...)
		require.NoError(t, err)
		for k, w := range want.Leaves() {
			require.NoError(t, spec.Check(got[k], w), "step %d, output %d", i+1, k)
		}
		require.NoError(t, outs[0].Close())
		inUse := rt.MemoryStats().Tensors.BytesInUse
		assert.Equal(t, pooledBytes(append(state, x, labels)...), inUse,
			"step %d: the weights and state once (the outputs in the donated memory) and the batch", i+1)
		dev, state = outs[1:], got[1:]
	}
	closeAll(t, dev)
}

// TestAliasIntoTupleParameter: an output aliased to a leaf of a tuple parameter
// (jax's pytree arguments as one tuple) is written over that leaf; Run uploads the
// tuple's leaves into memory of its own and the results match cpuref.
func TestAliasIntoTupleParameter(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule tuple_alias, input_output_alias={ {1}: (0, {1}, must-alias) }
ENTRY %e (p: (f32[4], f32[8]), s: f32[]) -> (f32[4], f32[8]) {
  %p = (f32[4], f32[8]) parameter(0)
  %s = f32[] parameter(1)
  %a = f32[4] get-tuple-element(%p), index=0
  %b = f32[8] get-tuple-element(%p), index=1
  %sb = f32[8] broadcast(%s), dimensions={}
  %scaled = f32[8] multiply(%b, %sb)
  %twice = f32[4] add(%a, %a)
  ROOT %out = (f32[4], f32[8]) tuple(%twice, %scaled)
}`)
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), m)
	require.NoError(t, err)
	defer exe.Close()
	assert.Equal(t, int64(48), exe.MemoryStats().DonatedBytes, "both leaves of the donated tuple")
	rng := rand.New(rand.NewPCG(4, 4))
	in := []*hlo.Literal{randomLiteral(rng, m.Entry.Params[0].Shape, unitDomain), hlo.ScalarLiteral(float32(1.5))}
	for range 2 {
		got, err := exe.Run(context.Background(), in...)
		require.NoError(t, err)
		requireOutputsMatch(t, m, got, in...)
	}
	assert.Equal(t, int64(0), rt.MemoryStats().Tensors.BytesInUse, "Run freed the uploads")
}

// FuzzAliasDifferential gives FuzzDifferential's random graphs input_output_alias
// entries (each output leaf of the parameters' shape over parameter (j+first)%2,
// must- or may-alias by the input's bits) and checks Run and RunOnDevice with
// donated device tensors against cpuref bit for bit: whatever order the passes
// choose, an output is written over its parameter only after the parameter's last
// read, or copied over after the last step.
func FuzzAliasDifferential(f *testing.F) {
	for _, seed := range [][]byte{
		{3, 5, 0, 1, 2}, {0, 0, 1, 1, 6, 0, 7, 1, 0, 3}, {9, 9, 4, 4, 8, 2, 5, 5, 2, 0, 1},
		{6, 6, 7, 7, 0, 0, 0, 2, 1, 9, 3, 4, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	} {
		f.Add(uint8(2), uint8(3), uint8(0), seed)
		f.Add(uint8(130), uint8(3), uint8(1), seed)
		f.Add(uint8(2), uint8(131), uint8(2), seed)
		f.Add(uint8(130), uint8(131), uint8(3), seed)
	}
	rt := newRuntime(f)
	f.Fuzz(func(t *testing.T, rows, cols, kinds uint8, ops []byte) {
		ops = ops[:min(len(ops), maxFuzzOps)]
		m, s := fuzzGraph(t, rows, cols, ops)
		aliasOutputs(m, s, kinds)
		var opts []vkxla.CompileOption
		if rows >= 128 {
			opts = append(opts, vkxla.WithoutPasses("fusion"))
		}
		rng := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		in := []*hlo.Literal{randomLiteral(rng, s, unitDomain), randomLiteral(rng, s, unitDomain)}
		checkCompiledAgainstCPU(t, rt, m, opts, vkxla.ErrorSpec{}, in...)
		exe, err := rt.Compile(context.Background(), m, opts...)
		require.NoError(t, err)
		defer exe.Close()
		outs, err := exe.RunOnDevice(context.Background(), anys(upload(t, rt, in...))...)
		require.NoError(t, err, "%s", hlo.Print(m))
		want, err := cpuref.Eval(m, in...)
		require.NoError(t, err)
		for i, w := range want.Leaves() {
			got, err := outs[i].ToHost(context.Background())
			require.NoError(t, err)
			require.NoError(t, hlo.LiteralsEqual(got, w), "output %d of\n%s", i, hlo.Print(m))
		}
		closeAll(t, outs)
	})
}

// aliasOutputs aliases output leaf j of shape s over parameter (j+kinds)%2, while
// that parameter is free, must-alias when bit j of kinds is set.
func aliasOutputs(m *hlo.Module, s hlo.Shape, kinds uint8) {
	root := m.Entry.Root.Shape
	taken := map[int64]bool{}
	for j, leaf := range root.Leaves() {
		p := int64(j+int(kinds)) % 2
		if !leaf.Equal(s) || taken[p] || j >= 8 {
			continue
		}
		taken[p] = true
		a := hlo.InputOutputAlias{Param: p, Kind: hlo.MayAlias}
		if root.IsTuple() {
			a.Output = []int64{int64(j)}
		}
		if kinds&(1<<j) != 0 {
			a.Kind = hlo.MustAlias
		}
		m.InputOutputAlias = append(m.InputOutputAlias, a)
	}
}

// TestBadInputKillsNoDonatedTensor: a run whose other input is closed fails with
// ErrClosed before it takes the donated tensor, which stays usable.
func TestBadInputKillsNoDonatedTensor(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	b := hlo.NewBuilder("add")
	x := b.Parameter(f32(4), "x")
	y := b.Parameter(f32(4), "y")
	exe, err := rt.Compile(ctx, mustBuild(t, b, b.Add(x, y)), vkxla.WithDonation(0))
	require.NoError(t, err)
	defer exe.Close()
	v := upload(t, rt, f32Literal(1, 2, 3, 4), f32Literal(1, 1, 1, 1))
	require.NoError(t, v[1].Close())
	_, err = exe.RunOnDevice(ctx, v[0], v[1])
	require.ErrorIs(t, err, vkxla.ErrClosed)
	assert.Contains(t, err.Error(), "input 1")
	got, err := v[0].ToHost(ctx)
	require.NoError(t, err, "the donated tensor was not taken")
	assert.Equal(t, []float32{1, 2, 3, 4}, f32Values(t, got))
	require.NoError(t, v[0].Close())
}

// TestDonatedLoopState: jax's fori_loop dump aliases its result to its argument;
// the loop's state then lives in the donated tensor's memory and is updated there
// every iteration. The result matches cpuref and takes the tensor's memory over.
func TestDonatedLoopState(t *testing.T) {
	rt := newRuntime(t)
	ctx := context.Background()
	m, err := hlo.ParseModuleFile("hlo/testdata/xla/while_loop.hlo")
	require.NoError(t, err)
	require.Len(t, m.InputOutputAlias, 1)
	exe, err := rt.Compile(ctx, m)
	require.NoError(t, err)
	defer exe.Close()
	st := exe.MemoryStats()
	assert.Equal(t, int64(32), st.DonatedBytes)
	assert.Less(t, st.PeakBytes, int64(64), "the f32[8] state is not in the arena: %v", st)
	in := randomLiteral(rand.New(rand.NewPCG(9, 9)), m.Entry.Params[0].Shape, unitDomain)
	x := upload(t, rt, in)[0]
	inUse := rt.MemoryStats().Tensors.BytesInUse
	outs, err := exe.RunOnDevice(ctx, x)
	require.NoError(t, err)
	assert.Equal(t, inUse, rt.MemoryStats().Tensors.BytesInUse, "the result took the donated memory over")
	requireOutputsMatch(t, m, toHost(t, outs), in)
	closeAll(t, outs)
}
