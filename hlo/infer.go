package hlo

import (
	"errors"
	"fmt"
)

// Shape inference: the single source of the shape rules of every opcode, read by the
// builder (which infers each result), the verifier and the parser (which check each
// declared result). The rules follow XLA's operation semantics with HLO's strictness:
// no implicit broadcasting, operand element types equal where XLA requires it, and
// no mixed precision but the widened result of a dot or convolution
// (preferred_element_type).
//
// Six opcodes carry their result shape as part of the instruction because operands
// and attributes cannot determine it: parameter (any shape), iota (its dims), broadcast
// and reshape (the output dims), convert and bitcast-convert (the new element type).
// InferShape refuses those (ResultIsDeclared reports them); CheckShape accepts every
// opcode, takes the declared result shape, and checks it against the rules.

// ErrDeclaredShape is wrapped by InferShape's error for the opcodes whose result shape
// is declared rather than inferred.
var ErrDeclaredShape = errors.New("the result shape is declared by the instruction, not inferred; use CheckShape")

// ResultIsDeclared reports the opcodes whose result shape is not a function of the
// operands and attributes: parameter, iota, broadcast, reshape, convert,
// bitcast-convert, rng-bit-generator (the bits' shape), rng, custom-call and bitcast.
func ResultIsDeclared(op Opcode) bool {
	switch op {
	case OpParameter, OpIota, OpBroadcast, OpReshape, OpConvert, OpBitcastConvert,
		OpRngBitGenerator, OpCustomCall, OpRng, OpBitcast:
		return true
	}
	return false
}

// InferShape returns the result shape of op applied to operands of the given shapes,
// with the given attributes and called computations (in the op table's role order),
// or an error naming the op, the operand shapes and what is wrong. attrs may be nil.
// For the opcodes that ResultIsDeclared reports it returns an error wrapping
// ErrDeclaredShape.
func InferShape(op Opcode, operands []Shape, attrs *Attributes, called []*Computation) (Shape, error) {
	if ResultIsDeclared(op) {
		return Shape{}, fmt.Errorf("%v: %w", op, ErrDeclaredShape)
	}
	return inferShape(op, operands, attrs, called, nil)
}

// CheckShape checks that declared is the result shape of op applied to the operands:
// for most opcodes it must equal the inferred shape; for the declared-result opcodes
// the rules constrain it (a broadcast's operand dims must match the declared output
// dims it maps to, a reshape keeps the element count, …).
func CheckShape(op Opcode, operands []Shape, attrs *Attributes, called []*Computation, declared Shape) error {
	got, err := inferShape(op, operands, attrs, called, &declared)
	if err != nil {
		return err
	}
	if !got.Equal(declared) {
		return fmt.Errorf("%v: declared shape %v differs from inferred shape %v", op, declared, got)
	}
	return nil
}

// shapeArgs are the inputs of one shape rule. declared is nil when inferring.
type shapeArgs struct {
	op       Opcode
	operands []Shape
	attrs    *Attributes
	called   []*Computation
	declared *Shape
}

// shapeRule computes a result shape; its error omits the op name, which inferShape
// prefixes.
type shapeRule func(a *shapeArgs) (Shape, error)

// shapeRules holds the rule of every opcode that is not unary or binary elementwise
// (those two kinds share one rule each). TestOpTableCoverage checks it is complete.
var shapeRules map[Opcode]shapeRule

func init() {
	shapeRules = map[Opcode]shapeRule{
		OpParameter: inferParameter, OpConstant: inferConstant, OpIota: inferIota,
		OpCompare: inferCompare, OpSelect: inferSelect, OpClamp: inferClamp,
		OpConvert: inferConvert, OpBitcastConvert: inferBitcastConvert,
		OpBroadcast: inferBroadcast, OpReshape: inferReshape, OpTranspose: inferTranspose,
		OpSlice: inferSlice, OpConcatenate: inferConcatenate, OpPad: inferPad,
		OpReverse: inferReverse, OpCopy: inferCopy, OpDynamicSlice: inferDynamicSlice,
		OpDynamicUpdateSlice: inferDynamicUpdateSlice,
		OpGather:             inferGather, OpScatter: inferScatter,
		OpReduce: inferReduce, OpReduceWindow: inferReduceWindow,
		OpSelectAndScatter: inferSelectAndScatter,
		OpDot:              inferDot, OpConvolution: inferConvolution, OpSort: inferSort,
		OpTuple: inferTuple, OpGetTupleElement: inferGetTupleElement,
		OpWhile: inferWhile, OpConditional: inferConditional, OpCall: inferCall,
		OpFusion: inferFusion,
	}
}

