package cpuref

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestEvalRefusesHugeValues: f32[1e12] (4 TB) used to parse and then kill the process
// with "fatal error: runtime: out of memory"; it is now ErrTooLarge before anything
// is allocated, naming the instruction and the limit.
func TestEvalRefusesHugeValues(t *testing.T) {
	m := parse(t, `HloModule huge
ENTRY e {
  c = f32[] constant(1)
  ROOT b = f32[1000000000000] broadcast(c), dimensions={}
}`)
	_, err := Eval(m)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "%b = broadcast")
	assert.Contains(t, err.Error(), "4000000000000 bytes, over the limit of 2147483648 bytes per value")

	// An input of that shape cannot exist; a parameter of it is refused as input.
	m = parse(t, `HloModule p
ENTRY e {
  ROOT p = f32[1000000000000] parameter(0)
}`)
	_, err = Eval(m, vec(float32(1)))
	require.ErrorIs(t, err, ErrInvalidInput)
}

func TestLimits(t *testing.T) {
	m := parse(t, `HloModule chain
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] negate(x)
  b = f32[8] negate(a)
  ROOT t = (f32[8], f32[8]) tuple(a, b)
}`)
	x := vec[float32](1, 2, 3, 4, 5, 6, 7, 8)
	want := hlo.TupleLiteral(vec[float32](-1, -2, -3, -4, -5, -6, -7, -8), x)

	// Two 32-byte values are held; the tuple and the parameter share memory.
	out, err := Limits{MaxValueBytes: 32, MaxTotalBytes: 64}.EvalContext(context.Background(), m, x)
	require.NoError(t, err)
	assertLit(t, want, out)

	_, err = Limits{MaxValueBytes: 31}.EvalContext(context.Background(), m, x)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "f32[8] is 32 bytes, over the limit of 31 bytes per value")

	_, err = Limits{MaxTotalBytes: 63}.EvalContext(context.Background(), m, x)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "%b = negate")
	assert.Contains(t, err.Error(), "32 bytes more with the 32 bytes held exceed the total of 63 bytes")

	// CheckShapes applies the same limits to shapes held together.
	f8 := hlo.MakeShape(hlo.F32, 8)
	require.NoError(t, Limits{MaxValueBytes: 32, MaxTotalBytes: 64}.CheckShapes(f8, f8))
	assert.ErrorIs(t, Limits{MaxTotalBytes: 63}.CheckShapes(f8, f8), ErrTooLarge)
	assert.ErrorIs(t, Limits{MaxValueBytes: 31}.CheckShapes(hlo.MakeTuple(f8)), ErrTooLarge)
	assert.ErrorIs(t, Limits{}.CheckShapes(hlo.MakeShape(hlo.F32, 1e12)), ErrTooLarge)
	assert.ErrorIs(t, Limits{}.CheckShapes(hlo.MakeShape(hlo.F32, 1<<31, 1<<31, 4)), ErrTooLarge, "overflowing shapes too")
}

