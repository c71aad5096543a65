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
	for _, tf := range []trigFormat{trigF32, trigF64} {
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
