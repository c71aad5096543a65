package cpuref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/internal/bigref"
)

// trigArgs are arguments over the whole finite range: random magnitudes, the
// doubles nearest multiples of π/2 (where a three-double π loses bits), and the
// largest floats (math/big reduction).
func trigArgs() []float64 {
	r := rand.New(rand.NewPCG(3, 5))
	var xs []float64
	for range 3000 {
		x := math.Ldexp(1+r.Float64(), r.IntN(2100)-1074)
		if r.IntN(2) == 0 {
			x = -x
		}
		if !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
	}
	for k := 1.0; k < 1e9; k = k*3 + 1 {
		m := k * math.Pi / 2
		xs = append(xs, m, math.Nextafter(m, 0), math.Nextafter(m, math.Inf(1)), -m)
	}
	return append(xs, math.MaxFloat64, -math.MaxFloat64, 0x1p28, math.Nextafter(0x1p28, 0), 6.3e306, 5e-324, 1e-8)
}

// TestSinCosAgainstBigref: sine and cosine are correctly rounded (no ties met)
// everywhere; math.Sin(float64(π)) was 7 ulp off and 25 at MaxFloat64.
func TestSinCosAgainstBigref(t *testing.T) {
	for _, x := range trigArgs() {
		s, c := bigref.SinCos(x)
		require.Equal(t, s, sin(x), "sin(%v)", x)
		require.Equal(t, c, cos(x), "cos(%v)", x)
	}
	assert.Equal(t, 1.2246467991473532e-16, sin(math.Pi), "sin(float64(π)) = π − float64(π)")
}

// TestTanAgainstBigref: tangent within 2 ulp of the quotient of the correctly
// rounded sine and cosine (itself within 1.5 ulp of tan).
func TestTanAgainstBigref(t *testing.T) {
	for _, x := range trigArgs() {
		s, c := bigref.SinCos(x)
		want := s / c
		assert.LessOrEqual(t, ulpDistance(tan(x), want), 2.0, "tan(%v) = %v, want ≈ %v", x, tan(x), want)
	}
	x := 6.6e-8 // math.Tan returned x itself here, 7 ulp off
	assert.Equal(t, x+x*x*x/3, tan(x), "tan x = x + x³/3 (+ 2x⁵/15 < 2^-100·x) near 0")
}

// TestTrigSpecials: signed zeros, infinities and NaN as C defines them.
func TestTrigSpecials(t *testing.T) {
	negZero := math.Copysign(0, -1)
	assert.True(t, math.Signbit(sin(negZero)) && sin(negZero) == 0, "sin(−0) = −0")
	assert.True(t, math.Signbit(tan(negZero)) && tan(negZero) == 0, "tan(−0) = −0")
	assert.Equal(t, 1.0, cos(negZero))
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		assert.True(t, math.IsNaN(sin(x)) && math.IsNaN(cos(x)) && math.IsNaN(tan(x)), "trig(%v) is NaN", x)
	}
}