func inferShape(op Opcode, operands []Shape, attrs *Attributes, called []*Computation, declared *Shape) (Shape, error) {
	if attrs == nil {
		attrs = &Attributes{}
	}
	s, err := inferByOp(&shapeArgs{op, operands, attrs, called, declared})
	if err != nil {
		return Shape{}, fmt.Errorf("%v: %w", op, err)
	}
	return s, nil
}

func inferByOp(a *shapeArgs) (Shape, error) {
	if a.op == OpInvalid || a.op >= numOpcodes {
		return Shape{}, errors.New("unknown opcode")
	}
	info := a.op.Info()
	if err := checkArity(info, len(a.operands)); err != nil {
		return Shape{}, err
	}
	if err := checkCalledCount(info, a.called); err != nil {
		return Shape{}, err
	}
	if err := checkArgsNesting(a); err != nil {
		return Shape{}, err
	}
	for i, s := range a.operands {
		if err := validShape(s); err != nil {
			return Shape{}, fmt.Errorf("operand %d: %w", i, err)
		}
	}
	if err := checkTokenOperands(a); err != nil {
		return Shape{}, err
	}
	if a.declared == nil && ResultIsDeclared(a.op) {
		return Shape{}, ErrDeclaredShape
	}
	if a.declared != nil {
		if err := validShape(*a.declared); err != nil {
			return Shape{}, fmt.Errorf("declared shape: %w", err)
		}
	}
	out, err := inferByRule(a)
	if err == nil {
		// A rule can make a shape larger than its operands (pad, broadcast, dot).
		if err = validShape(out); err != nil {
			return Shape{}, fmt.Errorf("result: %w", err)
		}
	}
	return out, err
}

func inferByRule(a *shapeArgs) (Shape, error) {
	switch a.op.Info().Kind {
	case KindUnary:
		return inferUnary(a)
	case KindBinary:
		return inferBinary(a)
	}
	return shapeRules[a.op](a)
}

func checkArity(info *OpInfo, n int) error {
	if info.Arity != Variadic && n != info.Arity {
		return fmt.Errorf("takes %d operands, got %d", info.Arity, n)
	}
	return nil
}

// checkCalledCount checks the number of called computations against the op table's
// roles; a role ending in "*" (conditional's branches) takes one or more.
func checkCalledCount(info *OpInfo, called []*Computation) error {
	roles := info.Called
	if len(roles) == 1 && roles[0][len(roles[0])-1] == '*' {
		// A custom-call's called_computations may be empty.
		if len(called) == 0 && info.Kind != KindExpanded {
			return fmt.Errorf("needs at least one computation in %s", roles[0][:len(roles[0])-1])
		}
	} else if len(called) != len(roles) {
		return fmt.Errorf("calls %d computations %v, got %d", len(roles), roles, len(called))
	}
	for i, c := range called {
		if c == nil {
			return fmt.Errorf("called computation %d is nil", i)
		}
	}
	return nil
}

// validShape checks that a shape is a well-formed array (valid element type,
// non-negative dims, at most MaxShapeElements elements) or a tuple of well-formed
// shapes whose byte size fits in int64.
func validShape(s Shape) error {
	if err := validStructure(s); err != nil {
		return err
	}
	_, err := s.ByteSizeChecked()
	return err
}

// validStructure checks element types and that only tuples have elements.
func validStructure(s Shape) error {
	if s.IsTuple() {
		if len(s.Dims) != 0 {
			return fmt.Errorf("tuple shape %v has dimensions", s)
		}
		for _, e := range s.Elems {
			if err := validStructure(e); err != nil {
				return err
			}
		}
		return nil
	}
	if !s.DType.IsValid() {
		return fmt.Errorf("shape has invalid element type %v", s.DType)
	}
	if len(s.Elems) != 0 {
		return fmt.Errorf("array shape %v has tuple elements", s)
	}
	return nil
}

// needArrays checks that the listed operands are arrays.
func needArrays(a *shapeArgs) error {
	for i, s := range a.operands {
		if !s.IsArray() {
			return fmt.Errorf("operand %d has tuple shape %v, want an array", i, s)
		}
	}
	return nil
}

func needDeclaredArray(a *shapeArgs) (Shape, error) {
	if !a.declared.IsArray() {
		return Shape{}, fmt.Errorf("declared shape %v is not an array", *a.declared)
	}
	return a.declared.Clone(), nil
}

