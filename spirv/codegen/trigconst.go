package codegen

import (
	"math"
	"math/big"
	"sync"
)

// Constants of the trigonometric argument reduction (trig.go), derived from π at
// first use with math/big rather than pasted from a table: π by Machin's formula to
// piPrec bits, then the bits of 2/π and the splits of π/2.

// piPrec bits cover the largest f64 exponent's window of 2/π (trigPadWords +
// ~31 words + trigWindowWords + 1) with room to spare.
const piPrec = 1600

// trigPadWords zero words stand before 2/π's bits, so that the window of an
// argument as small as 2^-64·2^mantissa-bits starts at a valid word.
const trigPadWords = 2

// trigTableWords is how many words twoOverPiWords holds: enough for an f64 of the
// largest exponent (971 above its integer significand) plus a window and one more.
const trigTableWords = trigPadWords + (971+31)/32 + 1 + maxTrigWindowWords + 1

// machinPi is π = 16·atan(1/5) - 4·atan(1/239) to prec bits.
func machinPi(prec uint) *big.Float {
	pi := new(big.Float).SetPrec(prec).Mul(atanInv(5, prec), big.NewFloat(16))
	return pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(atanInv(239, prec), big.NewFloat(4)))
}

// atanInv is atan(1/n) = Σ (-1)^k / ((2k+1)·n^(2k+1)), summed until the terms
// vanish at prec bits.
func atanInv(n int64, prec uint) *big.Float {
	sum := new(big.Float).SetPrec(prec)
	pow := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1), new(big.Float).SetInt64(n)) // 1/n^(2k+1)
	n2 := new(big.Float).SetPrec(prec).SetInt64(n * n)
	limit := new(big.Float).SetMantExp(big.NewFloat(1), -int(prec)-8)
	for k := int64(0); pow.Cmp(limit) > 0; k++ {
		term := new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetInt64(2*k+1))
		if k%2 == 0 {
			sum.Add(sum, term)
		} else {
			sum.Sub(sum, term)
		}
		pow.Quo(pow, n2)
	}
	return sum
}

// trigConsts are the derived constants.
type trigConsts struct {
	// twoOverPi holds the bits of 2/π after the binary point, 32 to a word, most
	// significant first, after trigPadWords zero words.
	twoOverPi []uint32
	// pio2Fixed is ⌊π/2·2^62⌋ as two words, high first: π/2 in 64-bit fixed point.
	pio2Fixed [2]uint32
	pio2      *big.Float
}

var trigConstants = sync.OnceValue(func() trigConsts {
	pi := machinPi(piPrec)
	var c trigConsts
	c.pio2 = new(big.Float).SetPrec(piPrec).Quo(pi, big.NewFloat(2))
	twoOverPi := new(big.Float).SetPrec(piPrec).Quo(big.NewFloat(2), pi)
	c.twoOverPi = make([]uint32, trigTableWords)
	frac := twoOverPi
	for i := trigPadWords; i < trigTableWords; i++ {
		frac.Mul(frac, big.NewFloat(1<<32))
		w, _ := frac.Uint64()
		c.twoOverPi[i] = uint32(w)
		frac.Sub(frac, new(big.Float).SetUint64(w))
	}
	fixed, _ := new(big.Float).SetMantExp(c.pio2, 62).Int(nil)
	c.pio2Fixed = [2]uint32{uint32(fixed.Uint64() >> 32), uint32(fixed.Uint64())}
	return c
})

// pio2Parts splits π/2 into n parts of bits significant bits each (so that an
// integer of up to mantissa-bits − bits bits times a part is exact), followed by
// the remainder rounded to a float64; each part is representable in the target type
// when bits and the remainder's rounding suit it (the caller rounds the last part).
func pio2Parts(n int, bits uint) []float64 {
	rest := new(big.Float).SetPrec(piPrec).Set(trigConstants().pio2)
	parts := make([]float64, 0, n+1)
	for range n {
		e := rest.MantExp(nil) // rest = mant·2^e, mant in [0.5, 1)
		parts = append(parts, takeBitsAbove(rest, e-int(bits)))
	}
	last, _ := rest.Float64()
	return append(parts, last)
}

// pio2ShortParts splits π/2 for the short path (trigReduceShort) of a float with
// mant significand bits and n < 2^bits: C1 down to bit 2^-(mant-1-bits), C2 down
// to 2^-mant, C3 down to 2^-(2·mant-bits), and C4 the rest rounded to mant bits.
func pio2ShortParts(mant int, bits uint) [4]float64 {
	rest := new(big.Float).SetPrec(piPrec).Set(trigConstants().pio2)
	var c [4]float64
	c[0] = takeBitsAbove(rest, -(mant - 1 - int(bits)))
	c[1] = takeBitsAbove(rest, -mant)
	c[2] = takeBitsAbove(rest, -(2*mant - int(bits)))
	c[3], _ = new(big.Float).SetPrec(uint(mant)).Set(rest).Float64()
	return c
}

// takeBitsAbove returns rest truncated to its bits of weight 2^lsb and above, and
// subtracts them from rest.
func takeBitsAbove(rest *big.Float, lsb int) float64 {
	i, _ := new(big.Float).SetMantExp(rest, -lsb).Int(nil)
	p, _ := new(big.Float).SetMantExp(new(big.Float).SetInt(i), lsb).Float64()
	rest.Sub(rest, new(big.Float).SetFloat64(p))
	return p
}

// taylorSinCos are the Taylor coefficients of sin(r)/r - 1 and cos(r) - 1 in z = r²:
// sin: -1/3!, 1/5!, …; cos: -1/2!, 1/4!, ….
func taylorSinCos(terms int) (sin, cos []float64) {
	for i := 1; i <= terms; i++ {
		sign := math.Pow(-1, float64(i))
		sin = append(sin, sign/factorial(2*i+1))
		cos = append(cos, sign/factorial(2*i))
	}
	return sin, cos
}
