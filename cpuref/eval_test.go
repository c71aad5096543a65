package cpuref

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

func TestEveryOpcodeHasKernel(t *testing.T) {
	for _, op := range hlo.AllOpcodes() {
		assert.NotNil(t, kernels[op], "cpuref has no kernel for %v", op)
	}
}

const addTwo = `HloModule add_two
ENTRY e {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT s = f32[2,3] add(x, y)
}`

func TestEvalChecksInputs(t *testing.T) {
	m := parse(t, addTwo)
	x := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)

	_, err := Eval(m, x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "takes 2 arguments, got 1")

	_, err = Eval(m, x, mat(dims(3, 2), float32(1), 2, 3, 4, 5, 6))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "parameter 1 (%y): expected f32[2,3], got f32[3,2]")

	_, err = Eval(m, x, mat(dims(2, 3), int32(1), 2, 3, 4, 5, 6))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expected f32[2,3], got s32[2,3]")

	_, err = Eval(m, x, nil)
	require.Error(t, err)

	_, err = Eval(nil)
	require.Error(t, err)
}

func TestEvalResultIsIndependentOfInputs(t *testing.T) {
	m := parse(t, `HloModule passthrough
ENTRY e {
  x = f32[2] parameter(0)
  c = f32[2] constant({7, 8})
  ROOT t = (f32[2], f32[2]) tuple(x, c)
}`)
	x := vec(float32(1), 2)
	out, err := Eval(m, x)
	require.NoError(t, err)
	out.Elems()[0].SetFloat64(0, 100)
	out.Elems()[1].SetFloat64(0, 100)
	assertLit(t, vec(float32(1), 2), x)
	again, err := Eval(m, x)
	require.NoError(t, err)
	assertLit(t, hlo.TupleLiteral(vec(float32(1), 2), vec(float32(7), 8)), again)
}

func TestEvalComputation(t *testing.T) {
	m := parse(t, addTwo)
	out, err := EvalComputation(m.Entry, vec(float32(1), 2, 3, 4, 5, 6).Clone(), vec(float32(1)))
	require.Error(t, err, "shapes are checked for EvalComputation too")
	assert.Nil(t, out)

	x := mat(dims(2, 3), float32(1), 2, 3, 4, 5, 6)
	out, err = EvalComputation(m.Entry, x, x)
	require.NoError(t, err)
	assertLit(t, mat(dims(2, 3), float32(2), 4, 6, 8, 10, 12), out)
}

func TestEvalReportsMalformedInstructions(t *testing.T) {
	// A declared result shape that disagrees with the operands is an error naming the
	// instruction, not a panic: Eval's verifier reports it as invalid input, and
	// EvalComputation, which does not verify, from the kernels.
	x := vec(float32(1), 2, 3)
	m := oneInstruction(hlo.OpNegate, hlo.MakeShape(hlo.F32, 4), hlo.Attributes{}, x)
	_, err := Eval(m, x)
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorIs(t, err, hlo.ErrVerify)
	_, err = EvalComputation(m.Entry, x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "%root = negate")

	m = oneInstruction(hlo.OpTranspose, hlo.MakeShape(hlo.F32, 3), hlo.Attributes{Dimensions: []int64{5}}, x)
	_, err = EvalComputation(m.Entry, x)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "out of range")

	m = oneInstruction(hlo.OpAdd, hlo.MakeShape(hlo.F32, 3), hlo.Attributes{}, x, vec(int32(1), 2, 3))
	_, err = EvalComputation(m.Entry, x, vec(int32(1), 2, 3))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "operand types differ")
}

func TestConstantAndParameter(t *testing.T) {
	out := evalText(t, `HloModule c
ENTRY e {
  ROOT c = s8[2,2] constant({{1, -128}, {127, 0}})
}`)
	assertLit(t, mat(dims(2, 2), int8(1), -128, 127, 0), out)

	out = evalText(t, `HloModule p
ENTRY e {
  a = f32[] parameter(0)
  ROOT b = pred[3] parameter(1)
}`, scalar(float32(1)), vec(true, false, true))
	assertLit(t, vec(true, false, true), out)
}

func TestIota(t *testing.T) {
	out := evalText(t, `HloModule iota
ENTRY e {
  ROOT i = s32[2,3] iota(), iota_dimension=1
}`)
	assertLit(t, mat(dims(2, 3), int32(0), 1, 2, 0, 1, 2), out)

	out = evalText(t, `HloModule iota
ENTRY e {
  ROOT i = f32[3,2] iota(), iota_dimension=0
}`)
	assertLit(t, mat(dims(3, 2), float32(0), 0, 1, 1, 2, 2), out)

	out = evalText(t, `HloModule iota
ENTRY e {
  ROOT i = u8[300] iota(), iota_dimension=0
}`)
	vals, err := hlo.Values[uint8](out)
	require.NoError(t, err)
	assert.Equal(t, uint8(255), vals[255])
	assert.Equal(t, uint8(43), vals[299], "iota wraps like convert from s64: 299 mod 256")

	out = evalText(t, `HloModule iota
ENTRY e {
  ROOT i = f32[0,4] iota(), iota_dimension=1
}`)
	assert.Equal(t, 0, out.NumElements())
}

// TestProgressCountsEntryInstructions: Limits.Progress hears of each entry
// instruction once, in order, with the entry's total; the reduce's to_apply
// computation (run per element) reports nothing.
func TestProgressCountsEntryInstructions(t *testing.T) {
	m := parse(t, `HloModule p
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add
}`)
	var done []int
	var last time.Duration
	l := Limits{Progress: func(d, total int, elapsed time.Duration) {
		require.Equal(t, 3, total)
		require.GreaterOrEqual(t, elapsed, last)
		done, last = append(done, d), elapsed
	}}
	out, err := l.EvalContext(t.Context(), m, vec(float32(1), 2, 3, 4))
	require.NoError(t, err)
	assertLit(t, scalar(float32(10)), out)
	require.Equal(t, []int{1, 2, 3}, done)
}
