package cpuref

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/internal/bigref"
)

// ulpDistance is |a − b| in units of b's last place (b normal or subnormal).
func ulpDistance(a, b float64) float64 {
	b = math.Abs(b)
	return math.Abs(math.Abs(a)-b) / (math.Nextafter(b, math.Inf(1)) - b)
}

// TestPowAgainstBigref sweeps x^y over results spanning the whole range, large
// exponents of x near 1 included (where Go's math.Pow was up to 146492 ulp off),
// against math/big: correctly rounded everywhere (the sweep meets no ties), subnormal
// results included (rounded once: scaling the double-double's high part alone was
// one ulp off there).
func TestPowAgainstBigref(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	worst := 0.0
	for i := range 4000 {
		x := math.Exp(r.Float64()*40 - 20)
		if i%4 == 0 {
			x = 1 + (r.Float64()-0.5)*1e-2 // large exponents
		}
		y := (r.Float64()*2 - 1) * 740 / math.Abs(math.Log(x))
		if i%3 == 0 {
			y = math.Round(y)
		}
		want := bigref.Pow(x, y)
		got := pow(x, y)
		if math.IsInf(want, 0) || want == 0 {
			require.Equal(t, want, got, "pow(%v, %v)", x, y)
			continue
		}
		d := ulpDistance(got, want)
		if d > worst {
			worst = d
			t.Logf("pow(%v, %v) = %v, want %v: %.3f ulp", x, y, got, want, d)
		}
		require.Zero(t, d, "pow(%v, %v) = %v, want %v", x, y, got, want)
	}
	t.Logf("worst: %.3f ulp", worst)
}

// TestPowCases: cases math.Pow got wrong (regressions) and C's special values.
func TestPowCases(t *testing.T) {
	for _, c := range []struct{ x, y float64 }{
		{1.0011707758735193, 410939.1993736013}, // math.Pow: 146492 ulp off
		{1.0593674095535361, 8048},              // integer exponent: 2562 ulp
		{1.0479167048061593, -9126},
		{1e4, 10},
		{5e-324, 0.5}, // subnormal x: 2^-537
		{0x1p-1074, 0.25},
		{2.5e-308, 1.5}, // subnormal result
	} {
		want := bigref.Pow(c.x, c.y)
		assert.Equal(t, want, pow(c.x, c.y), "pow(%v, %v)", c.x, c.y)
	}
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ x, y, want float64 }{
		{-2, 3, -8}, {-2, -3, -0.125}, {-2, 4, 16}, // negative x, integer y
		{-1e10, 31, -inf}, // −1e310 overflows
		{0, -1, inf}, {math.Copysign(0, -1), -3, -inf}, {nan, 0, 1}, {1, nan, 1}, {-1, inf, 1},
		{2, 1024, inf}, {1.5, 1e308, inf}, {1.5, -1e308, 0}, {0.5, math.MaxFloat64, 0}, // y·ln x overflows
		{2, -1075, 0}, {-2, 1025, -inf}, {0.5, -1024, inf},
	} {
		assert.Equal(t, c.want, pow(c.x, c.y), "pow(%v, %v)", c.x, c.y)
	}
	assert.True(t, math.IsNaN(pow(-2, 0.5)), "pow(-2, 0.5) is NaN")
	assert.True(t, math.IsNaN(pow(nan, 1)), "pow(NaN, 1) is NaN")
}
