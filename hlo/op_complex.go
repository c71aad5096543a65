package hlo

import "fmt"

// Complex numbers (c64, c128). complex(re, im) joins two real arrays of one type,
// f32 or f64, into c64 or c128; real and imag take the parts apart again (of a real
// operand, XLA's rule: the operand itself and zeros). abs of a complex number is
// its modulus, a real number; every other complex elementwise op keeps the type.
// The elementwise ops that take complex operands are those of the …OrComplex type
// classes in the op table; compare takes them with EQ and NE only, clamp, maximum
// and minimum not at all (complex numbers have no order), and convert turns real
// numbers into complex ones (imaginary part 0) and c64 into c128 and back, never
// complex into real (XLA refuses it too).

func init() {
	shapeRules[OpComplex] = inferComplex
}

// realResult reports the unary ops whose result on a complex operand is real.
func realResult(op Opcode) bool { return op == OpAbs || op == OpReal || op == OpImag }

func inferComplex(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	re, im := a.operands[0], a.operands[1]
	if err := sameArrays(re, im); err != nil {
		return Shape{}, err
	}
	c, ok := ComplexWith(re.DType)
	if !ok {
		return Shape{}, fmt.Errorf("operands %v are not f32 or f64 (the parts of c64 and c128)", re)
	}
	return re.WithDType(c), nil
}

// Complex adds complex(re, im).
func (b *Builder) Complex(re, im *Instruction) *Instruction {
	return b.emit(opSpec{op: OpComplex, operands: ins(re, im)})
}
