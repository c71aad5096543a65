package hlo

import "fmt"

// reduce-precision(x), exponent_bits=e, mantissa_bits=m rounds each element of a
// float array to the nearest value of the format with e exponent and m mantissa
// bits (ties to even), as XLA defines it: values beyond that format's largest
// become ±inf, values at or below its smallest normal exponent become ±0 (its
// subnormals flush), NaN stays NaN. The result keeps x's type.

func init() {
	shapeRules[OpReducePrecision] = inferReducePrecision
	attrCodecs["exponent_bits"] = intCodec(func(a *Attributes) *int64 { return &a.ExponentBits }, anyInt)
	attrCodecs["mantissa_bits"] = intCodec(func(a *Attributes) *int64 { return &a.MantissaBits }, anyInt)
	opAttrs[OpReducePrecision] = []attrUse{req("exponent_bits"), req("mantissa_bits")}
}

func inferReducePrecision(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	switch {
	case !x.DType.IsFloat():
		return Shape{}, fmt.Errorf("operand %v is not floating-point", x)
	case a.attrs.ExponentBits < 1 || a.attrs.ExponentBits > 64:
		return Shape{}, fmt.Errorf("exponent_bits=%d is not in [1, 64]", a.attrs.ExponentBits)
	case a.attrs.MantissaBits < 0 || a.attrs.MantissaBits > 64:
		return Shape{}, fmt.Errorf("mantissa_bits=%d is not in [0, 64]", a.attrs.MantissaBits)
	}
	return x.Clone(), nil
}

// ReducePrecision adds reduce-precision(x), exponent_bits=e, mantissa_bits=m.
func (b *Builder) ReducePrecision(x *Instruction, e, m int64) *Instruction {
	return b.emit(opSpec{op: OpReducePrecision, operands: ins(x), attrs: Attributes{ExponentBits: e, MantissaBits: m}})
}

// FloatFormat is a float type's exponent and stored mantissa widths.
func FloatFormat(dt DType) (exponent, mantissa int64) {
	switch dt {
	case F16:
		return 5, 10
	case BF16:
		return 8, 7
	case F32:
		return 8, 23
	}
	return 11, 52
}

// ReducePrecisionBits is reduce-precision on the encoding of one element of a float
// type whose format is (srcE, srcM), of width w bits: the definition the expansion
// below follows op for op, and cpuref evaluates.
func ReducePrecisionBits(bits uint64, w, srcE, srcM, e, m int64) uint64 {
	if m < srcM {
		shift := uint(srcM - m)
		last := uint64(1) << shift
		bits = (bits + (bits>>shift)&1 + last>>1 - 1) &^ (last - 1)
	}
	if e < srcE {
		expMask := (uint64(1)<<srcE - 1) << srcM
		bias, reduced := int64(1)<<(srcE-1)-1, int64(1)<<(e-1)-1
		exp, sign := bits&expMask, bits&(uint64(1)<<(w-1))
		switch {
		case exp > uint64(bias+reduced)<<srcM:
			bits = sign | expMask
		case exp <= uint64(bias-reduced)<<srcM:
			bits = sign
		}
	}
	return bits
}

func decomposeReducePrecision(in *Instruction) (*Computation, error) {
	b, args := operandParams(in)
	x := args[0]
	dt, dims := x.Shape.DType, x.Shape.Dims
	w := int64(dt.Bits())
	ut := map[int64]DType{16: U16, 32: U32, 64: U64}[w]
	srcE, srcM := FloatFormat(dt)
	e, m := in.Attrs.ExponentBits, in.Attrs.MantissaBits
	c := func(v uint64) *Instruction { return b.BroadcastScalar(b.Constant(uintLiteral(ut, v)), dims...) }
	bits := b.BitcastConvert(x, ut)
	if m < srcM {
		shift := uint64(srcM - m)
		last := uint64(1) << shift
		odd := b.And(b.ShiftRightLogical(bits, c(shift)), c(1))
		bits = b.And(b.Add(bits, b.Add(odd, c(last>>1-1))), c(^(last - 1)))
	}
	if e < srcE {
		expMask := (uint64(1)<<srcE - 1) << srcM
		bias, reduced := int64(1)<<(srcE-1)-1, int64(1)<<(e-1)-1
		exp, sign := b.And(bits, c(expMask)), b.And(bits, c(uint64(1)<<(w-1)))
		over := b.Compare(exp, c(uint64(bias+reduced)<<srcM), CmpGT)
		under := b.Compare(exp, c(uint64(bias-reduced)<<srcM), CmpLE)
		bits = b.Select(over, b.Or(sign, c(expMask)), b.Select(under, sign, bits))
	}
	y := b.BitcastConvert(bits, dt)
	return b.BuildComputation(b.Select(b.Compare(x, x, CmpNE), x, y)) // NaN stays NaN
}

// uintLiteral is a scalar of unsigned type ut holding v (masks beyond 2^53 too).
func uintLiteral(ut DType, v uint64) *Literal {
	switch ut {
	case U16:
		return ScalarLiteral(uint16(v))
	case U32:
		return ScalarLiteral(uint32(v))
	}
	return ScalarLiteral(v)
}
