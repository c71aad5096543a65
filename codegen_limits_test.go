package vkxla_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/autodiff"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// Code generation limits that gradients hit: convolutions whose output elements
// sum more terms than one invocation may loop over (split-K), and select-and-
// scatter over dilated windows.

// TestFilterGradientSplitK: the kernel gradient of a 3×3 convolution over 64
// images of 32×32 contracts over N·H·W = 65536 terms per element, past lavapipe's
// 65535 loop iterations per invocation; it runs split-K and agrees with cpuref.
func TestFilterGradientSplitK(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("conv")
	x := b.Parameter(f32(64, 32, 32, 3), "x")
	kernel := b.Parameter(f32(3, 3, 3, 8), "kernel")
	ct := b.Parameter(f32(64, 32, 32, 8), "ct")
	loss := gradSumAll(b, b.Mul(nn.Conv2D(b, x, kernel, 1, nn.Same), ct))
	m := mustBuild(t, b, loss)
	g, err := autodiff.Grad(m, []int{1}, nil)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(41, 42))
	inputs := []*hlo.Literal{randomLiteral(rng, f32(64, 32, 32, 3), unitDomain),
		randomLiteral(rng, f32(3, 3, 3, 8), unitDomain), randomLiteral(rng, f32(64, 32, 32, 8), unitDomain)}
	checkAgainstCPU(t, rt, g, vkxla.ProgramTolerance(g, hlo.F32), inputs...)
}

// TestConvSplitKExact: an s32 convolution with 40000 terms per output element
// (split into chunks) is exact: integer partial sums wrap like the sequential one.
// A 1×1 output of a 200×200 window over 1 feature, 2 batches, 3 output features.
func TestConvSplitKExact(t *testing.T) {
	rt := newRuntime(t)
	b := hlo.NewBuilder("conv")
	s32 := func(dims ...int64) hlo.Shape { return hlo.MakeShape(hlo.S32, dims...) }
	x := b.Parameter(s32(2, 200, 200, 1), "x")
	k := b.Parameter(s32(200, 200, 1, 3), "k")
	m := mustBuild(t, b, nn.Conv2D(b, x, k, 1, nn.Valid))
	rng := rand.New(rand.NewPCG(43, 44))
	checkAgainstCPU(t, rt, m, vkxla.ErrorSpec{}, randomLiteral(rng, s32(2, 200, 200, 1), unitDomain),
		randomLiteral(rng, s32(200, 200, 1, 3), unitDomain))
}

// TestDilatedSelectAndScatter: select-and-scatter over window-dilated and
// base-dilated windows (with padding and strides), f32 with a max selection and
// s32 with a min selection, on the GPU against cpuref.
func TestDilatedSelectAndScatter(t *testing.T) {
	rt := newRuntime(t)
	wd := func(size, stride, winDil, baseDil, low, high int64) hlo.WindowDim {
		w := hlo.NewWindowDim(size)
		w.Stride, w.WindowDilation, w.BaseDilation, w.PadLow, w.PadHigh = stride, winDil, baseDil, low, high
		return w
	}
	windows := map[string][]hlo.WindowDim{
		"window dilation":          {wd(3, 2, 2, 1, 0, 0), wd(2, 1, 3, 1, 1, 2)},
		"base dilation":            {wd(3, 2, 1, 2, 1, 1), wd(2, 1, 1, 3, 0, 0)},
		"both, overlapping, 3-d":   {wd(2, 1, 2, 2, 1, 0), wd(3, 1, 2, 1, 2, 2), wd(1, 1, 1, 1, 0, 0)},
		"window larger than input": {wd(4, 3, 3, 1, 5, 5), wd(2, 2, 1, 1, 0, 1)},
	}
	for name, w := range windows {
		for _, c := range []struct {
			dt  hlo.DType
			dir hlo.ComparisonDirection
		}{{hlo.F32, hlo.CmpGE}, {hlo.S32, hlo.CmpLE}} {
			t.Run(name+"/"+c.dt.String(), func(t *testing.T) {
				dims := []int64{9, 10, 2}[:len(w)]
				b := hlo.NewBuilder("sas")
				xs := hlo.MakeShape(c.dt, dims...)
				ss := hlo.MakeShape(c.dt, sasWindowOutput(dims, w)...)
				x, src := b.Parameter(xs, "x"), b.Parameter(ss, "source")
				m := mustBuild(t, b, b.SelectAndScatter(x, src, b.ScalarConstant(c.dt, 0),
					b.Comparator(c.dir, c.dt), b.Reducer(hlo.OpAdd, c.dt), w))
				rng := rand.New(rand.NewPCG(45, uint64(len(name))))
				d := domain{-1000, 1000}
				checkAgainstCPU(t, rt, m, vkxla.ProgramTolerance(m, c.dt), randomLiteral(rng, xs, d), randomLiteral(rng, ss, d))
			})
		}
	}
}

// sasWindowOutput is the shape of a reduce-window over dims: the windows that fit in
// the padded, base-dilated input.
func sasWindowOutput(dims []int64, w []hlo.WindowDim) []int64 {
	out := make([]int64, len(dims))
	for d, n := range dims {
		wd := w[d]
		base := (n-1)*wd.BaseDilation + 1 + wd.PadLow + wd.PadHigh
		extent := (wd.Size-1)*wd.WindowDilation + 1
		out[d] = (base-extent)/wd.Stride + 1
	}
	return out
}