// TestLimitsCountScratch: kernels' scratch space counts against the total while they
// run: sort keeps a uint64 per element (8·16 = 128 bytes for s8[16], whose result is
// 16 bytes), and an s32 dot decodes its lhs into int64 and packs its rhs into a panel
// of 8 int64 lanes per contracting position (8·(4+8·4) = 288 bytes).
func TestLimitsCountScratch(t *testing.T) {
	keys := vec[int8](3, 1, 2, 0, 7, 6, 5, 4, 15, 14, 13, 12, 11, 10, 9, 8)
	sorted := vec[int8](0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
	m := parse(t, `HloModule sort
lt {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = s8[16] parameter(0)
  ROOT s = s8[16] sort(x), dimensions={0}, to_apply=lt
}`)
	out, err := Limits{MaxTotalBytes: 144}.EvalContext(context.Background(), m, keys)
	require.NoError(t, err)
	assertLit(t, sorted, out)
	_, err = Limits{MaxTotalBytes: 143}.EvalContext(context.Background(), m, keys)
	require.ErrorIs(t, err, ErrTooLarge)
	assert.Contains(t, err.Error(), "the kernel's 128 bytes of scratch space and its 16-byte result")

	m = parse(t, `HloModule dot
ENTRY e {
  x = s32[4] parameter(0)
  ROOT d = s32[] dot(x, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}`)
	x := vec[int32](1, 2, 3, 4)
	out, err = Limits{MaxTotalBytes: 292}.EvalContext(context.Background(), m, x)
	require.NoError(t, err)
	assertLit(t, scalar(int32(1+4+9+16)), out)
	_, err = Limits{MaxTotalBytes: 291}.EvalContext(context.Background(), m, x)
	require.ErrorIs(t, err, ErrTooLarge)
}

// TestLimitsReleaseLoopValues: a loop body's values are released when it returns, so
// 100 iterations fit in a total of 100 bytes: the entry holds 24 (z and the while's
// result) and one body call 24 more (one, j, w), where all the iterations' values
// together would be 2900.
func TestLimitsReleaseLoopValues(t *testing.T) {
	m := parse(t, `HloModule loop
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(s), index=1
  w = f32[4] add(v, v)
  ROOT r = (s32[], f32[4]) tuple(j, w)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  s = (s32[], f32[4]) tuple(z, x)
  ROOT l = (s32[], f32[4]) while(s), condition=cond, body=body
}`)
	out, err := Limits{MaxTotalBytes: 100}.EvalContext(context.Background(), m, vec[float32](0, 1, -1, 0.5))
	require.NoError(t, err)
	// Doubled 100 times: x·2^100, within f32's range.
	assertLit(t, hlo.TupleLiteral(scalar(int32(100)), vec[float32](0, 0x1p100, -0x1p100, 0x1p99)), out)
}

// TestEvalRejectsInvalidInput: a nil module, context or input, a module the verifier
// rejects (a nil operand used to panic), and inputs of the wrong number or shape are
// ErrInvalidInput, never a panic.
func TestEvalRejectsInvalidInput(t *testing.T) {
	_, err := Eval(nil)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorIs(t, err, hlo.ErrVerify)

	x := vec(float32(1), 2, 3)
	m := oneInstruction(hlo.OpNegate, hlo.MakeShape(hlo.F32, 3), hlo.Attributes{}, x)
	m.Entry.Root.Operands[0] = nil
	_, err = Eval(m, x)
	require.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "operand 0 is nil")
	_, err = EvalComputation(m.Entry, x) // unverified: the evaluator's own check
	require.Error(t, err)
	assert.Contains(t, err.Error(), "%root: operand 0 is nil")

	m = oneInstruction(hlo.OpNegate, hlo.MakeShape(hlo.F32, 3), hlo.Attributes{}, x)
	m.Entry.Instructions = append(m.Entry.Instructions, nil)
	_, err = EvalComputation(m.Entry, x)
	assert.ErrorContains(t, err, "instruction 2 is nil")
	m.Entry.Instructions = m.Entry.Instructions[:2]
	m.Entry.Params[0] = nil
	_, err = EvalComputation(m.Entry, x)
	assert.ErrorIs(t, err, ErrInvalidInput)

	m = parse(t, addTwo)
	for _, inputs := range [][]*hlo.Literal{nil, {x}, {mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6), nil},
		{mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6), mat(dims(2, 3), int32(1), 2, 3, 4, 5, 6)}} {
		_, err = Eval(m, inputs...)
		assert.ErrorIs(t, err, ErrInvalidInput, "%v", inputs)
	}
	var noContext context.Context
	_, err = EvalContext(noContext, m)
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// TestEvalContextStopsEndlessLoop: a while whose condition is always true used to
// hang forever; the context's deadline ends it with the context's error.
func TestEvalContextStopsEndlessLoop(t *testing.T) {
	text, err := os.ReadFile("testdata/endless_while.hlo")
	require.NoError(t, err)
	m := parse(t, string(text))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = EvalContext(ctx, m)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "%l = while")

	_, err = EvalContext(ctx, parse(t, addTwo), mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6), mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6))
	require.ErrorIs(t, err, context.DeadlineExceeded, "a done context stops before the work starts")
}

// TestKernelsStopWhenCancelled: the contraction kernels stop after the block of
// output elements in progress (none starts once the evaluation is cancelled), and scalar computations fail, once the evaluation is
// cancelled (so a huge dot or reduce ends promptly); evalInstruction then reports the
// context's error, not the partial result.
func TestKernelsStopWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev := newEvaluator(ctx, Limits{})
	ev.stop.Store(true)

	lhs := mat(dims(2, 2), float32(1), 2, 3, 4)
	b := hlo.NewBuilder("dot")
	l := b.Parameter(lhs.Shape(), "l")
	r := b.Parameter(lhs.Shape(), "r")
	dot := b.Dot(l, r)
	require.NoError(t, b.Err())
	out, err := evalDot(ev, dot, []*hlo.Literal{lhs, lhs})
	require.NoError(t, err)
	// No block was computed; the full product is {7,10,15,22}.
	assertLit(t, mat(dims(2, 2), float32(0), 0, 0, 0), out)

	_, err = ev.evalInstruction(dot, []*hlo.Literal{lhs, lhs})
	require.ErrorIs(t, err, context.Canceled)

	add, err := ev.scalarFunc(hlo.NewBuilder("x").Reducer(hlo.OpAdd, hlo.F32))
	require.NoError(t, err)
	require.ErrorIs(t, add.call([]uint64{0, 0}, []uint64{0}), context.Canceled)
}
