package hlo

import "math"

// Float16 and BFloat16 are the bit patterns of IEEE binary16 and bfloat16 values.
// Conversions from float32 round to nearest even, as XLA's do; NaN stays NaN.
type (
	Float16  uint16
	BFloat16 uint16
)

// F16FromFloat32 rounds f to the nearest binary16 value (ties to even).
func F16FromFloat32(f float32) Float16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23) & 0xff
	mant := bits & 0x7fffff
	switch {
	case exp == 0xff && mant != 0: // NaN: keep it quiet and non-zero
		return Float16(sign | 0x7e00 | uint16(mant>>13))
	case exp == 0xff:
		return Float16(sign | 0x7c00)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return Float16(sign | 0x7c00) // overflow → ±Inf
	}
	if e <= 0 {
		return Float16(sign | subnormalF16(mant|0x800000, uint32(14-e)))
	}
	half := uint32(e)<<10 | mant>>13
	return Float16(sign | uint16(roundEven(half, mant, 13)))
}

// subnormalF16 shifts a 24-bit significand right by 14-e bits with ties-to-even.
func subnormalF16(sig uint32, shift uint32) uint16 {
	if shift > 24 {
		return 0
	}
	return uint16(roundEven(sig>>shift, sig, shift))
}

// roundEven rounds truncated (= full >> shift) using the dropped low bits of full.
// A carry out of the mantissa correctly bumps the exponent.
func roundEven(truncated, full, shift uint32) uint32 {
	rem := full & (1<<shift - 1)
	halfway := uint32(1) << (shift - 1)
	if rem > halfway || (rem == halfway && truncated&1 == 1) {
		truncated++
	}
	return truncated
}

// Float32 widens exactly.
func (h Float16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0 && mant == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = mant × 2^-24
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// BF16FromFloat32 rounds f to the nearest bfloat16 value (ties to even).
func BF16FromFloat32(f float32) BFloat16 {
	bits := math.Float32bits(f)
	if bits&0x7fffffff > 0x7f800000 { // NaN
		return BFloat16(bits>>16 | 0x40)
	}
	return BFloat16(roundEven(bits>>16, bits, 16))
}

// Float32 widens exactly.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }
