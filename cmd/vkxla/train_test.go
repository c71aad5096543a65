package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// TestTrainMLP is the README's training example: the MLP's loss on the GPU falls
// below the target within the step cap, every step agreeing with cpuref from the
// same state (a disagreement is an error), and the output shows the loss curve of
// both and the step's peak memory.
func TestTrainMLP(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"train", "-validation"}, &out), out.String())
	text := out.String()
	assert.Contains(t, text, "loss (gpu)")
	assert.Contains(t, text, "loss (cpuref)")
	assert.Regexp(t, `peak \d+ B`, text)
	m := regexp.MustCompile(`loss (\S+) < 0.01 after (\d+) steps`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	loss, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.Less(t, loss, 0.01)
	// The first step's loss is printed too: training must have lowered it.
	first := regexp.MustCompile(`(?m)^\s+1\s+(\S+)\s+(\S+)$`).FindStringSubmatch(text)
	require.NotNil(t, first, text)
	assert.Equal(t, first[1], first[2], "step 1 on the GPU and on cpuref")
	l1, err := strconv.ParseFloat(first[1], 64)
	require.NoError(t, err)
	assert.Greater(t, l1, 0.5, "the first step's loss")
}

// TestTrainCap: a target not reached within -steps is an error naming the flag.
func TestTrainCap(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	err := run([]string{"train", "-steps", "2"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not fall below 0.01 in 2 steps")
	assert.Contains(t, err.Error(), "-steps")

	err = run([]string{"train", "-target", "0"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-target")
}

// TestTrainDriftCheck: a GPU step that computes something else than the step
// cpuref runs (here the same model at twice the learning rate) is caught at the
// first step, naming the output.
func TestTrainDriftCheck(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	c := defaultTrainConfig()
	model := train.MLP("mlp", hlo.F32, c.examples, c.sizes...)
	step, err := train.Build(model, train.SGD{LR: c.lr, Momentum: c.momentum})
	require.NoError(t, err)
	other, err := train.Build(model, train.SGD{LR: 2 * c.lr, Momentum: c.momentum})
	require.NoError(t, err)
	exe, err := rt.Compile(context.Background(), other.Module)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Close()) }()
	x, labels := train.Blobs(c.seed, hlo.F32, c.examples, c.sizes[0], c.sizes[len(c.sizes)-1], 0.5)
	var out bytes.Buffer
	err = trainLoop(context.Background(), &out, exe, step, c, []*hlo.Literal{x, labels})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "step 1: output 1 differs from cpuref started from the same state")
}
