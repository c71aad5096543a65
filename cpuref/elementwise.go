package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Elementwise kernels: the element functions live in scalar_ops.go and
// scalar_convert.go; these map them over arrays of equal dimensions.

// evalUnary covers every KindUnary opcode (negate … count-leading-zeros).
func evalUnary(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if ops[0].DType().IsComplex() {
		return evalComplexUnary(in, ops[0])
	}
	f, err := unaryFor(in.Op, ops[0].DType())
	if err != nil {
		return nil, err
	}
	return mapUnary(in.Shape, ops[0], f)
}

// evalBinary covers every KindBinary opcode (add … shift-right-arithmetic).
func evalBinary(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if err := sameOperandTypes(ops[0], ops[1]); err != nil {
		return nil, err
	}
	if ops[0].DType().IsComplex() {
		return evalComplexBinary(in, ops[0], ops[1])
	}
	f, err := binaryFor(in.Op, ops[0].DType())
	if err != nil {
		return nil, err
	}
	return mapBinary(in.Shape, ops[0], ops[1], f)
}

func evalCompare(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if err := sameOperandTypes(ops[0], ops[1]); err != nil {
		return nil, err
	}
	if ops[0].DType().IsComplex() {
		return evalComplexCompare(in, ops[0], ops[1])
	}
	f, err := compareFor(in.Attrs.Direction, in.Attrs.CompareType, ops[0].DType())
	if err != nil {
		return nil, err
	}
	return mapBinary(in.Shape, ops[0], ops[1], f)
}

func evalConvert(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if ops[0].DType().IsComplex() || in.Shape.DType.IsComplex() {
		return evalComplexConvert(in, ops[0])
	}
	f, err := convertFor(ops[0].DType(), in.Shape.DType)
	if err != nil {
		return nil, err
	}
	return mapUnary(in.Shape, ops[0], f)
}

// evalSelect picks on_true where pred holds. A scalar pred selects whole arrays
// (older XLA allowed it).
func evalSelect(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	pred, onTrue, onFalse := ops[0], ops[1], ops[2]
	if pred.DType() != hlo.Pred {
		return nil, fmt.Errorf("select predicate is %v, not pred", pred.Shape())
	}
	if err := sameOperandTypes(onTrue, onFalse); err != nil {
		return nil, err
	}
	return mapTernary(in.Shape, pred, onTrue, onFalse, func(p, t, f uint64) uint64 {
		if p != 0 {
			return t
		}
		return f
	})
}

// evalClamp is clamp(min, x, max); min and max may be scalars.
func evalClamp(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	lo, x, hi := ops[0], ops[1], ops[2]
	if lo.DType() != x.DType() || hi.DType() != x.DType() {
		return nil, fmt.Errorf("clamp operands %v, %v, %v differ in type", lo.Shape(), x.Shape(), hi.Shape())
	}
	f, err := clampFunc(x.DType())
	if err != nil {
		return nil, err
	}
	return mapTernary(in.Shape, lo, x, hi, f)
}

// evalBitcastConvert reinterprets the little-endian element bytes. Between widths,
// the wider side has one more (minor) dimension holding the ratio of the widths;
// either way the bytes are the same, only the shape changes. A pred result is
// normalised to 0/1.
func evalBitcastConvert(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	src := ops[0]
	if int64(len(src.Bytes())) != in.Shape.ByteSize() {
		return nil, fmt.Errorf("bitcast-convert from %v (%d bytes) to %v (%d bytes)",
			src.Shape(), len(src.Bytes()), in.Shape, in.Shape.ByteSize())
	}
	out, err := hlo.LiteralFromBytes(in.Shape, append([]byte(nil), src.Bytes()...))
	if err != nil {
		return nil, err
	}
	if in.Shape.DType == hlo.Pred {
		for i := 0; i < out.NumElements(); i++ {
			out.SetBool(i, out.Bits(i) != 0)
		}
	}
	return out, nil
}

func sameOperandTypes(a, b *hlo.Literal) error {
	if a.DType() != b.DType() {
		return fmt.Errorf("operand types differ: %v vs %v", a.Shape(), b.Shape())
	}
	return nil
}

