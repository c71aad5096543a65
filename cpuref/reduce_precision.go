package cpuref

import (
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// evalReducePrecision rounds each element to the format of exponent_bits and
// mantissa_bits (hlo.ReducePrecisionBits): ties to even, ±inf beyond its range, ±0
// at or below its smallest normal exponent; NaN stays NaN.
func evalReducePrecision(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	dt := x.DType()
	srcE, srcM := hlo.FloatFormat(dt)
	out := hlo.NewLiteral(x.Shape())
	for i := range x.NumElements() {
		bits := x.Bits(i)
		if !math.IsNaN(toFloat(dt, bits)) {
			bits = hlo.ReducePrecisionBits(bits, int64(dt.Bits()), srcE, srcM, in.Attrs.ExponentBits, in.Attrs.MantissaBits)
		}
		out.SetBits(i, bits)
	}
	return out, nil
}
