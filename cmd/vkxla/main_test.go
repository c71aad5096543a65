package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
)

// TestRunExample is the README's main job: the example MLP on the default device,
// printed next to cpuref, agreeing within tolerance.
func TestRunExample(t *testing.T) {
	devicetest.Open(t) // fails in CI when there is no Vulkan device
	var out bytes.Buffer
	require.NoError(t, run([]string{"run"}, &out), out.String())
	text := out.String()
	assert.Contains(t, text, "module mlp_forward")
	assert.Contains(t, text, "gpu:")
	assert.Contains(t, text, "cpuref:")
	assert.Contains(t, text, "agree within")
	assert.NotContains(t, text, "MISMATCH")
	assert.Contains(t, text, "peak ")
	assert.Contains(t, text, "live at the peak (")
}

func TestRunFileAndPrint(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-seed", "3", "../../testdata/programs/softmax.hlo"}, &out), out.String())
	assert.Contains(t, out.String(), "agree within")

	out.Reset()
	require.NoError(t, run([]string{"print", "examples/mlp.hlo"}, &out))
	assert.True(t, strings.HasPrefix(out.String(), "HloModule mlp_forward"), out.String())
}

// TestRunOptions: passes switched off and a memory budget reach Compile; a budget
// no plan can meet is an error saying what the plan needs.
func TestRunOptions(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-without", "fusion,schedule", "-budget", "100000", "../../testdata/programs/softmax.hlo"}, &out), out.String())
	assert.Contains(t, out.String(), "agree within")

	err := run([]string{"run", "-budget", "100", "../../testdata/programs/softmax.hlo"}, &out)
	require.ErrorIs(t, err, vkxla.ErrOverBudget)
	assert.Contains(t, err.Error(), "over the budget of 100 bytes")

	err = run([]string{"run", "-without", "fusoin"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown pass "fusoin"`)
}

func TestCommandErrors(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"frobnicate"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown command "frobnicate"`)

	err = run([]string{"run", "no/such/file.hlo"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such/file.hlo")

	err = runModule(&out, "bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n", 1, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.hlo:")
	assert.Contains(t, err.Error(), "3:")
}
