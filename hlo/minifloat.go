package hlo

import "math"

// The 8-, 6- and 4-bit floats, as ml_dtypes defines them (XLA's reference for these
// types). Each is a sign bit (except f8e8m0fnu), an exponent field and a mantissa
// field; they differ in bias and in how NaN and infinity are encoded:
//
//	type            exp mant bias  inf  NaN                 -0   max finite
//	f8e5m2           5   2    15   yes  exp=11111, mant≠0   yes  57344
//	f8e4m3           4   3     7   yes  exp=1111, mant≠0    yes  240
//	f8e3m4           3   4     3   yes  exp=111, mant≠0     yes  15.5
//	f8e4m3fn         4   3     7   no   S.1111.111          yes  448
//	f8e4m3fnuz       4   3     8   no   0x80 only           no   240
//	f8e5m2fnuz       5   2    16   no   0x80 only           no   57344
//	f8e4m3b11fnuz    4   3    11   no   0x80 only           no   30
//	f8e8m0fnu        8   0   127   no   0xff (no sign, no zero, no subnormals)  2^127
//	f6e2m3fn         2   3     1   no   none                yes  7.5
//	f6e3m2fn         3   2     3   no   none                yes  28
//	f4e2m1fn         2   1     1   no   none                yes  6
//
// Conversion from a wider float rounds to nearest, ties to even, once from the
// float64 value, and does not saturate (ml_dtypes' default cast, which XLA's convert
// follows): a magnitude that rounds above the largest finite value becomes what
// infinity becomes. That is ±inf where the type has it, NaN in the fn and fnuz
// types, and ±max in the f6/f4 types, which have neither (the MX specification
// saturates them). NaN becomes the type's NaN; the f6/f4 types have none, and
// follow ml_dtypes: +NaN becomes the -0 pattern and -NaN +0. Zero becomes +0 in the
// fnuz types (no -0), and NaN in f8e8m0fnu (no zero), as do negative values there.
// Values below f8e8m0fnu's smallest, 2^-127, round to it.

// specials says how a format encodes NaN and infinity.
type specials uint8

const (
	ieeeSpecials specials = iota // exponent all ones: mantissa 0 is ±inf, else NaN
	fnSpecials                   // no inf; NaN is S.1…1 (all magnitude bits set)
	fnuzSpecials                 // no inf, no -0; NaN is the -0 pattern, 0x80
	noSpecials                   // no inf, no NaN: every pattern is finite
	e8m0Specials                 // unsigned powers of two; 0xff is NaN
)

// minifloat is one low-precision float format.
type minifloat struct {
	exp, mant int // field widths in bits
	bias      int
	specials  specials
}

var minifloats = map[DType]minifloat{
	F8E4M3FN:      {4, 3, 7, fnSpecials},
	F8E5M2:        {5, 2, 15, ieeeSpecials},
	F8E4M3FNUZ:    {4, 3, 8, fnuzSpecials},
	F8E5M2FNUZ:    {5, 2, 16, fnuzSpecials},
	F8E4M3B11FNUZ: {4, 3, 11, fnuzSpecials},
	F8E3M4:        {3, 4, 3, ieeeSpecials},
	F8E4M3:        {4, 3, 7, ieeeSpecials},
	F8E8M0FNU:     {8, 0, 127, e8m0Specials},
	F6E2M3FN:      {2, 3, 1, noSpecials},
	F6E3M2FN:      {3, 2, 3, noSpecials},
	F4E2M1FN:      {2, 1, 1, noSpecials},
}

// MinifloatToFloat64 decodes the raw bits of a low-precision float exactly. It
// returns NaN for a dtype that is not one (see IsLowPrecisionFloat).
func MinifloatToFloat64(dt DType, bits uint64) float64 {
	f, ok := minifloats[dt]
	if !ok {
		return math.NaN()
	}
	return f.decode(bits)
}

// MinifloatFromFloat64 rounds v to dt's raw bits (see the rules above). It returns
// 0 for a dtype that is not a low-precision float.
func MinifloatFromFloat64(dt DType, v float64) uint64 {
	b, _ := minifloats[dt].encodeChecked(v)
	return b
}

// MinifloatOverflows reports a finite v whose magnitude rounds beyond dt's largest
// finite value (the text parser rejects such constants).
func MinifloatOverflows(dt DType, v float64) bool {
	_, over := minifloats[dt].encodeChecked(v)
	return over
}

func (f minifloat) signed() bool { return f.specials != e8m0Specials }
func (f minifloat) magBits() int { return f.exp + f.mant }
func (f minifloat) signBit() uint64 {
	if !f.signed() {
		return 0
	}
	return 1 << f.magBits()
}
func (f minifloat) magMask() uint64 { return 1<<f.magBits() - 1 }
func (f minifloat) expOnes() uint64 { return 1<<f.exp - 1 }

