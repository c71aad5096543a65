package hlo

import (
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestComplexDTypes(t *testing.T) {
	assert.Equal(t, "c64", C64.String())
	assert.Equal(t, "c128", C128.String())
	assert.Equal(t, 8, C64.Size())
	assert.Equal(t, 16, C128.Size())
	for _, dt := range ComplexDTypes {
		got, err := ParseDType(dt.String())
		require.NoError(t, err)
		assert.Equal(t, dt, got)
		assert.True(t, dt.IsComplex())
		assert.True(t, dt.IsValid())
		// Code written for real numbers must not take complex ones for floats.
		assert.False(t, dt.IsFloat(), dt)
		assert.False(t, dt.IsNumeric(), dt)
		assert.NotContains(t, AllDTypes, dt)
	}
	assert.Equal(t, F32, C64.ComplexPart())
	assert.Equal(t, F64, C128.ComplexPart())
	assert.Equal(t, S32, S32.ComplexPart())
	c, ok := ComplexWith(F32)
	assert.True(t, ok)
	assert.Equal(t, C64, c)
	c, ok = ComplexWith(F64)
	assert.True(t, ok)
	assert.Equal(t, C128, c)
	_, ok = ComplexWith(F16)
	assert.False(t, ok)
}

func TestComplexLiteralValues(t *testing.T) {
	l := MustFromSlice([]int64{2}, []complex64{complex(1, 2), complex(3, -4.5)})
	assert.Equal(t, C64, l.DType())
	// Real part first, little-endian f32 each (XLA's layout).
	assert.Equal(t, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}, l.Bytes()[:8])
	assert.Equal(t, complex(3, -4.5), l.Complex128(1))
	assert.Equal(t, 3.0, l.Float64(1), "Float64 of a complex element is its real part")
	vs, err := Values[complex64](l)
	require.NoError(t, err)
	assert.Equal(t, []complex64{complex(1, 2), complex(3, -4.5)}, vs)

	w := ScalarLiteral(complex(1e300, -0.1))
	assert.Equal(t, C128, w.DType())
	assert.Equal(t, complex(1e300, -0.1), w.Complex128(0))
	w.SetFloat64(0, 2)
	assert.Equal(t, complex(2, 0), w.Complex128(0), "SetFloat64 clears the imaginary part")
	w.SetInt64(0, -3)
	assert.Equal(t, complex(-3, 0), w.Complex128(0))
	assert.Equal(t, complex(7, 0), ScalarLiteral(int32(7)).Complex128(0), "a real element reads with imaginary part 0")
}

func TestComplexLiteralUniform(t *testing.T) {
	// Two c128 values equal in their real part but not their imaginary part: a
	// check that compared only the first 8 bytes would call them uniform.
	l := MustFromSlice([]int64{2}, []complex128{complex(1, 2), complex(1, 3)})
	assert.False(t, l.IsUniform())
	assert.True(t, MustFromSlice([]int64{2}, []complex128{complex(1, 2), complex(1, 2)}).IsUniform())
}

func TestComplexConstantText(t *testing.T) {
	text := `HloModule m

ENTRY e {
  p = c64[2,3]{1,0} parameter(0)
  c = c64[2] constant({(1, 2), (3, -4.5)})
  s = c64[] constant((0, 1))
  d = c128[2,1] constant({ {(1e300, -inf)}, {(nan, 0.1)} })
  ROOT t = (c64[2,3], c64[2], c64[], c128[2,1]) tuple(p, c, s, d)
}`
	m, err := ParseModule(text)
	require.NoError(t, err)
	byName := map[string]*Instruction{}
	for _, in := range m.Entry.Instructions {
		byName[in.Name] = in
	}
	assert.Equal(t, MakeShape(C64, 2, 3), byName["p"].Shape)
	c := byName["c"].Attrs.Literal
	assert.Equal(t, complex(1, 2), c.Complex128(0))
	assert.Equal(t, complex(3, -4.5), c.Complex128(1))
	assert.Equal(t, complex(0, 1), byName["s"].Attrs.Literal.Complex128(0))
	d := byName["d"].Attrs.Literal
	assert.Equal(t, complex(1e300, math.Inf(-1)), d.Complex128(0))
	assert.True(t, cmplx.IsNaN(d.Complex128(1)))
	assert.Equal(t, 0.1, imag(d.Complex128(1)))

	printed := Print(m)
	for _, want := range []string{"c64[2,3]{1,0} parameter(0)", "constant({(1, 2), (3, -4.5)})",
		"c64[] constant((0, 1))", "constant({{(1e+300, -inf)}, {(nan, 0.1)}})"} {
		assert.Contains(t, printed, want)
	}
	again, err := ParseModule(printed)
	require.NoError(t, err)
	assert.Equal(t, printed, Print(again))
}

