package heapsim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

func simulateText(t *testing.T, text string, cfg heapsim.Config) *heapsim.Model {
	t.Helper()
	m, err := hlo.ParseModule(text)
	require.NoError(t, err)
	model, err := heapsim.Simulate(m, cfg)
	require.NoError(t, err)
	return model
}

// With the coarse stand-in no kernel writes in place, so an output computed by the
// kernel that reads its parameter cannot be written over it: a must-alias output is
// copied over after the last step, a may-alias one keeps its own buffer.
func TestAliasCopyInsertionWithoutInPlaceKernels(t *testing.T) {
	model := simulateText(t, `HloModule a, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}, may-alias) }
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  n = f32[64] negate(p)
  m = f32[64] negate(q)
  ROOT t = (f32[64], f32[64]) tuple(n, m)
}`, heapsim.Config{})
	text := model.String()
	assert.Contains(t, text, "@2 copy t 2 -> 4\n", text)
	assert.Contains(t, text, `   4 output     "t.alias" block 0 [0, +256) in place over 0`, text)
	assert.Contains(t, text, `   3 output     "m" block 0`, text)
	assert.NotContains(t, text, "in place over 1", text)
	assert.Equal(t, 0, model.SlotOf(0))
	assert.Equal(t, 0, model.SlotOf(4), "the copy's destination is the parameter's memory")
	assert.Equal(t, -1, model.SlotOf(3))
	assert.Equal(t, []heapsim.Slot{{Param: 0, Leaf: 0, Donated: true}, {Param: 1, Leaf: 0, Donated: true}}, model.Slots())
	assert.Equal(t, int64(512), model.Stats.DonatedBytes)
	assert.Equal(t, int64(0), model.Stats.ParameterBytes)
	for _, r := range []int{0, 1, 4} {
		assert.Equal(t, int64(0), model.Arena().Ranges[r].Size, "range %d is not in the arena", r)
	}
}

// An output computed after the parameter's last read is written straight over it;
// one that is its own parameter needs nothing.
func TestAliasWritesAfterTheLastRead(t *testing.T) {
	model := simulateText(t, `HloModule a, input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}) }
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  n = f32[64] negate(p)
  m = f32[64] exponential(n)
  ROOT t = (f32[64], f32[64]) tuple(m, q)
}`, heapsim.Config{})
	text := model.String()
	assert.Contains(t, text, `   3 output     "m" block 0 [0, +256) in place over 0`, text)
	assert.NotContains(t, text, "copy", text)
	assert.Equal(t, []int{3, 1}, model.Root.Leaves, "output 1 is parameter 1 itself")
	assert.Equal(t, int64(256), model.Stats.PeakBytes, "only n is in the arena")
}

// A loop's initial state copied from a donated parameter that nothing reads later
// takes the parameter's memory, and the body updates it in place: the loop's
// result is the output aliased to the parameter (a training loop's weights).
func TestAliasLoopStateOverParameter(t *testing.T) {
	model := simulateText(t, `HloModule a, input_output_alias={ {}: (0, {}, must-alias) }
cond {
  s = f32[64] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = f32[64] parameter(0)
  ROOT n = f32[64] negate(s)
}
ENTRY e {
  p = f32[64] parameter(0)
  ROOT w = f32[64] while(p), condition=cond, body=body
}`, heapsim.Config{})
	text := model.String()
	assert.Contains(t, text, `"w.state" block 0 [0, +256) in place over 0`, text)
	assert.NotContains(t, text, "@0 copy", "the initial copy is dropped:\n"+text)
}

// Borrowed parameters are read in place and never written over: no in-place output
// takes them, and the arena holds none of them.
func TestBorrowedParameterIsNeverWritten(t *testing.T) {
	model := simulateText(t, `HloModule a
ENTRY e {
  w = f32[64] parameter(0)
  n = f32[64] negate(w)
  ROOT e = f32[64] exponential(n)
}`, heapsim.Config{Borrow: []int{0}})
	text := model.String()
	assert.Contains(t, text, `   0 parameter  "w" block 0 [0, +256) borrowed`, text)
	assert.NotContains(t, text, "in place over 0", text)
	assert.Equal(t, int64(256), model.Stats.BorrowedBytes)
	assert.Equal(t, []heapsim.Slot{{Param: 0, Leaf: 0}}, model.Slots())
}

// Two outputs returning the other's parameter are each copied into a temporary
// before either parameter is written over.
func TestAliasSwapGoesThroughTemporaries(t *testing.T) {
	model := simulateText(t, `HloModule a, input_output_alias={ {0}: (1, {}, must-alias), {1}: (0, {}, must-alias) }
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  ROOT t = (f32[16], f32[16]) tuple(p, q)
}`, heapsim.Config{})
	text := model.String()
	steps := text[:strings.Index(text, "buffers:")]
	assert.Equal(t, "steps:\n  @0 copy t 0 -> 2\n  @1 copy t 1 -> 3\n  @2 copy t 2 -> 4\n  @3 copy t 3 -> 5\n", steps)
	assert.Contains(t, text, `   4 output     "t.alias" block 0 [0, +64) in place over 1`, text)
	assert.Contains(t, text, `   5 output     "t.alias" block 0 [0, +64) in place over 0`, text)
}

func TestDonationOptionErrors(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule a
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}`)
	require.NoError(t, err)
	_, err = heapsim.Simulate(m, heapsim.Config{Donate: []int{1}})
	assert.ErrorContains(t, err, "donated parameter 1 is out of range: the entry takes 1")
	_, err = heapsim.Simulate(m, heapsim.Config{Donate: []int{0}, Borrow: []int{0}})
	assert.ErrorContains(t, err, "parameter 0 is both donated and borrowed")
}

// With code generation's facts the body's elementwise update is written in place
// over the state, which is the donated parameter's memory: the whole loop runs in
// the caller's buffer, with no copy back.
func TestAliasLoopUpdatesParameterInPlace(t *testing.T) {
	model := simulateText(t, `HloModule a, input_output_alias={ {}: (0, {}, must-alias) }
cond {
  s = f32[64] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = f32[64] parameter(0)
  ROOT n = f32[64] sine(s)
}
ENTRY e {
  p = f32[64] parameter(0)
  ROOT w = f32[64] while(p), condition=cond, body=body
}`, heapsim.Config{Kernels: codegen.NewMemo(codegen.LavapipeTarget()).Lower})
	text := model.String()
	assert.Contains(t, text, `"n" block 0 [0, +256) in place over 0`, text)
	assert.NotContains(t, text, "copy", text)
	assert.Equal(t, int64(16), model.Stats.PeakBytes, "only the predicate is in the arena")
}
