package hlo

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLowPrecisionTextRoundTrip parses a module with a parameter, a constant and a
// convert of every low-precision type, prints it, parses the print, and checks that
// the two prints agree and the constants keep their bits.
func TestLowPrecisionTextRoundTrip(t *testing.T) {
	for _, dt := range LowPrecisionDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			values := "{ {1, 0}, {1, 1} }"
			if dt == F8E8M0FNU {
				values = "{ {1, 2}, {0.5, 4} }"
			}
			text := fmt.Sprintf(`HloModule lowp
ENTRY e {
  p = %[1]v[2,2]{1,0} parameter(0)
  c = %[1]v[2,2]{1,0} constant(%[2]s)
  s = s32[2,2]{1,0} convert(c)
  f = f32[2,2]{1,0} convert(p)
  ROOT t = (%[1]v[2,2]{1,0}, s32[2,2]{1,0}, f32[2,2]{1,0}) tuple(c, s, f)
}`, dt, values)
			m, err := ParseModule(text)
			require.NoError(t, err)
			printed := Print(m)
			assert.Contains(t, printed, dt.String()+"[2,2]{1,0} parameter(0)")
			again, err := ParseModule(printed)
			require.NoError(t, err, printed)
			assert.Equal(t, printed, Print(again))
			c1, c2 := instrNamed(m, "c").Attrs.Literal, instrNamed(again, "c").Attrs.Literal
			require.NoError(t, LiteralsEqual(c2, c1))
		})
	}
}

// TestLowPrecisionConstantsPrintEveryValue prints a constant holding every bit
// pattern of each 8-, 6- and 4-bit float, parses it back, and checks each element's
// bits (NaNs: still NaN); and spot-checks the printed numbers, which follow XLA's
// %g with the type's max_digits10 significant digits.
func TestLowPrecisionConstantsPrintEveryValue(t *testing.T) {
	for _, dt := range LowPrecisionDTypes {
		if !dt.IsFloat() {
			continue
		}
		n := int64(1) << dt.Bits()
		l := NewLiteral(MakeShape(dt, n))
		for i := range n {
			l.SetBits(int(i), uint64(i))
		}
		text := fmt.Sprintf("HloModule k\nENTRY e {\n  ROOT c = %v constant(%s)\n}", l.Shape(), FormatLiteralValues(l))
		m, err := ParseModule(text)
		require.NoError(t, err, text)
		back := m.Entry.Root.Attrs.Literal
		for i := range int(n) {
			if math.IsNaN(l.Float64(i)) {
				assert.True(t, math.IsNaN(back.Float64(i)), "%v %#x", dt, i)
				continue
			}
			require.Equal(t, l.Bits(i), back.Bits(i), "%v %#x printed as %s", dt, i, FormatElement(l, i))
		}
	}
	cases := []struct {
		dt   DType
		bits uint64
		want string
	}{
		{F8E4M3FN, 0x7e, "448"}, {F8E4M3FN, 0x01, "0.00195"}, {F8E4M3FN, 0x7f, "nan"},
		{F8E5M2, 0x7b, "5.7e+04"}, {F8E5M2, 0x01, "1.5e-05"}, {F8E5M2, 0x7c, "inf"}, {F8E5M2, 0xfc, "-inf"},
		{F8E4M3FNUZ, 0x80, "nan"}, {F8E4M3FN, 0x80, "-0"}, {F4E2M1FN, 0xd, "-3"},
		{F6E3M2FN, 0x01, "0.062"}, {F6E2M3FN, 0x1f, "7.5"}, {F8E8M0FNU, 0x7f, "1"},
	}
	for _, c := range cases {
		l := NewLiteral(MakeShape(c.dt))
		l.SetBits(0, c.bits)
		assert.Equal(t, c.want, FormatElement(l, 0), "%v %#x", c.dt, c.bits)
	}
}

func TestLowPrecisionIntegerConstants(t *testing.T) {
	m, err := ParseModule(`HloModule ints
ENTRY e {
  a = s4[4] constant({-8, -1, 0, 7})
  b = u4[3] constant({0, 9, 15})
  c = s2[4] constant({-2, -1, 0, 1})
  ROOT d = u2[3] constant({0, 2, 3})
}`)
	require.NoError(t, err)
	assert.Equal(t, []byte{0xf8, 0x70}, instrNamed(m, "a").Attrs.Literal.Bytes())
	assert.Equal(t, []byte{0x90, 0x0f}, instrNamed(m, "b").Attrs.Literal.Bytes())
	assert.Equal(t, []byte{0b01_00_11_10}, instrNamed(m, "c").Attrs.Literal.Bytes())
	assert.Contains(t, Print(m), "s4[4]{0} constant({-8, -1, 0, 7})")
	assert.Contains(t, Print(m), "u2[3]{0} constant({0, 2, 3})")
}

func TestLowPrecisionConstantErrors(t *testing.T) {
	cases := []struct{ shape, value, want string }{
		{"s4[]", "8", "expected a s4 value"},
		{"s4[]", "-9", "expected a s4 value"},
		{"u4[]", "16", "expected a u4 value"},
		{"u2[]", "-1", "expected a u2 value"},
		{"f8e4m3fn[]", "464.1", "overflows f8e4m3fn"},
		{"f8e5m2[]", "61440", "overflows f8e5m2"},
		{"f4e2m1fn[]", "7", "overflows f4e2m1fn"},
		{"f4e2m1fn[]", "nan", "has no NaN"},
		{"f8e4m3fn[]", "inf", "has no infinity"},
		{"f8e8m0fnu[]", "0", "no zero or negative values"},
		{"f8e8m0fnu[]", "-2", "no zero or negative values"},
	}
	for _, c := range cases {
		text := fmt.Sprintf("HloModule bad\nENTRY e {\n  ROOT c = %s constant(%s)\n}", c.shape, c.value)
		_, err := ParseModule(text)
		require.Error(t, err, c.shape+" "+c.value)
		assert.Contains(t, err.Error(), c.want, c.shape+" "+c.value)
	}
	// In range: the largest values and the round-to-max edge.
	for _, ok := range []string{"f8e4m3fn[] constant(464)", "f4e2m1fn[] constant(-6.9)", "f8e5m2[] constant(-inf)"} {
		_, err := ParseModule("HloModule ok\nENTRY e {\n  ROOT c = " + ok + "\n}")
		assert.NoError(t, err, ok)
	}
	assert.True(t, strings.HasPrefix(F8E4M3B11FNUZ.String(), "f8e4m3b11"))
}

func instrNamed(m *Module, name string) *Instruction {
	for _, in := range m.Entry.Instructions {
		if in.Name == name {
			return in
		}
	}
	return nil
}