func TestComplexConstantTextErrors(t *testing.T) {
	for _, tc := range []struct{ literal, want string }{
		{"{1, 2}", "to open a c64 value"},
		{"{(1 2), (3, 4)}", "between the real and imaginary parts"},
		{"{(1, 2, 3), (3, 4)}", "after the imaginary part"},
		{"{(1e39, 0), (3, 4)}", "overflows f32"},
		{"{(true, 0), (3, 4)}", "expected a f32 value"},
		{"{(1, 2)}", "expected ','"},
	} {
		text := "HloModule m\nENTRY e {\n  ROOT c = c64[2] constant(" + tc.literal + ")\n}"
		_, err := ParseModule(text)
		if assert.Error(t, err, tc.literal) {
			assert.Contains(t, err.Error(), tc.want, tc.literal)
		}
	}
}

func TestComplexElidedConstant(t *testing.T) {
	m, err := ParseModule("HloModule m\nENTRY e {\n  ROOT c = c128[3] constant({...})\n}")
	require.NoError(t, err)
	l := m.Entry.Root.Attrs.Literal
	for i := 0; i < 3; i++ {
		v := l.Complex128(i)
		assert.True(t, math.Abs(real(v)) <= 1 && math.Abs(imag(v)) <= 1, v)
	}
	assert.False(t, strings.Contains(Print(m), "nan"))
}

func TestComplexLiteralsCompare(t *testing.T) {
	nan := math.NaN()
	a := MustFromSlice([]int64{3}, []complex128{complex(1, nan), complex(0, 2), complex(1e10, 1)})
	b := MustFromSlice([]int64{3}, []complex128{complex(1, -nan), complex(0, 2), complex(1e10, 1)})
	assert.NoError(t, LiteralsEqual(a, b), "NaN parts match any NaN")
	// Equal real parts (the first 8 bytes) but not imaginary ones: unequal.
	c := MustFromSlice([]int64{3}, []complex128{complex(1, nan), complex(0, 3), complex(1e10, 1)})
	assert.ErrorContains(t, LiteralsEqual(c, a), "index [1]: got (0, 3), want (0, 2)")
	z := MustFromSlice([]int64{1}, []complex64{complex(float32(math.Copysign(0, -1)), 0)})
	assert.Error(t, LiteralsEqual(z, MustFromSlice([]int64{1}, []complex64{0})), "-0 and +0 differ")
	// The tolerance is relative to the modulus: an imaginary part off by 1e-3 of
	// a number of modulus 1e10 is close at rtol 1e-9.
	d := MustFromSlice([]int64{3}, []complex128{complex(1, nan), complex(0, 2), complex(1e10, 1+1e-3)})
	assert.NoError(t, LiteralsClose(d, a, 0, 1e-9))
	assert.Error(t, LiteralsClose(d, a, 0, 1e-15))
	// Beside an infinite part, a finite one is compared relative to itself.
	inf := math.Inf(1)
	e := MustFromSlice([]int64{1}, []complex128{complex(9.0561, inf)})
	assert.NoError(t, LiteralsClose(MustFromSlice([]int64{1}, []complex128{complex(9.0562, inf)}), e, 0, 2e-5))
	assert.Error(t, LiteralsClose(MustFromSlice([]int64{1}, []complex128{complex(9.0562, inf)}), e, 0, 1e-6))
	assert.Error(t, LiteralsClose(MustFromSlice([]int64{1}, []complex128{complex(9.0561, -inf)}), e, 0, 1))
}
