package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

const softmaxProgram = "../../testdata/programs/softmax.hlo"

// TestRunTimesWarmRuns: the run used to print the profile of its only run, first-run
// costs and all, as the program's time (SSD-MobileNet: 15.8 s, its warm runs 0.09 s).
// The report keeps the first run apart, times -runs warm runs after it, takes the
// program's time and the per-instruction profile from them, and says which is which.
func TestRunTimesWarmRuns(t *testing.T) {
	devicetest.Open(t)
	text, err := os.ReadFile(softmaxProgram)
	require.NoError(t, err)
	src, err := parseInputSource("random", 1, false)
	require.NoError(t, err)
	var out bytes.Buffer
	r, err := runAndReport(&out, "softmax.hlo", string(text), runFlags{inputs: src, warmRuns: 3})
	require.NoError(t, err, out.String())
	tm := r.times
	require.Len(t, tm.warm, 3)
	require.Len(t, tm.warmGPU, 3)
	assert.Zero(t, tm.capped)
	for _, d := range append([]time.Duration{tm.cpuref, tm.compile, tm.firstRun, tm.firstRunGPU}, append(tm.warm, tm.warmGPU...)...) {
		assert.Positive(t, d)
	}
	assert.Equal(t, tm.warmGPU[2], r.prof.Total(), "the profile printed is the last warm run's")
	text2 := out.String()
	assert.Contains(t, text2, "agree within")
	assert.Contains(t, text2, "GPU time per instruction (the last warm run):")
	assert.Contains(t, text2, fmt.Sprintf("  compile    %v\n", roundTime(tm.compile)))
	assert.Contains(t, text2, fmt.Sprintf("  first run  %v, GPU kernels %v (it includes one-time costs", roundTime(tm.firstRun), roundTime(tm.firstRunGPU)))
	assert.Contains(t, text2, fmt.Sprintf("  warm run   median %v over 3 runs (min ", roundTime(median(tm.warm))))
	assert.Contains(t, text2, fmt.Sprintf("GPU kernels median %v: the program's time", roundTime(median(tm.warmGPU))))

	// From the command line: -runs N times exactly N; -runs 0 none, and says so.
	out.Reset()
	require.NoError(t, run([]string{"run", "-runs", "2", softmaxProgram}, &out), out.String())
	assert.Contains(t, out.String(), " over 2 runs (min ")
	assert.NotContains(t, out.String(), "stopped after")
	out.Reset()
	require.NoError(t, run([]string{"run", "-runs", "0", softmaxProgram}, &out), out.String())
	assert.Contains(t, out.String(), "warm runs  none (-runs 0)")
	assert.Contains(t, out.String(), "GPU time per instruction (the first run: no warm runs):")
	assert.NotContains(t, out.String(), "warm run   median")
	assert.ErrorContains(t, run([]string{"run", "-runs", "-1", softmaxProgram}, io.Discard), "must not be negative")
}

// TestRunWarmRunsBudget: without -runs the warm runs stop once they have taken
// their budget (at least one runs), and the report says so; the default is five.
func TestRunWarmRunsBudget(t *testing.T) {
	devicetest.Open(t)
	text, err := os.ReadFile(softmaxProgram)
	require.NoError(t, err)
	src, err := parseInputSource("ones", 1, false)
	require.NoError(t, err)
	var out bytes.Buffer
	r, err := runAndReport(&out, "softmax.hlo", string(text), runFlags{inputs: src, warmRuns: defaultWarmRuns, warmBudget: time.Nanosecond})
	require.NoError(t, err, out.String())
	assert.Len(t, r.times.warm, 1)
	assert.Equal(t, time.Nanosecond, r.times.capped)
	assert.Contains(t, out.String(), " over 1 run (min ")
	assert.Contains(t, out.String(), "(stopped after 1ns of warm runs; -runs N times exactly N)")

	out.Reset()
	require.NoError(t, run([]string{"run", softmaxProgram}, &out), out.String())
	assert.Contains(t, out.String(), " over 5 runs (min ", "softmax's warm runs take far less than %v", warmRunsBudget)
}

// TestRunReferenceNone: -reference none times a program without evaluating it on
// cpuref. The program's output (1 MiB) is over the -cpuref-max-bytes given, so
// cpuref refuses it: with the default reference the run fails in cpuref, with none
// it runs and prints the GPU's outputs, saying they were not compared.
func TestRunReferenceNone(t *testing.T) {
	devicetest.Open(t)
	path := filepath.Join(t.TempDir(), "wide.hlo")
	require.NoError(t, os.WriteFile(path, []byte(`HloModule wide, entry_computation_layout={(f32[])->f32[512,512]{1,0}}

ENTRY %main (x: f32[]) -> f32[512,512] {
  %x = f32[] parameter(0)
  %two = f32[] constant(2)
  %y = f32[] add(f32[] %x, f32[] %two)
  ROOT %b = f32[512,512]{1,0} broadcast(f32[] %y), dimensions={}
}
`), 0o644))
	err := run([]string{"run", "-inputs", "ones", "-cpuref-max-bytes", "100000", path}, io.Discard)
	require.ErrorIs(t, err, cpuref.ErrTooLarge)

	text, err := os.ReadFile(path)
	require.NoError(t, err)
	src, err := parseInputSource("ones", 1, false)
	require.NoError(t, err)
	var out bytes.Buffer
	rf := runFlags{inputs: src, reference: referenceNone, warmRuns: 1, limits: cpuref.Limits{MaxValueBytes: 100000, MaxTotalBytes: 100000}}
	r, err := runAndReport(&out, "wide.hlo", string(text), rf)
	require.NoError(t, err, out.String())
	assert.Nil(t, r.want)
	assert.Zero(t, r.times.cpuref)
	want := hlo.NewLiteral(hlo.MakeShape(hlo.F32, 512, 512))
	for i := range want.NumElements() {
		want.SetFloat64(i, 3)
	}
	require.Len(t, r.got, 1)
	require.NoError(t, hlo.LiteralsEqual(r.got[0], want))
	assert.Contains(t, out.String(), "reference: none (-reference none): the outputs were not compared with cpuref")
	assert.NotContains(t, out.String(), "cpuref…")
	assert.NotContains(t, out.String(), "cpuref:")
	assert.NotContains(t, out.String(), "agree within")

	out.Reset()
	require.NoError(t, run([]string{"run", "-reference", "none", "-runs", "1", "-inputs", "ones", "-cpuref-max-bytes", "100000", path}, &out), out.String())
	assert.Contains(t, out.String(), "reference: none (-reference none)")
	assert.ErrorContains(t, run([]string{"run", "-reference", "none", "-check", path}, io.Discard), "-check compares every kernel with cpuref; it needs -reference cpuref")
	assert.ErrorContains(t, run([]string{"run", "-reference", "numpy", path}, io.Discard), `-reference "numpy": want cpuref or none`)
}
