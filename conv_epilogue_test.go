package vkxla_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// TestConvEpilogueFusion runs convolution epilogues (docs/passes.md, "Dot and
// convolution epilogues") fused into the implicit GEMM's output stage and unfused,
// against cpuref: bias + ReLU6 over NHWC 3×3 and bf16 1×1 convolutions (TF's
// MobileNet export), an lhs-dilated convolution (rows in sub-pixel phase order,
// padding rows not stored), a residual add over an NCHW output (scalar stores), the split
// over taps (the epilogue in the sum pass), a convolution too small for the GEMM
// (elemental), depthwise convolutions with their epilogues in the depthwise
// kernel's output stage (f32 and bf16, strided, a residual, a convert to f32) or
// elemental (6 features), and a separable block: two kernels (issue 12's
// MobileNet block, 2–3).
func TestConvEpilogueFusion(t *testing.T) {
	runTextCases(t, []dumpCase{
		{"3x3 NHWC + bias + relu6", `HloModule conv_relu6
ENTRY main {
  x = f32[1,12,12,32]{3,2,1,0} parameter(0)
  w = f32[3,3,32,48]{3,2,1,0} parameter(1)
  b = f32[48]{0} parameter(2)
  c = f32[1,12,12,48]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,12,12,48]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[1,12,12,48]{3,2,1,0} add(c, bb)
  lo = f32[] constant(0)
  hi = f32[] constant(6)
  ROOT r = f32[1,12,12,48]{3,2,1,0} clamp(lo, a, hi)
}`, 1},
		{"bf16 1x1 + bias + relu6", `HloModule pointwise_bf16
ENTRY main {
  x = bf16[1,10,10,64]{3,2,1,0} parameter(0)
  w = bf16[1,1,64,64]{3,2,1,0} parameter(1)
  b = bf16[64]{0} parameter(2)
  c = bf16[1,10,10,64]{3,2,1,0} convolution(x, w), window={size=1x1}, dim_labels=b01f_01io->b01f
  bb = bf16[1,10,10,64]{3,2,1,0} broadcast(b), dimensions={3}
  a = bf16[1,10,10,64]{3,2,1,0} add(c, bb)
  lo = bf16[] constant(0)
  hi = bf16[] constant(6)
  ROOT r = bf16[1,10,10,64]{3,2,1,0} clamp(lo, a, hi)
}`, 1},
		{"lhs-dilated (phase-ordered rows) + bias + relu", `HloModule transposed_conv
ENTRY main {
  x = f32[2,7,9,16]{3,2,1,0} parameter(0)
  w = f32[3,3,16,12]{3,2,1,0} parameter(1)
  b = f32[12]{0} parameter(2)
  c = f32[2,14,17,12]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_2x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  bb = f32[2,14,17,12]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[2,14,17,12]{3,2,1,0} add(c, bb)
  z = f32[] constant(0)
  zz = f32[2,14,17,12]{3,2,1,0} broadcast(z), dimensions={}
  ROOT r = f32[2,14,17,12]{3,2,1,0} maximum(a, zz)
}`, 1},
		{"NCHW + residual", `HloModule nchw_residual
ENTRY main {
  x = f32[2,16,10,10]{3,2,1,0} parameter(0)
  w = f32[24,16,3,3]{3,2,1,0} parameter(1)
  res = f32[2,24,10,10]{3,2,1,0} parameter(2)
  c = f32[2,24,10,10]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT a = f32[2,24,10,10]{3,2,1,0} add(c, res)
}`, 1},
		{"split over taps + bias + tanh", `HloModule split_taps
ENTRY main {
  x = f32[1,12,12,16]{3,2,1,0} parameter(0)
  w = f32[9,9,16,8]{3,2,1,0} parameter(1)
  b = f32[8]{0} parameter(2)
  c = f32[1,4,4,8]{3,2,1,0} convolution(x, w), window={size=9x9}, dim_labels=b01f_01io->b01f
  bb = f32[1,4,4,8]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[1,4,4,8]{3,2,1,0} add(c, bb)
  ROOT t = f32[1,4,4,8]{3,2,1,0} tanh(a)
}`, 2},
		{"small conv (elemental) + bias + relu", `HloModule small
ENTRY main {
  x = f32[1,4,4,3]{3,2,1,0} parameter(0)
  w = f32[3,3,3,2]{3,2,1,0} parameter(1)
  b = f32[2]{0} parameter(2)
  c = f32[1,4,4,2]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[1,4,4,2]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[1,4,4,2]{3,2,1,0} add(c, bb)
  zero = f32[] constant(0)
  z = f32[1,4,4,2]{3,2,1,0} broadcast(zero), dimensions={}
  ROOT r = f32[1,4,4,2]{3,2,1,0} maximum(a, z)
}`, 1},
		{"depthwise + bias + relu6", `HloModule dw_relu6
ENTRY main {
  x = f32[2,14,13,32]{3,2,1,0} parameter(0)
  w = f32[3,3,1,32]{3,2,1,0} parameter(1)
  b = f32[32]{0} parameter(2)
  c = f32[2,14,13,32]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=32
  bb = f32[2,14,13,32]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[2,14,13,32]{3,2,1,0} add(c, bb)
  lo = f32[] constant(0)
  hi = f32[] constant(6)
  ROOT r = f32[2,14,13,32]{3,2,1,0} clamp(lo, a, hi)
}`, 1},
		{"bf16 depthwise stride 2 + bias + relu6", `HloModule dw_bf16
ENTRY main {
  x = bf16[1,17,17,16]{3,2,1,0} parameter(0)
  w = bf16[3,3,1,16]{3,2,1,0} parameter(1)
  b = bf16[16]{0} parameter(2)
  c = bf16[1,9,9,16]{3,2,1,0} convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
  bb = bf16[1,9,9,16]{3,2,1,0} broadcast(b), dimensions={3}
  a = bf16[1,9,9,16]{3,2,1,0} add(c, bb)
  lo = bf16[] constant(0)
  hi = bf16[] constant(6)
  ROOT r = bf16[1,9,9,16]{3,2,1,0} clamp(lo, a, hi)
}`, 1},
		{"f16 depthwise + residual, converted to f32", `HloModule dw_f16_residual
ENTRY main {
  x = f16[1,12,12,8]{3,2,1,0} parameter(0)
  w = f16[5,5,1,8]{3,2,1,0} parameter(1)
  res = f16[1,12,12,8]{3,2,1,0} parameter(2)
  c = f16[1,12,12,8]{3,2,1,0} convolution(x, w), window={size=5x5 pad=2_2x2_2}, dim_labels=b01f_01io->b01f, feature_group_count=8
  a = f16[1,12,12,8]{3,2,1,0} add(c, res)
  ROOT f = f32[1,12,12,8]{3,2,1,0} convert(a)
}`, 1},
		{"depthwise of 6 features (elemental) + bias + relu", `HloModule dw6
ENTRY main {
  x = f32[1,9,9,6]{3,2,1,0} parameter(0)
  w = f32[3,3,1,6]{3,2,1,0} parameter(1)
  b = f32[6]{0} parameter(2)
  c = f32[1,9,9,6]{3,2,1,0} convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=6
  bb = f32[1,9,9,6]{3,2,1,0} broadcast(b), dimensions={3}
  a = f32[1,9,9,6]{3,2,1,0} add(c, bb)
  zero = f32[] constant(0)
  z = f32[1,9,9,6]{3,2,1,0} broadcast(zero), dimensions={}
  ROOT r = f32[1,9,9,6]{3,2,1,0} maximum(a, z)
}`, 1},
		{"separable block", `HloModule separable
ENTRY main {
  x = f32[1,16,16,32]{3,2,1,0} parameter(0)
  dw = f32[3,3,1,32]{3,2,1,0} parameter(1)
  db = f32[32]{0} parameter(2)
  pw = f32[1,1,32,64]{3,2,1,0} parameter(3)
  pb = f32[64]{0} parameter(4)
  lo = f32[] constant(0)
  hi = f32[] constant(6)
  d = f32[1,16,16,32]{3,2,1,0} convolution(x, dw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=32
  dbb = f32[1,16,16,32]{3,2,1,0} broadcast(db), dimensions={3}
  da = f32[1,16,16,32]{3,2,1,0} add(d, dbb)
  dr = f32[1,16,16,32]{3,2,1,0} clamp(lo, da, hi)
  p = f32[1,16,16,64]{3,2,1,0} convolution(dr, pw), window={size=1x1}, dim_labels=b01f_01io->b01f
  pbb = f32[1,16,16,64]{3,2,1,0} broadcast(pb), dimensions={3}
  pa = f32[1,16,16,64]{3,2,1,0} add(p, pbb)
  ROOT pr = f32[1,16,16,64]{3,2,1,0} clamp(lo, pa, hi)
}`, 2},
	})
}

// dumpCase is a module in HLO text and the dispatches it takes fused (0: not
// checked).
type dumpCase struct {
	name, text string
	kernels    int
}

// runTextCases compiles each module with fusion on and off, runs it on random
// inputs in [-1, 1] and checks both against cpuref within the program's
// tolerance, and the fused dispatch count.
func runTextCases(t *testing.T, cases []dumpCase) {
	rt := newRuntime(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := hlo.ParseModule(c.text)
			require.NoError(t, err)
			inputs := randomInputs(rand.New(rand.NewPCG(4, 2)), m)
			want, err := cpuref.Eval(m, inputs...)
			require.NoError(t, err)
			spec := vkxla.ProgramTolerance(m, m.Entry.Root.Shape.DType)
			for _, fused := range []bool{true, false} {
				var opts []vkxla.CompileOption
				if !fused {
					opts = append(opts, vkxla.WithoutPasses("fusion"))
				}
				got, kernels := runCounting(t, rt, m, opts, inputs)
				require.NoError(t, spec.Check(got[0], want.Leaves()[0]), "fused=%v (tolerance %+v)", fused, spec)
				if fused && c.kernels > 0 {
					require.Equal(t, c.kernels, kernels, "dispatches fused")
				}
			}
		})
	}
}
