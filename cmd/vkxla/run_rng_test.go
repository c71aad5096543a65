package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device/devicetest"
)

// A dump with rng (dropout, as TensorFlow writes it) runs and checks: cpuref and the
// device draw from the same seeded state, so they agree, and -check feeds the
// optimised module's state parameter.
func TestRunRngAgrees(t *testing.T) {
	devicetest.Open(t)
	path := filepath.Join(t.TempDir(), "dropout.hlo")
	require.NoError(t, os.WriteFile(path, []byte(`HloModule dropout, entry_computation_layout={(f32[8,16]{1,0})->f32[8,16]{1,0}}

ENTRY %main (x: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  %zero = f32[] constant(0)
  %one = f32[] constant(1)
  %u = f32[8,16]{1,0} rng(f32[] %zero, f32[] %one), distribution=rng_uniform
  %rate = f32[] constant(0.25)
  %rates = f32[8,16]{1,0} broadcast(f32[] %rate), dimensions={}
  %keep = pred[8,16]{1,0} compare(f32[8,16]{1,0} %u, f32[8,16]{1,0} %rates), direction=GE
  %zeros = f32[8,16]{1,0} broadcast(f32[] %zero), dimensions={}
  %scale = f32[] constant(1.3333334)
  %scales = f32[8,16]{1,0} broadcast(f32[] %scale), dimensions={}
  %scaled = f32[8,16]{1,0} multiply(f32[8,16]{1,0} %x, f32[8,16]{1,0} %scales)
  ROOT %y = f32[8,16]{1,0} select(pred[8,16]{1,0} %keep, f32[8,16]{1,0} %scaled, f32[8,16]{1,0} %zeros)
}
`), 0o644))
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-check", path}, &out), out.String())
	assert.Contains(t, out.String(), "check: every kernel agrees with cpuref on cpuref's inputs")
}
