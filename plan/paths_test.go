package plan_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// TestPlanMarksPaths: on lavapipe (bindings of 128 MiB) the 192 MiB buffers of an
// add are marked Addressed, or Split without buffer device addresses, the scalar
// is bound whole, every kernel argument's layout says the same, and the marked plan
// passes the arena's validation.
func TestPlanMarksPaths(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule big
ENTRY e {
  x = f32[48,1048576] parameter(0)
  s = f32[] parameter(1)
  b = f32[48,1048576] broadcast(s), dimensions={}
  ROOT y = f32[48,1048576] add(x, b)
}`)
	require.NoError(t, err)
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	require.True(t, d.BufferDeviceAddress)
	for _, addresses := range []bool{true, false} {
		d.BufferDeviceAddress = addresses
		target := d.Plan()
		p, err := plan.Build(m, target, plan.Options{})
		require.NoError(t, err)
		ranges := p.Arena().Ranges
		big := 0
		for _, r := range ranges {
			large := r.Size > 128<<20
			require.Equal(t, large && addresses, r.Addressed, "%v", r)
			require.Equal(t, large && !addresses, r.Split, "%v", r)
			if large {
				big++
			}
		}
		require.Equal(t, 2, big, "x and y")
		require.NoError(t, p.Arena().Validate(target.Limits))
		for _, st := range p.Main.Steps {
			if st.Kind != plan.StepDispatch {
				continue
			}
			for i, a := range st.Args {
				lay := st.Kernel.Kernel.Layout[i]
				r := ranges[a]
				require.Equal(t, r.Addressed, lay.Path == codegen.PathAddress, "%s arg %d", st.Name, i)
				require.Equal(t, r.Split, lay.Path == codegen.PathSplit, "%s arg %d", st.Name, i)
			}
		}
	}
}

// TestFusionCountsSplitBindings: without buffer device addresses every 192 MiB
// operand of a 16-term sum is split across two 128 MiB bindings. Counted as one
// binding each, the sixteen fit the fused-parameter bound (28) and fuse into one
// kernel of 34 bindings, which code generation refuses on a device of 32; counted
// as they are bound, the sum fuses into kernels that each fit.
func TestFusionCountsSplitBindings(t *testing.T) {
	const terms = 16
	b := hlo.NewBuilder("wide_sum")
	shape := hlo.MakeShape(hlo.F32, 48, 1048576)
	sum := b.Parameter(shape, "x0")
	for i := 1; i < terms; i++ {
		sum = b.Add(sum, b.Parameter(shape, fmt.Sprintf("x%d", i)))
	}
	m, err := b.Build(sum)
	require.NoError(t, err)
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	d.BufferDeviceAddress = false
	target := d.Plan()
	require.Equal(t, 32, target.Codegen.MaxStorageBuffers)
	p, err := plan.Build(m, target, plan.Options{})
	require.NoError(t, err)
	kernels := 0
	for _, st := range p.Main.Steps {
		if st.Kind != plan.StepDispatch {
			continue
		}
		kernels++
		require.LessOrEqual(t, st.Kernel.Kernel.Bindings, 32, st.Name)
	}
	require.Greater(t, kernels, 1, "the sum cannot be one kernel")
}

// TestFusionCountsExtraOutputs: a chain of 27 adds over 28 f32[4] parameters that
// returns its last eight sums. Counting only parameters, fusion made one kernel of
// the 28 parameters and the eight sums as outputs (extra outputs of a multi-output
// kernel): 36 bindings, refused on lavapipe's 32. Counted with its extra outputs,
// the chain is kernels that fit.
func TestFusionCountsExtraOutputs(t *testing.T) {
	const params, returned = 28, 8
	b := hlo.NewBuilder("many_outputs")
	shape := hlo.MakeShape(hlo.F32, 4)
	sum := b.Parameter(shape, "p0")
	var outs []*hlo.Instruction
	for i := 1; i < params; i++ {
		sum = b.Add(sum, b.Parameter(shape, fmt.Sprintf("p%d", i)))
		if i >= params-returned {
			outs = append(outs, sum)
		}
	}
	m, err := b.Build(b.Tuple(outs...))
	require.NoError(t, err)
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	target := d.Plan()
	require.Equal(t, params, target.MaxFusionParams)
	p, err := plan.Build(m, target, plan.Options{})
	require.NoError(t, err)
	for _, st := range p.Main.Steps {
		if st.Kind == plan.StepDispatch {
			require.LessOrEqual(t, st.Kernel.Kernel.Bindings, 32, st.Name)
		}
	}
}

// TestSiblingFusionCountsSplitBindings: two sums of eight f32[48,1048576] tensors
// (192 MiB, two bindings each on lavapipe without device addresses) that share
// their first term. Counting a parameter as one binding, sibling fusion merged
// them into one kernel of 15 parameters and 2 outputs: 34 bindings, over the
// device's 32. Counted as the fuser counts them, the sums stay two kernels.
func TestSiblingFusionCountsSplitBindings(t *testing.T) {
	b := hlo.NewBuilder("sibling_sums")
	shape := hlo.MakeShape(hlo.F32, 48, 1048576)
	shared := b.Parameter(shape, "x")
	sum := func(prefix string) *hlo.Instruction {
		s := shared
		for i := 1; i < 8; i++ {
			s = b.Add(s, b.Parameter(shape, fmt.Sprintf("%s%d", prefix, i)))
		}
		return s
	}
	m, err := b.Build(b.Tuple(sum("y"), sum("z")))
	require.NoError(t, err)
	d, err := targets.Builtin("lavapipe")
	require.NoError(t, err)
	d.BufferDeviceAddress = false
	p, err := plan.Build(m, d.Plan(), plan.Options{})
	require.NoError(t, err)
	kernels := 0
	for _, st := range p.Main.Steps {
		if st.Kind == plan.StepDispatch {
			kernels++
			require.LessOrEqual(t, st.Kernel.Kernel.Bindings, 32, st.Name)
		}
	}
	require.Equal(t, 2, kernels)
}
