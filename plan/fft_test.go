package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/targets"
)

// TestFFTPlanPeak: the planner counts an fft's scratch buffers, per dispatch.
// In testdata/programs/spectral_conv.hlo (x f32[4,32,32] → RFFT → × w → IRFFT → +
// x) each axis of 32 takes two passes (radix 16, then 2). The IRFFT's f32 output
// cannot hold a c64 intermediate: its passes write scratch0 (the full c64 array
// along the last axis, 4·32·32·8 = 32768 B), scratch1 and scratch0 (the halved
// array, 4·32·17·8 = 17408 B) before the last writes the output. So the peak is
// while it runs: x (16384 B, read again by the residual add), its operand, the
// product (17408 B), and both scratch buffers: 83968 B, the lower bound. The
// RFFT needs one scratch buffer (the full array its first pass writes): its
// output, c64 of the halved array, holds its other intermediates.
func TestFFTPlanPeak(t *testing.T) {
	m, err := hlo.ParseModuleFile("../testdata/programs/spectral_conv.hlo")
	require.NoError(t, err)
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	p, err := plan.Build(m, d.Plan(), plan.Options{})
	require.NoError(t, err)
	require.Equal(t, int64(16384+17408+32768+17408), p.Stats.PeakBytes, "%v", p.Stats)
	require.Equal(t, p.Stats.LowerBoundBytes, p.Stats.PeakBytes)
	sizes := map[string]int64{}
	for _, r := range p.Arena().Ranges {
		sizes[r.Name] = r.Size
	}
	require.Equal(t, int64(32768), sizes["fft.3.scratch0"])
	require.NotContains(t, sizes, "fft.3.scratch1")
	require.Equal(t, int64(32768), sizes["fft.6.scratch0"])
	require.Equal(t, int64(17408), sizes["fft.6.scratch1"])
	steps := map[string]int{}
	for _, st := range p.Main.Steps {
		if st.Kind == plan.StepDispatch {
			steps[st.Name]++
		}
	}
	require.Equal(t, map[string]int{"fft.3": 4, "multiply.5": 1, "fft.6": 4, "add.7": 1}, steps, "passes of radix 16 and 2 per axis of 32")
}
