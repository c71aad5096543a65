package cpuref

import (
	"math"
	"testing"
)

// reduce-precision by hand: f32 to bf16's format (8, 7) rounds ties to even at 2^-7
// steps; to f16's (5, 10) it overflows past 65504 (65520 is the tie that rounds up)
// and flushes below 2^-14; NaN, ±inf and -0 pass.
func TestReducePrecisionByHand(t *testing.T) {
	nan32, inf32, negZ := float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
	x := vec(float32(1+1.0/256), 1+3.0/256, 1+1.0/512, -(1 + 5.0/256), nan32, -inf32, negZ)
	out := evalText(t, `HloModule rp
ENTRY e {
  x = f32[7] parameter(0)
  ROOT r = f32[7] reduce-precision(x), exponent_bits=8, mantissa_bits=7
}`, x)
	assertLit(t, vec(float32(1), 1+4.0/256, 1, -(1+4.0/256), nan32, -inf32, negZ), out)

	y := vec(float32(65504), 65519, 65520, -70000, 6.103515625e-05, 6.1e-05, -1e-6, 1.0009765625)
	out = evalText(t, `HloModule rp
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] reduce-precision(x), exponent_bits=5, mantissa_bits=10
}`, y)
	assertLit(t, vec(float32(65504), 65504, inf32, -inf32, 6.103515625e-05, 0, negZ, 1.0009765625), out)
}
