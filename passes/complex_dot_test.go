package passes

import (
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func TestExpandComplexDots(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "four real dots of the parts",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (a: c64[2,3], b: c64[3,4]) -> c64[2,4] {
  %a = c64[2,3] parameter(0)
  %b = c64[3,4] parameter(1)
  ROOT %d = c64[2,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
		after: `HloModule m
ENTRY %e (a: c64[2,3], b: c64[3,4]) -> c64[2,4] {
  %a = c64[2,3] parameter(0)
  %b = c64[3,4] parameter(1)
  %d.real = f32[2,3] real(%a)
  %d.imag = f32[2,3] imag(%a)
  %d.real.1 = f32[3,4] real(%b)
  %d.imag.1 = f32[3,4] imag(%b)
  %d.dot = f32[2,4] dot(%d.real, %d.real.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d.dot.1 = f32[2,4] dot(%d.imag, %d.imag.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d.subtract = f32[2,4] subtract(%d.dot, %d.dot.1)
  %d.dot.2 = f32[2,4] dot(%d.real, %d.imag.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d.dot.3 = f32[2,4] dot(%d.imag, %d.real.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d.add = f32[2,4] add(%d.dot.2, %d.dot.3)
  ROOT %d.complex = c64[2,4] complex(%d.subtract, %d.add)
}
`,
	}, {
		name:     "a real dot stays",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (a: f32[2,3], b: f32[3,4]) -> f32[2,4] {
  %a = f32[2,3] parameter(0)
  %b = f32[3,4] parameter(1)
  ROOT %d = f32[2,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
	}})
}

// The expansion of a batched c128 dot_general agrees with cpuref's complex dot
// within a few f64 roundings (the parts are summed in f64 dots, not complex128).
func TestExpandComplexDotMatchesDefinition(t *testing.T) {
	a := hlo.MustFromSlice([]int64{2, 2, 3}, []complex128{1 + 2i, -1i, 0.5, 2, 1 - 1i, -3 + 0.25i,
		-2 - 1i, 4i, 1.5, 0.75 - 2i, 3, -1})
	b := hlo.MustFromSlice([]int64{2, 3, 2}, []complex128{3, 1 + 1i, 1i, 1 - 1i, -2 + 0.5i, 2,
		1, -1i, 0.25 + 3i, -1.5, 2 - 2i, 1i})
	expandedMatchesCPU(t, `HloModule m
ENTRY e {
  a = c128[2,2,3] parameter(0)
  b = c128[2,3,2] parameter(1)
  ROOT d = c128[2,2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
`, 1e-15, a, b)
}

// A complex convolution (padded, strided, two feature groups) expands to four
// real ones that agree with cpuref's complex convolution.
func TestExpandComplexConvolutionMatchesDefinition(t *testing.T) {
	x := hlo.NewLiteral(hlo.MakeShape(hlo.C128, 1, 4, 6))
	k := hlo.NewLiteral(hlo.MakeShape(hlo.C128, 4, 2, 3))
	for i := range x.NumElements() {
		x.SetComplex128(i, complex(float64(i%5)-2, float64(i%3)*0.5))
	}
	for i := range k.NumElements() {
		k.SetComplex128(i, complex(float64(i%4)*0.25, 1-float64(i%7)*0.3))
	}
	expandedMatchesCPU(t, `HloModule m
ENTRY e {
  x = c128[1,4,6] parameter(0)
  k = c128[4,2,3] parameter(1)
  ROOT c = c128[1,4,3] convolution(x, k), window={size=3 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
}
`, 1e-15, x, k)
}

// After the pipeline no complex contraction remains, and the four real ones do.
func TestExpandComplexConvolutionLeavesRealOnes(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  x = c64[1,2,6] parameter(0)
  k = c64[2,2,3] parameter(1)
  ROOT c = c64[1,2,4] convolution(x, k), window={size=3}, dim_labels=bf0_oi0->bf0
}
`)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(m, Config{Disabled: OptionalNames()}); err != nil {
		t.Fatal(err)
	}
	real := 0
	for _, in := range m.Entry.Instructions {
		if in.Op == hlo.OpConvolution {
			if in.Shape.DType != hlo.F32 {
				t.Fatalf("%s stays %v", in.Name, in.Shape)
			}
			real++
		}
	}
	if real != 4 {
		t.Fatalf("%d real convolutions, want 4:\n%s", real, hlo.Print(m))
	}
}
