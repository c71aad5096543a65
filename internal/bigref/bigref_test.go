package bigref

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPi(t *testing.T) {
	// π = 3.243F6A8885A308D313198A2E… in hex, and math.Pi is its float64 rounding.
	p := Pi(200)
	f, _ := p.Float64()
	assert.Equal(t, math.Pi, f)
	frac := new(big.Float).SetPrec(200).Sub(p, big.NewFloat(3))
	digits, _ := frac.Mul(frac, new(big.Float).SetMantExp(big.NewFloat(1), 4*24)).Int(nil)
	assert.Equal(t, "243f6a8885a308d313198a2e", digits.Text(16))
}

func TestSinCos(t *testing.T) {
	// Known values: sin(π/6) = 1/2; x = float64(π): sin = π − x = 1.2246467991473532e-16;
	// the classic sin(1e22) = −0.8522008497671888…
	s, c := SinCos(math.Pi / 6)
	assert.InDelta(t, 0.5, s, 1e-16)
	assert.InDelta(t, math.Sqrt(3)/2, c, 2e-16)
	s, c = SinCos(math.Pi)
	assert.Equal(t, 1.2246467991473532e-16, s)
	assert.Equal(t, -1.0, c)
	s, _ = SinCos(1e22)
	assert.Equal(t, -0.8522008497671888, s)
	s, c = SinCos(-1e22)
	assert.Equal(t, 0.8522008497671888, s)
	assert.InDelta(t, 1, s*s+c*c, 1e-15)
	// Tiny arguments: sin x = x and cos x = 1 once x³/6 and x²/2 are below half an ulp.
	for _, x := range []float64{1.804401512701734e-149, -5e-324, 1e-9} {
		s, c = SinCos(x)
		assert.Equal(t, x, s, "sin(%v)", x)
		assert.Equal(t, 1.0, c, "cos(%v)", x)
	}
}

// Pow against values known exactly or from the definition: powers of two,
// integer powers, square roots, and 10^22 (the largest exact power of ten).
func TestPow(t *testing.T) {
	for _, c := range []struct{ x, y, want float64 }{
		{2, 10, 1024}, {2, -1074, 0x1p-1074}, {2, -1075, 0}, {2, 1024, math.Inf(1)},
		{10, 22, 1e22}, {3, 5, 243}, {4, 0.5, 2}, {0x1p-1074, 0.5, 0x1p-537},
		{2, 0.5, math.Sqrt2}, {1e4, 10, 1e40}, {math.E, 1, math.E},
	} {
		if got := Pow(c.x, c.y); got != c.want {
			t.Errorf("Pow(%g, %g) = %g, want %g", c.x, c.y, got, c.want)
		}
	}
}
