package vkxla_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// siblingCase is a program whose sibling kernels (docs/passes.md, "Sibling
// fusion") merge: run with every pass and without sibling-fusion, both against
// cpuref, it must dispatch maxKernels with the pass and more without.
type siblingCase struct {
	name       string
	build      func(t *testing.T) *hlo.Module
	maxKernels int
}

// TestSiblingFusionDifferential runs programs with sibling kernels (layer-norm
// and softmax backward — the latter a row kernel with two outputs —, a dense
// layer's backward, an Adam step over two tensors) merged and unmerged on the
// device against cpuref.
func TestSiblingFusionDifferential(t *testing.T) {
	rt := newRuntime(t)
	for _, tc := range siblingCases() {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.build(t)
			inputs := randomInputs(rand.New(rand.NewPCG(3, 9)), m)
			for i, p := range m.Entry.Params { // second moments are non-negative
				if p.Name == "v" || p.Name == "v2" {
					for j := range inputs[i].NumElements() {
						inputs[i].SetFloat64(j, math.Abs(inputs[i].Float64(j)))
					}
				}
			}
			want, err := cpuref.Eval(m, inputs...)
			require.NoError(t, err)
			spec := vkxla.ProgramTolerance(m, hlo.F32)
			counts := map[bool]int{}
			for _, merged := range []bool{true, false} {
				var opts []vkxla.CompileOption
				if !merged {
					opts = append(opts, vkxla.WithoutPasses("sibling-fusion"))
				}
				got, n := runCounting(t, rt, m, opts, inputs)
				for i, w := range want.Leaves() {
					require.NoError(t, spec.Check(got[i], w), "merged=%v output %d", merged, i)
				}
				counts[merged] = n
			}
			t.Logf("kernels: %d merged, %d without sibling fusion", counts[true], counts[false])
			require.LessOrEqual(t, counts[true], tc.maxKernels, "kernels with sibling fusion")
			require.Less(t, counts[true], counts[false], "sibling fusion saved no kernel")
		})
	}
}

func siblingCases() []siblingCase {
	f32 := func(dims ...int64) hlo.Shape { return hlo.MakeShape(hlo.F32, dims...) }
	vjp := func(name string, wrt []int, fn func(b *hlo.Builder) *hlo.Instruction) func(t *testing.T) *hlo.Module {
		return func(t *testing.T) *hlo.Module {
			b := hlo.NewBuilder(name)
			m := mustBuild(t, b, fn(b))
			g, err := autodiff.VJP(m, wrt, nil)
			require.NoError(t, err)
			return g
		}
	}
	return []siblingCase{
		{name: "layernorm f32[128,256] backward", maxKernels: 5, build: vjp("layernorm_bwd", []int{0, 1, 2}, func(b *hlo.Builder) *hlo.Instruction {
			return nn.LayerNorm(b, b.Parameter(f32(128, 256), "x"), b.Parameter(f32(256), "gamma"), b.Parameter(f32(256), "beta"), 1e-5)
		})},
		{name: "softmax f32[128,256] backward", maxKernels: 4, build: vjp("softmax_bwd", []int{0}, func(b *hlo.Builder) *hlo.Instruction {
			return nn.Softmax(b, b.Parameter(f32(128, 256), "x"))
		})},
		{name: "softmax f32[6,10] backward (scalar sweeps)", maxKernels: 4, build: vjp("softmax_bwd_small", []int{0}, func(b *hlo.Builder) *hlo.Instruction {
			return nn.Softmax(b, b.Parameter(f32(6, 10), "x"))
		})},
		{name: "dense layer f32[64,96]·[96,128] + bias, backward", maxKernels: 7, build: vjp("dense_bwd", []int{0, 1, 2}, func(b *hlo.Builder) *hlo.Instruction {
			return nn.GELU(b, nn.Dense(b, b.Parameter(f32(64, 96), "x"), b.Parameter(f32(96, 128), "w"), b.Parameter(f32(128), "bias")))
		})},
		{name: "Adam step over two f32[64,32] tensors", maxKernels: 2, build: func(t *testing.T) *hlo.Module {
			b := hlo.NewBuilder("adam2")
			step := b.Parameter(hlo.Scalar(hlo.F32), "step")
			var outs []*hlo.Instruction
			for _, sfx := range []string{"", "2"} {
				p, g := b.Parameter(f32(64, 32), "p"+sfx), b.Parameter(f32(64, 32), "g"+sfx)
				m, v := b.Parameter(f32(64, 32), "m"+sfx), b.Parameter(f32(64, 32), "v"+sfx)
				pn, mn, vn := nn.Adam(b, p, g, m, v, step, nn.DefaultAdam)
				outs = append(outs, pn, mn, vn)
			}
			return mustBuild(t, b, b.Tuple(outs...))
		}},
	}
}