// needArrayToDeclared is the common check of the ops that map one array operand to
// the array shape the instruction declares (convert, bitcast-convert, broadcast,
// reshape): it returns that operand and a copy of the declared shape.
func needArrayToDeclared(a *shapeArgs) (x, out Shape, err error) {
	if err := needArrays(a); err != nil {
		return Shape{}, Shape{}, err
	}
	out, err = needDeclaredArray(a)
	return a.operands[0], out, err
}

// checkDim checks that d indexes a dimension of a rank-r shape.
func checkDim(what string, d int64, rank int) error {
	if d < 0 || d >= int64(rank) {
		return fmt.Errorf("%s %d out of range for rank %d", what, d, rank)
	}
	return nil
}

// checkDimSet checks that dims are distinct dimensions of a rank-r shape.
func checkDimSet(what string, dims []int64, rank int) error {
	seen := make(map[int64]bool, len(dims))
	for _, d := range dims {
		if err := checkDim(what, d, rank); err != nil {
			return err
		}
		if seen[d] {
			return fmt.Errorf("%s %v repeat dimension %d", what, dims, d)
		}
		seen[d] = true
	}
	return nil
}

// checkSortedDimSet is checkDimSet with dims also required in increasing order.
func checkSortedDimSet(what string, dims []int64, rank int) error {
	if err := checkDimSet(what, dims, rank); err != nil {
		return err
	}
	for i := 1; i < len(dims); i++ {
		if dims[i] < dims[i-1] {
			return fmt.Errorf("%s %v are not sorted", what, dims)
		}
	}
	return nil
}

func containsDim(dims []int64, d int64) bool {
	for _, x := range dims {
		if x == d {
			return true
		}
	}
	return false
}

// --- leaves ---

func inferParameter(a *shapeArgs) (Shape, error) {
	if a.attrs.ParameterNumber < 0 {
		return Shape{}, fmt.Errorf("negative parameter number %d", a.attrs.ParameterNumber)
	}
	return a.declared.Clone(), nil
}

func inferConstant(a *shapeArgs) (Shape, error) {
	lit := a.attrs.Literal
	if lit == nil {
		return Shape{}, errors.New("has no literal")
	}
	if err := checkNesting(lit.Shape()); err != nil {
		return Shape{}, fmt.Errorf("literal: %w", err)
	}
	if err := validShape(lit.Shape()); err != nil {
		return Shape{}, fmt.Errorf("literal: %w", err)
	}
	return lit.Shape().Clone(), nil
}

func inferIota(a *shapeArgs) (Shape, error) {
	s, err := needDeclaredArray(a)
	if err != nil {
		return Shape{}, err
	}
	if !s.DType.IsNumeric() {
		return Shape{}, fmt.Errorf("shape %v is not numeric", s)
	}
	if err := checkDim("iota_dimension", a.attrs.IotaDimension, s.Rank()); err != nil {
		return Shape{}, fmt.Errorf("%v: %w", s, err)
	}
	return s, nil
}

// --- elementwise ---

func inferUnary(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	if types := a.op.Info().Types; !types.Allows(x.DType) {
		return Shape{}, fmt.Errorf("operand %v is not %v", x, types)
	}
	if a.op == OpIsFinite {
		return x.WithDType(Pred), nil
	}
	if x.DType.IsComplex() && realResult(a.op) {
		return x.WithDType(x.DType.ComplexPart()), nil
	}
	return x.Clone(), nil
}

// sameArrays checks that two operands have equal shapes, as HLO's binary ops need
// (no implicit broadcasting).
func sameArrays(x, y Shape) error {
	if !x.Equal(y) {
		return fmt.Errorf("operand shapes %v and %v differ", x, y)
	}
	return nil
}

func inferBinary(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, y := a.operands[0], a.operands[1]
	if err := sameArrays(x, y); err != nil {
		return Shape{}, err
	}
	if types := a.op.Info().Types; !types.Allows(x.DType) {
		return Shape{}, fmt.Errorf("operands %v are not %v", x, types)
	}
	return x.Clone(), nil
}

