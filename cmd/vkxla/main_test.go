package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