// maxBits is the magnitude bits of the largest finite value.
func (f minifloat) maxBits() uint64 {
	switch f.specials {
	case ieeeSpecials:
		return (f.expOnes()-1)<<f.mant | (1<<f.mant - 1)
	case fnSpecials, e8m0Specials:
		return f.magMask() - 1
	}
	return f.magMask()
}

func (f minifloat) isNaN(b uint64) bool {
	mag := b & f.magMask()
	switch f.specials {
	case ieeeSpecials:
		return mag>>f.mant == f.expOnes() && mag&(1<<f.mant-1) != 0
	case fnSpecials:
		return mag == f.magMask()
	case fnuzSpecials:
		return b&(f.signBit()|f.magMask()) == f.signBit()
	case e8m0Specials:
		return mag == f.magMask()
	}
	return false
}

func (f minifloat) decode(b uint64) float64 {
	neg := b&f.signBit() != 0
	if f.isNaN(b) {
		return math.Copysign(math.NaN(), signOf(neg))
	}
	mag := b & f.magMask()
	e, m := int(mag>>f.mant), mag&(1<<f.mant-1)
	var v float64
	switch {
	case f.specials == ieeeSpecials && uint64(e) == f.expOnes():
		v = math.Inf(1)
	case f.specials == e8m0Specials:
		v = math.Ldexp(1, e-f.bias)
	case e == 0: // subnormal: m × 2^(1-bias-mant)
		v = math.Ldexp(float64(m), 1-f.bias-f.mant)
	default:
		v = math.Ldexp(float64(m|1<<f.mant), e-f.bias-f.mant)
	}
	return math.Copysign(v, signOf(neg))
}

func signOf(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}

// encodeChecked rounds v and reports whether a finite v overflowed.
func (f minifloat) encodeChecked(v float64) (uint64, bool) {
	neg := math.Signbit(v)
	switch {
	case math.IsNaN(v):
		return f.nanBits(neg), false
	case math.IsInf(v, 0):
		return f.infBits(neg), false
	case v == 0:
		return f.zeroBits(neg), false
	case neg && !f.signed():
		return f.nanBits(false), false
	}
	mag, over := f.roundMagnitude(math.Abs(v))
	if over {
		return f.infBits(neg), true
	}
	return f.withSign(mag, neg), false
}

// roundMagnitude rounds a finite a > 0 to nearest even: the significand r of a in
// units of the quantum at a's exponent (or at the smallest normal exponent, for
// subnormals) is an integer; the encoding is (biased exponent - 1) << mant + r, so
// that r's implicit leading bit, and any carry out of rounding, adds to the
// exponent field.
func (f minifloat) roundMagnitude(a float64) (uint64, bool) {
	_, e2 := math.Frexp(a)
	e := e2 - 1 // a = 1.x × 2^e
	emin := 1 - f.bias
	if f.specials == e8m0Specials {
		emin = -f.bias // 0x00 is the normal 2^-127
	}
	q := max(e, emin)
	r := math.RoundToEven(math.Ldexp(a, f.mant-q))
	if r == 0 && f.specials == e8m0Specials {
		r = 1 // no zero: the smallest value
	}
	bits := int64(q+f.bias-1)<<f.mant + int64(r)
	if bits > int64(f.maxBits()) {
		return 0, true
	}
	return uint64(bits), false
}

func (f minifloat) withSign(mag uint64, neg bool) uint64 {
	if !neg || (mag == 0 && f.specials == fnuzSpecials) {
		return mag
	}
	return mag | f.signBit()
}

func (f minifloat) zeroBits(neg bool) uint64 {
	if f.specials == e8m0Specials {
		return f.nanBits(false)
	}
	return f.withSign(0, neg)
}

func (f minifloat) nanBits(neg bool) uint64 {
	switch f.specials {
	case ieeeSpecials: // quiet: the mantissa's top bit set
		return f.withSign(f.expOnes()<<f.mant|1<<(f.mant-1), neg)
	case fnSpecials:
		return f.withSign(f.magMask(), neg)
	case fnuzSpecials:
		return f.signBit()
	case noSpecials: // ml_dtypes' quiet_NaN is the -0 pattern, and negating flips it
		if neg {
			return 0
		}
		return f.signBit()
	}
	return f.magMask()
}

// infBits is what ±inf, and a finite value that overflows, become.
func (f minifloat) infBits(neg bool) uint64 {
	switch f.specials {
	case ieeeSpecials:
		return f.withSign(f.expOnes()<<f.mant, neg)
	case noSpecials:
		return f.withSign(f.maxBits(), neg)
	}
	return f.nanBits(neg)
}