func inferCompare(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, y := a.operands[0], a.operands[1]
	if err := sameArrays(x, y); err != nil {
		return Shape{}, err
	}
	if a.attrs.Direction > CmpGE {
		return Shape{}, fmt.Errorf("invalid direction %v", a.attrs.Direction)
	}
	if err := checkCompareType(a.attrs.CompareType, x.DType); err != nil {
		return Shape{}, err
	}
	if x.DType.IsComplex() && a.attrs.Direction != CmpEQ && a.attrs.Direction != CmpNE {
		return Shape{}, fmt.Errorf("direction %v does not apply to %v operands: complex numbers are unordered (EQ and NE only)", a.attrs.Direction, x.DType)
	}
	return x.WithDType(Pred), nil
}

// checkCompareType checks that an explicit compare type suits the operand type:
// FLOAT and TOTALORDER for floats, SIGNED for signed integers, UNSIGNED for unsigned
// integers and pred.
func checkCompareType(ct CompareType, dt DType) error {
	ok := true
	switch ct {
	case CompareDefault:
	case CompareFloat:
		ok = dt.IsFloat() || dt.IsComplex() // XLA compares complex numbers as FLOAT
	case CompareTotalOrder:
		ok = dt.IsFloat()
	case CompareSigned:
		ok = dt.IsSigned()
	case CompareUnsigned:
		ok = dt.IsUnsigned() || dt == Pred
	default:
		return fmt.Errorf("invalid compare type %v", ct)
	}
	if !ok {
		return fmt.Errorf("compare type %v does not apply to %v operands", ct, dt)
	}
	return nil
}

// inferSelect: pred must be pred-typed with the operands' dims or a scalar (XLA's HLO
// verifier wants equal dims; the scalar form is XLA client semantics, accepted here).
func inferSelect(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	p, t, f := a.operands[0], a.operands[1], a.operands[2]
	if p.DType != Pred {
		return Shape{}, fmt.Errorf("predicate %v is not pred", p)
	}
	if err := sameArrays(t, f); err != nil {
		return Shape{}, err
	}
	if !p.IsScalar() && !p.SameDims(t) {
		return Shape{}, fmt.Errorf("predicate %v must be a scalar or match %v", p, t)
	}
	return t.Clone(), nil
}

// inferClamp: clamp(min, operand, max); min and max are operand-typed, each a scalar
// or of the operand's dims.
func inferClamp(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	lo, x, hi := a.operands[0], a.operands[1], a.operands[2]
	if x.DType.IsComplex() {
		return Shape{}, fmt.Errorf("operand %v is complex: complex numbers are unordered", x)
	}
	for _, bound := range []Shape{lo, hi} {
		if bound.DType != x.DType || (!bound.IsScalar() && !bound.SameDims(x)) {
			return Shape{}, fmt.Errorf("bound %v must be a scalar or match operand %v", bound, x)
		}
	}
	return x.Clone(), nil
}

func inferConvert(a *shapeArgs) (Shape, error) {
	x, out, err := needArrayToDeclared(a)
	if err != nil {
		return Shape{}, err
	}
	if !x.SameDims(out) {
		return Shape{}, fmt.Errorf("operand %v and result %v have different dimensions", x, out)
	}
	if x.DType.IsComplex() && !out.DType.IsComplex() {
		// XLA leaves it unimplemented: real and imag say which part is meant.
		return Shape{}, fmt.Errorf("cannot convert complex %v to real %v: take real or imag", x, out)
	}
	return out, nil
}

// inferBitcastConvert follows XLA: equal widths keep the dims; a narrower result adds
// a minor dimension of size in/out bits; a wider result removes the operand's minor
// dimension, which must be out/in bits. pred has no defined bit pattern beyond 0/1,
// so it is refused on either side.
func inferBitcastConvert(a *shapeArgs) (Shape, error) {
	x, out, err := needArrayToDeclared(a)
	if err != nil {
		return Shape{}, err
	}
	if x.DType == Pred || out.DType == Pred {
		return Shape{}, fmt.Errorf("cannot bitcast %v to %v: pred has no bit layout", x, out)
	}
	inBits, outBits := int64(x.DType.Bits()), int64(out.DType.Bits())
	want := x.WithDType(out.DType)
	switch {
	case inBits > outBits:
		want.Dims = append(want.Dims, inBits/outBits)
	case inBits < outBits:
		if x.Rank() == 0 || x.Dims[x.Rank()-1] != outBits/inBits {
			return Shape{}, fmt.Errorf("operand %v needs a minor dimension of %d to bitcast to %v",
				x, outBits/inBits, out.DType)
		}
		want.Dims = want.Dims[:x.Rank()-1]
	}
	if !want.Equal(out) {
		return Shape{}, fmt.Errorf("operand %v bitcasts to %v, not %v", x, want, out)
	}
	return out, nil
}
