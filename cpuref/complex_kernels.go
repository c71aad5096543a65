package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// The array kernels of complex elementwise ops. They read and write elements
// through hlo.Literal's complex accessors, which hold c128's 16 bytes (the 64-bit
// element words of the other kernels cannot); c64 also packs into one word
// (complex_bits.go), for the scalar computations of reduce, sort and friends.

// mapElements calls f for every index in [0, n), on every core for large n; f
// writes element i of its result only.
func mapElements(n int, f func(i int)) {
	parallelFor(n, elementCost, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(i)
		}
	})
}

// complexResult allocates the result of an elementwise kernel after checking the
// operands' dimensions and the result's element type.
func complexResult(out hlo.Shape, want hlo.DType, ops ...*hlo.Literal) (*hlo.Literal, error) {
	for _, x := range ops {
		if err := sameDims(out, x); err != nil {
			return nil, err
		}
	}
	if out.DType != want {
		return nil, fmt.Errorf("result %v is not of type %v", out, want)
	}
	return hlo.NewLiteral(out), nil
}

func evalComplexUnary(in *hlo.Instruction, x *hlo.Literal) (*hlo.Literal, error) {
	dt := x.DType()
	if f, ok := complexRealMath[in.Op]; ok {
		res, err := complexResult(in.Shape, dt.ComplexPart(), x)
		if err != nil {
			return nil, err
		}
		mapElements(res.NumElements(), func(i int) { res.SetFloat64(i, f(x.Complex128(i))) })
		return res, nil
	}
	f, ok := complexUnaryMath[in.Op]
	if !ok {
		return nil, fmt.Errorf("%v is not defined for %v", in.Op, dt)
	}
	res, err := complexResult(in.Shape, dt, x)
	if err != nil {
		return nil, err
	}
	mapElements(res.NumElements(), func(i int) { res.SetComplex128(i, f(x.Complex128(i))) })
	return res, nil
}

func evalComplexBinary(in *hlo.Instruction, x, y *hlo.Literal) (*hlo.Literal, error) {
	f, ok := complexBinaryFor(in.Op, x.DType())
	if !ok {
		return nil, fmt.Errorf("%v is not defined for %v", in.Op, x.DType())
	}
	res, err := complexResult(in.Shape, x.DType(), x, y)
	if err != nil {
		return nil, err
	}
	mapElements(res.NumElements(), func(i int) { res.SetComplex128(i, f(x.Complex128(i), y.Complex128(i))) })
	return res, nil
}

// evalComplexCompare is compare EQ or NE; complex numbers have no order.
func evalComplexCompare(in *hlo.Instruction, x, y *hlo.Literal) (*hlo.Literal, error) {
	dir := in.Attrs.Direction
	if dir != hlo.CmpEQ && dir != hlo.CmpNE {
		return nil, fmt.Errorf("compare %v of %v operands: complex numbers compare EQ and NE only", dir, x.DType())
	}
	res, err := complexResult(in.Shape, hlo.Pred, x, y)
	if err != nil {
		return nil, err
	}
	ne := dir == hlo.CmpNE
	mapElements(res.NumElements(), func(i int) { res.SetBool(i, complexEqual(x.Complex128(i), y.Complex128(i)) != ne) })
	return res, nil
}

// evalComplexConvert converts to a complex type: a complex operand part by part
// (c128 → c64 rounds each), a real one through the real conversion to the part
// type (so that s64 → c64 rounds once, as s64 → f32 does) with imaginary part +0.
// Complex to real is refused, as XLA refuses it.
func evalComplexConvert(in *hlo.Instruction, x *hlo.Literal) (*hlo.Literal, error) {
	to := in.Shape.DType
	if !to.IsComplex() {
		return nil, fmt.Errorf("convert from %v to %v: complex to real is not defined (take real or imag)", x.DType(), to)
	}
	res, err := complexResult(in.Shape, to, x)
	if err != nil {
		return nil, err
	}
	if x.DType().IsComplex() {
		mapElements(res.NumElements(), func(i int) { res.SetComplex128(i, x.Complex128(i)) })
		return res, nil
	}
	part := to.ComplexPart()
	f, err := convertFor(x.DType(), part)
	if err != nil {
		return nil, err
	}
	read := bitsReader(x)
	mapElements(res.NumElements(), func(i int) { res.SetComplex128(i, complex(toFloat(part, f(read(i))), 0)) })
	return res, nil
}

// evalComplex is complex(re, im): exact, the parts are the operands' values.
func evalComplex(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	re, im := ops[0], ops[1]
	if err := sameOperandTypes(re, im); err != nil {
		return nil, err
	}
	want, ok := hlo.ComplexWith(re.DType())
	if !ok {
		return nil, fmt.Errorf("complex of %v operands (want f32 or f64)", re.DType())
	}
	res, err := complexResult(in.Shape, want, re, im)
	if err != nil {
		return nil, err
	}
	mapElements(res.NumElements(), func(i int) { res.SetComplex128(i, complex(re.Float64(i), im.Float64(i))) })
	return res, nil
}