// sameDims checks that an operand has the result's dimensions.
func sameDims(out hlo.Shape, op *hlo.Literal) error {
	if !op.Shape().SameDims(out) {
		return fmt.Errorf("operand %v does not match result dimensions %v", op.Shape(), out)
	}
	return nil
}

// elementCost is about how many elementary steps one element function takes: the
// maps run on every core from about serialWork/elementCost elements. The element
// functions are pure, and each range covers whole bytes (parallelElements aligns
// the ranges of packed types), so the ranges are independent.
const elementCost = 16

func mapUnary(out hlo.Shape, x *hlo.Literal, f unaryFunc) (*hlo.Literal, error) {
	if err := sameDims(out, x); err != nil {
		return nil, err
	}
	res := hlo.NewLiteral(out)
	parallelElements(out, elementCost, func(lo, hi int) {
		var xs [blockLen]uint64
		for b := lo; b < hi; b += blockLen {
			blk := xs[:min(blockLen, hi-b)]
			readBits(x, b, blk)
			for i, v := range blk {
				blk[i] = f(v)
			}
			writeBits(res, b, blk)
		}
	})
	return res, nil
}

func mapBinary(out hlo.Shape, x, y *hlo.Literal, f binaryFunc) (*hlo.Literal, error) {
	if err := sameDims(out, x); err != nil {
		return nil, err
	}
	if err := sameDims(out, y); err != nil {
		return nil, err
	}
	res := hlo.NewLiteral(out)
	parallelElements(out, elementCost, func(lo, hi int) {
		var xs, ys [blockLen]uint64
		for b := lo; b < hi; b += blockLen {
			bx, by := xs[:min(blockLen, hi-b)], ys[:min(blockLen, hi-b)]
			readBits(x, b, bx)
			readBits(y, b, by)
			for i, v := range bx {
				bx[i] = f(v, by[i])
			}
			writeBits(res, b, bx)
		}
	})
	return res, nil
}

// mapTernary applies f elementwise; an operand that is a scalar where the result is
// not is broadcast (select's predicate, clamp's bounds).
func mapTernary(out hlo.Shape, a, b, c *hlo.Literal, f func(a, b, c uint64) uint64) (*hlo.Literal, error) {
	stride := func(l *hlo.Literal) (int, error) {
		if l.Shape().IsScalar() {
			return 0, nil
		}
		return 1, sameDims(out, l)
	}
	sa, errA := stride(a)
	sb, errB := stride(b)
	sc, errC := stride(c)
	for _, err := range []error{errA, errB, errC} {
		if err != nil {
			return nil, err
		}
	}
	res := hlo.NewLiteral(out)
	ra, rb, rc := bitsReader(a), bitsReader(b), bitsReader(c)
	parallelElements(out, elementCost, func(lo, hi int) {
		var rs [blockLen]uint64
		for blk := lo; blk < hi; blk += blockLen {
			r := rs[:min(blockLen, hi-blk)]
			for j := range r {
				i := blk + j
				r[j] = f(ra(i*sa), rb(i*sb), rc(i*sc))
			}
			writeBits(res, blk, r)
		}
	})
	return res, nil
}

// evalParameter returns the argument bound to the parameter number.
func evalParameter(ev *evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	n := in.Attrs.ParameterNumber
	if n < 0 || int(n) >= len(ev.args) {
		return nil, fmt.Errorf("parameter number %d out of range (%d arguments)", n, len(ev.args))
	}
	return ev.args[n], nil
}

func evalConstant(_ *evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	if in.Attrs.Literal == nil {
		return nil, fmt.Errorf("constant has no literal")
	}
	return in.Attrs.Literal, nil
}

// evalIota counts along IotaDimension, converting the index as convert from s64
// does (so large counts round in narrow float types).
func evalIota(_ *evaluator, in *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	dim := in.Attrs.IotaDimension
	if err := checkDimList("iota", []int64{dim}, in.Shape.Rank()); err != nil {
		return nil, err
	}
	conv, err := convertFor(hlo.S64, in.Shape.DType)
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	i := 0
	forEachIndex(in.Shape.Dims, func(idx []int64) {
		out.SetBits(i, conv(uint64(idx[dim])))
		i++
	})
	return out, nil
}
