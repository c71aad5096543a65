package vkxla_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Complex dots on the GPU (four real dots of the parts, passes/complex_dot.go)
// against cpuref's complex dot (complex128 sums, rounded once), within
// vkxla.Tolerance(hlo.OpDot, dt) of the modulus: c64 1e-4 (the f32 dot's), c128
// 1e-12. Cases: a matrix product, a batched dot_general, and the Fourier neural
// operator's channel mixing einsum("bixy,ioxy->boxy") as a dot_general with
// batch dims x, y and contracting i, then a transpose back to b, o, x, y.
func TestComplexDotAgainstCPU(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(21, 7))
	for _, dt := range hlo.ComplexDTypes {
		for _, c := range complexDotCases(dt) {
			t.Run(fmt.Sprintf("%v/%s", dt, c.name), func(t *testing.T) {
				b := hlo.NewBuilder(c.name)
				x := b.Parameter(c.lhs, "x")
				w := b.Parameter(c.rhs, "w")
				root := b.DotGeneral(x, w, c.dims)
				if c.perm != nil {
					root = b.Transpose(root, c.perm...)
				}
				m := mustBuild(t, b, root)
				checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpDot, dt),
					randomComplexParts(rng, c.lhs), randomComplexParts(rng, c.rhs))
			})
		}
	}
}

type complexDotCase struct {
	name     string
	lhs, rhs hlo.Shape
	dims     hlo.DotDims
	perm     []int64
}

func complexDotCases(dt hlo.DType) []complexDotCase {
	s := func(d ...int64) hlo.Shape { return hlo.MakeShape(dt, d...) }
	return []complexDotCase{
		{name: "matmul", lhs: s(17, 33), rhs: s(33, 9),
			dims: hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}},
		{name: "batched", lhs: s(3, 5, 16), rhs: s(3, 16, 7),
			dims: hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}},
		{name: "fno bixy,ioxy->boxy", lhs: s(2, 8, 6, 5), rhs: s(8, 4, 6, 5),
			dims: hlo.DotDims{LhsBatch: []int64{2, 3}, RhsBatch: []int64{2, 3}, LhsContracting: []int64{1}, RhsContracting: []int64{0}},
			perm: []int64{2, 3, 0, 1}},
	}
}

// randomComplexParts is a complex array of parts uniform in [-1, 1].
func randomComplexParts(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	l := hlo.NewLiteral(s)
	for i := range l.NumElements() {
		l.SetComplex128(i, complex(2*rng.Float64()-1, 2*rng.Float64()-1))
	}
	return l
}

// The FNO einsum's dot_general keeps its complex result shape: x, y, b, o.
func TestComplexDotFNOShape(t *testing.T) {
	c := complexDotCases(hlo.C64)[2]
	b := hlo.NewBuilder("fno")
	d := b.DotGeneral(b.Parameter(c.lhs, "x"), b.Parameter(c.rhs, "w"), c.dims)
	m := mustBuild(t, b, b.Transpose(d, c.perm...))
	require.Equal(t, hlo.MakeShape(hlo.C64, 6, 5, 2, 4).String(), d.Shape.String())
	require.Equal(t, hlo.MakeShape(hlo.C64, 2, 4, 6, 5).String(), m.Entry.Root.Shape.String())
}

// TestComplexConvolutionAgainstCPU: a 2-D complex convolution (NCHW, padded,
// strided, two feature groups) as four real convolutions on the GPU, against
// cpuref within vkxla.Tolerance(hlo.OpConvolution, dt) of the modulus.
func TestComplexConvolutionAgainstCPU(t *testing.T) {
	rt := newRuntime(t)
	rng := rand.New(rand.NewPCG(21, 8))
	for _, dt := range hlo.ComplexDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			xs, ks := hlo.MakeShape(dt, 2, 4, 9, 8), hlo.MakeShape(dt, 6, 2, 3, 3)
			b := hlo.NewBuilder("cconv")
			win := []hlo.WindowDim{{Size: 3, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}, hlo.NewWindowDim(3)}
			dims := hlo.ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int64{2, 3},
				KernelOutput: 0, KernelInput: 1, KernelSpatial: []int64{2, 3}, OutputBatch: 0, OutputFeature: 1, OutputSpatial: []int64{2, 3}}
			m := mustBuild(t, b, b.Conv(b.Parameter(xs, "x"), b.Parameter(ks, "k"), win, dims, 2, 1))
			checkAgainstCPU(t, rt, m, vkxla.Tolerance(hlo.OpConvolution, dt), randomComplexParts(rng, xs), randomComplexParts(rng, ks))
		})
	}
}
