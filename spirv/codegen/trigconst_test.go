package codegen

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/internal/bigref"
)

func TestTwoOverPiTable(t *testing.T) {
	c := trigConstants()
	require.Len(t, c.twoOverPi, trigTableWords)
	for i := range trigPadWords {
		assert.Zero(t, c.twoOverPi[i], "pad word %d", i)
	}
	// The first bits of 2/π = 0.A2F9836E 4E441529 FC2757D1… (hex).
	assert.Equal(t, []uint32{0xA2F9836E, 0x4E441529, 0xFC2757D1}, c.twoOverPi[trigPadWords:trigPadWords+3])
	// Every word against 2/π from an independent computation of π (Gauss–Legendre).
	const prec = piPrec + 64
	twoOverPi := new(big.Float).SetPrec(prec).Quo(big.NewFloat(2), bigref.Pi(prec))
	for i := trigPadWords; i < trigTableWords; i++ {
		twoOverPi.Mul(twoOverPi, big.NewFloat(1<<32))
		w, _ := twoOverPi.Uint64()
		require.Equal(t, uint32(w), c.twoOverPi[i], "word %d of 2/π", i-trigPadWords)
		twoOverPi.Sub(twoOverPi, new(big.Float).SetUint64(w))
	}
	// π/2 in 64-bit fixed point: 1.921FB54442D18469…·2^62 = 0x6487ED5110B4611A.
	assert.Equal(t, [2]uint32{0x6487ED51, 0x10B4611A}, c.pio2Fixed)
}

func TestPio2Parts(t *testing.T) {
	for _, tf := range []trigFormat{trigF64} {
		bits := uint(tf.mant) - tf.fastBits
		parts := pio2Parts(tf.parts, bits)
		require.Len(t, parts, tf.parts+1)
		sum := new(big.Float).SetPrec(piPrec)
		for i, p := range parts {
			if i < tf.parts {
				// At most `bits` significant bits, so n·part is exact for n < 2^fastBits.
				m, _ := math.Frexp(p)
				assert.Equal(t, m, math.Ldexp(math.Trunc(math.Ldexp(m, int(bits))), -int(bits)), "part %d of %v", i, parts)
			}
			sum.Add(sum, new(big.Float).SetFloat64(p))
		}
		diff := new(big.Float).Sub(sum, new(big.Float).Quo(bigref.Pi(piPrec), big.NewFloat(2)))
		d, _ := diff.Float64()
		// The sum carries π/2 to parts·bits bits plus the rounded remainder's 53.
		assert.Less(t, math.Abs(d), math.Ldexp(1, -int(bits)*tf.parts-50), "π/2 − Σ parts")
	}
}

// The short path's parts: C1 and C2 end at bits 2^-(mant-1-fastBits) and 2^-mant,
// C3 has mant−fastBits bits, each times any n < 2^fastBits exact in f32; C4 is an
// f32; the sum is π/2 to within C4's rounding.
func TestPio2ShortParts(t *testing.T) {
	tf := trigF32
	c := pio2ShortParts(tf.mant, tf.fastBits)
	lsbs := []int{-(tf.mant - 1 - int(tf.fastBits)), -tf.mant}
	for i, lsb := range lsbs {
		assert.Equal(t, c[i], math.Ldexp(math.Trunc(math.Ldexp(c[i], -lsb)), lsb), "C%d = %x ends at 2^%d", i+1, c[i], lsb)
	}
	sum := new(big.Float).SetPrec(piPrec)
	for i, p := range c {
		require.Equal(t, p, float64(float32(p)), "C%d = %x is an f32", i+1, p)
		if i < 3 {
			// n·Ci is exact for every n < 2^fastBits: n·Ci rounded to f32 equals it.
			for _, n := range []float64{1, 3, 0x1p11 - 1, 0x1p11 - 3, 1303, 977} {
				assert.Equal(t, n*p, float64(float32(n*p)), "%v·C%d", n, i+1)
			}
			m, _ := math.Frexp(p)
			bits := tf.mant - int(tf.fastBits)
			assert.Equal(t, m, math.Ldexp(math.Trunc(math.Ldexp(m, bits)), -bits), "C%d = %x has at most %d bits", i+1, p, bits)
		}
		sum.Add(sum, new(big.Float).SetFloat64(p))
	}
	diff := new(big.Float).Sub(sum, new(big.Float).Quo(bigref.Pi(piPrec), big.NewFloat(2)))
	d, _ := diff.Float64()
	assert.Less(t, math.Abs(d), 0x1p-61, "π/2 − Σ parts")
	assert.Equal(t, float32(0x1.921p+00), float32(c[0]), "C1: π/2 = 0x1.921fb54…")
}
