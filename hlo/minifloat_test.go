package hlo

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floatSpec is a format written down from its definition (ml_dtypes' comments, the
// OCP FP8 and MX specifications), independently of minifloat.go's table.
type floatSpec struct {
	dt               DType
	width            int // total bits
	exp, mant, bias  int
	unsigned         bool              // f8e8m0fnu: no sign bit, no zero, no subnormals
	isNaN            func(uint64) bool // the format's NaN patterns
	isInf            func(uint64) bool
	max              float64 // largest finite value, as the specification states it
	overflow, negOvf uint64  // what +inf and -inf (and overflowing values) become
	nan, negNaN      uint64  // what +NaN and -NaN become
	negZero          uint64  // what -0 becomes
}

func noPattern(uint64) bool { return false }

func ieeeSpec(dt DType, exp, mant, bias int, max float64) floatSpec {
	ones := uint64(1)<<exp - 1
	width := 1 + exp + mant
	magMask := uint64(1)<<(exp+mant) - 1
	expOf := func(b uint64) uint64 { return b & magMask >> mant }
	mantOf := func(b uint64) uint64 { return b & (1<<mant - 1) }
	inf := ones << mant
	sign := uint64(1) << (width - 1)
	return floatSpec{dt: dt, width: width, exp: exp, mant: mant, bias: bias, max: max,
		isNaN:    func(b uint64) bool { return expOf(b) == ones && mantOf(b) != 0 },
		isInf:    func(b uint64) bool { return b&magMask == inf },
		overflow: inf, negOvf: sign | inf,
		nan: inf | 1<<(mant-1), negNaN: sign | inf | 1<<(mant-1), negZero: sign}
}

func fnuzSpec(dt DType, exp, mant, bias int, max float64) floatSpec {
	return floatSpec{dt: dt, width: 8, exp: exp, mant: mant, bias: bias, max: max,
		isNaN: func(b uint64) bool { return b == 0x80 }, isInf: noPattern,
		overflow: 0x80, negOvf: 0x80, nan: 0x80, negNaN: 0x80, negZero: 0}
}

// mxSpec is an f6/f4 type: no inf, no NaN; overflow saturates; ml_dtypes maps +NaN
// to the -0 pattern and -NaN to +0.
func mxSpec(dt DType, exp, mant int, max float64) floatSpec {
	width := 1 + exp + mant
	sign := uint64(1) << (width - 1)
	maxBits := sign - 1
	return floatSpec{dt: dt, width: width, exp: exp, mant: mant, bias: 1<<(exp-1) - 1, max: max,
		isNaN: noPattern, isInf: noPattern, overflow: maxBits, negOvf: sign | maxBits,
		nan: sign, negNaN: 0, negZero: sign}
}

var floatSpecs = []floatSpec{
	ieeeSpec(F8E5M2, 5, 2, 15, 57344),
	ieeeSpec(F8E4M3, 4, 3, 7, 240),
	ieeeSpec(F8E3M4, 3, 4, 3, 15.5),
	{dt: F8E4M3FN, width: 8, exp: 4, mant: 3, bias: 7, max: 448,
		isNaN: func(b uint64) bool { return b&0x7f == 0x7f }, isInf: noPattern,
		overflow: 0x7f, negOvf: 0xff, nan: 0x7f, negNaN: 0xff, negZero: 0x80},
	fnuzSpec(F8E4M3FNUZ, 4, 3, 8, 240),
	fnuzSpec(F8E5M2FNUZ, 5, 2, 16, 57344),
	fnuzSpec(F8E4M3B11FNUZ, 4, 3, 11, 30),
	{dt: F8E8M0FNU, width: 8, exp: 8, mant: 0, bias: 127, unsigned: true, max: math.Ldexp(1, 127),
		isNaN: func(b uint64) bool { return b == 0xff }, isInf: noPattern,
		overflow: 0xff, negOvf: 0xff, nan: 0xff, negNaN: 0xff, negZero: 0xff},
	mxSpec(F6E2M3FN, 2, 3, 7.5),
	mxSpec(F6E3M2FN, 3, 2, 28),
	mxSpec(F4E2M1FN, 2, 1, 6),
}

// value is the definition: (-1)^s × 2^(e-bias) × 1.m, or 2^(1-bias) × 0.m when
// e = 0; f8e8m0fnu is 2^(e-127).
func (s floatSpec) value(b uint64) float64 {
	sign := 1.0
	if !s.unsigned && b>>(s.width-1)&1 == 1 {
		sign = -1
	}
	e := int(b>>s.mant) & (1<<s.exp - 1)
	m := float64(b & (1<<s.mant - 1))
	scale := math.Pow(2, float64(s.mant))
	switch {
	case s.unsigned:
		return math.Pow(2, float64(e-s.bias))
	case e == 0:
		return sign * m / scale * math.Pow(2, float64(1-s.bias))
	}
	return sign * (1 + m/scale) * math.Pow(2, float64(e-s.bias))
}

func TestMinifloatEveryBitPattern(t *testing.T) {
	for _, s := range floatSpecs {
		t.Run(s.dt.String(), func(t *testing.T) {
			require.Equal(t, s.width, s.dt.Bits())
			largest := 0.0
			for b := uint64(0); b < 1<<s.width; b++ {
				got := MinifloatToFloat64(s.dt, b)
				switch {
				case s.isNaN(b):
					require.Truef(t, math.IsNaN(got), "%#x decodes to %v, want NaN", b, got)
					require.Truef(t, s.isNaN(MinifloatFromFloat64(s.dt, got)), "NaN %#x does not encode to a NaN", b)
					continue
				case s.isInf(b):
					require.Truef(t, math.IsInf(got, 0), "%#x decodes to %v, want inf", b, got)
				default:
					require.Equalf(t, s.value(b), got, "%#x", b)
					largest = max(largest, got)
				}
				require.Equalf(t, b, MinifloatFromFloat64(s.dt, got), "%#x → %v → back", b, got)
				require.Equalf(t, b, MinifloatFromFloat64(s.dt, float64(float32(got))), "%#x via float32", b)
			}
			assert.Equal(t, s.max, largest, "largest finite value")
		})
	}
}

func TestMinifloatSpecials(t *testing.T) {
	for _, s := range floatSpecs {
		enc := func(v float64) uint64 { return MinifloatFromFloat64(s.dt, v) }
		assert.Equal(t, s.overflow, enc(math.Inf(1)), "%v +inf", s.dt)
		assert.Equal(t, s.negOvf, enc(math.Inf(-1)), "%v -inf", s.dt)
		assert.Equal(t, s.nan, enc(math.NaN()), "%v nan", s.dt)
		assert.Equal(t, s.negNaN, enc(math.Copysign(math.NaN(), -1)), "%v -nan", s.dt)
		assert.Equal(t, s.negZero, enc(math.Copysign(0, -1)), "%v -0", s.dt)
		assert.False(t, MinifloatOverflows(s.dt, math.Inf(1)), "%v: inf is not an overflow", s.dt)
		if !s.unsigned {
			assert.Equal(t, uint64(0), enc(0), "%v +0", s.dt)
		}
	}
	e8 := func(v float64) uint64 { return MinifloatFromFloat64(F8E8M0FNU, v) }
	assert.Equal(t, uint64(0xff), e8(0), "e8m0 has no zero")
	assert.Equal(t, uint64(0xff), e8(-1), "e8m0 has no negative values")
	assert.Equal(t, uint64(0x7f), e8(1))
	assert.Equal(t, uint64(0x00), e8(math.Ldexp(1, -200)), "below 2^-127 rounds to the smallest value")
}

// TestMinifloatRounding checks every gap between neighbouring finite values: the
// midpoint goes to the neighbour whose pattern is even (ties to even), or up in
// f8e8m0fnu, whose only significand bit is the implicit one (ml_dtypes rounds its
// ties away from zero); values either side of the midpoint go to the nearer one.
func TestMinifloatRounding(t *testing.T) {
	for _, s := range floatSpecs {
		t.Run(s.dt.String(), func(t *testing.T) {
			vals := s.nonNegativeFinite()
			for i := 0; i+1 < len(vals); i++ {
				lo, hi := vals[i], vals[i+1]
				s.checkGap(t, lo, hi, 1)
				if !s.unsigned {
					s.checkGap(t, lo, hi, -1)
				}
			}
			s.checkOverflowEdge(t)
			s.checkUnderflow(t, vals)
		})
	}
}

// nonNegativeFinite lists the finite values with the sign bit clear, ascending.
func (s floatSpec) nonNegativeFinite() []float64 {
	var vals []float64
	for b := uint64(0); b < 1<<s.width; b++ {
		if s.isNaN(b) || s.isInf(b) || (!s.unsigned && b>>(s.width-1) == 1) {
			continue
		}
		vals = append(vals, s.value(b))
	}
	sort.Float64s(vals)
	return vals
}

func (s floatSpec) checkGap(t *testing.T, lo, hi, sign float64) {
	enc := func(v float64) uint64 { return MinifloatFromFloat64(s.dt, sign*v) }
	bl, bh := enc(lo), enc(hi) // sign×0 is -0 for sign -1: its own pattern, or +0 in fnuz
	mid := (lo + hi) / 2
	want := bl
	if s.unsigned || bh%2 == 0 {
		want = bh
	}
	name := fmt.Sprintf("%v between %v and %v", sign, lo, hi)
	require.Equal(t, want, enc(mid), "tie "+name)
	require.Equal(t, bl, enc(math.Nextafter(mid, lo)), "below the tie "+name)
	require.Equal(t, bh, enc(math.Nextafter(mid, hi)), "above the tie "+name)
}

// checkOverflowEdge: the next value above max would be max + ulp (ulp, the spacing
// in max's binade); values below max + ulp/2 round to max, the tie goes to max only
// where max's pattern is even (f8e4m3fn's 448 = 1.110b × 2^8), and beyond it the
// value overflows.
func (s floatSpec) checkOverflowEdge(t *testing.T) {
	_, e2 := math.Frexp(s.max)
	ulp := math.Ldexp(1, e2-1-s.mant)
	edge := s.max + ulp/2
	maxBits := MinifloatFromFloat64(s.dt, s.max)
	require.Equal(t, maxBits, MinifloatFromFloat64(s.dt, math.Nextafter(edge, 0)), "just below the overflow edge")
	require.False(t, MinifloatOverflows(s.dt, math.Nextafter(edge, 0)))
	tie := s.overflow
	if maxBits%2 == 0 && !s.unsigned {
		tie = maxBits
	}
	require.Equal(t, tie, MinifloatFromFloat64(s.dt, edge), "at the overflow edge")
	require.Equal(t, s.overflow, MinifloatFromFloat64(s.dt, math.Nextafter(edge, math.Inf(1))), "above the overflow edge")
	require.True(t, MinifloatOverflows(s.dt, math.Nextafter(edge, math.Inf(1))))
	require.Equal(t, s.overflow, MinifloatFromFloat64(s.dt, 1e300), "far beyond")
	if !s.unsigned {
		require.Equal(t, s.negOvf, MinifloatFromFloat64(s.dt, -1e300), "far beyond, negative")
	}
	require.Equal(t, s.overflow, MinifloatFromFloat64(s.dt, math.MaxFloat64))
}

// checkUnderflow: half the smallest subnormal rounds to zero (zero is even), a
// hair more to the smallest subnormal.
func (s floatSpec) checkUnderflow(t *testing.T, vals []float64) {
	if s.unsigned {
		return
	}
	smallest := math.Pow(2, float64(1-s.bias-s.mant))
	require.Equal(t, smallest, vals[1], "smallest subnormal")
	require.Equal(t, uint64(0), MinifloatFromFloat64(s.dt, smallest/2))
	require.Equal(t, s.negZero, MinifloatFromFloat64(s.dt, -smallest/2))
	require.Equal(t, uint64(1), MinifloatFromFloat64(s.dt, math.Nextafter(smallest/2, 1)))
	require.Equal(t, uint64(0), MinifloatFromFloat64(s.dt, math.SmallestNonzeroFloat64))
}

// TestMinifloatKnownValues spot-checks values quoted by the specifications.
func TestMinifloatKnownValues(t *testing.T) {
	cases := []struct {
		dt   DType
		bits uint64
		want float64
	}{
		{F8E4M3FN, 0x7e, 448}, {F8E4M3FN, 0x01, math.Ldexp(1, -9)}, {F8E4M3FN, 0x38, 1},
		{F8E5M2, 0x7b, 57344}, {F8E5M2, 0x01, math.Ldexp(1, -16)}, {F8E5M2, 0x3c, 1},
		{F8E4M3FNUZ, 0x7f, 240}, {F8E4M3FNUZ, 0x40, 1}, {F8E5M2FNUZ, 0x40, 1},
		{F8E4M3B11FNUZ, 0x7f, 30}, {F8E4M3B11FNUZ, 0x58, 1},
		{F8E3M4, 0x30, 1}, {F8E4M3, 0x38, 1}, {F8E4M3, 0x77, 240},
		{F8E8M0FNU, 0x7f, 1}, {F8E8M0FNU, 0x00, math.Ldexp(1, -127)}, {F8E8M0FNU, 0xfe, math.Ldexp(1, 127)},
		{F6E2M3FN, 0x1f, 7.5}, {F6E2M3FN, 0x01, 0.125}, {F6E2M3FN, 0x3f, -7.5},
		{F6E3M2FN, 0x1f, 28}, {F6E3M2FN, 0x01, 0.0625},
		{F4E2M1FN, 0x7, 6}, {F4E2M1FN, 0x1, 0.5}, {F4E2M1FN, 0x5, 3}, {F4E2M1FN, 0xf, -6},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, MinifloatToFloat64(c.dt, c.bits), "%v %#x", c.dt, c.bits)
	}
	assert.True(t, math.IsNaN(MinifloatToFloat64(F8E5M2FNUZ, 0x80)))
	assert.Equal(t, uint64(0), MinifloatFromFloat64(F8E4M3FNUZ, math.Copysign(0, -1)), "fnuz has no -0")
	assert.True(t, math.IsNaN(MinifloatToFloat64(S8, 1)), "not a low-precision float")
}
