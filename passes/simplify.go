package passes

import (
	"math"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Simplify applies algebraic identities that frontend dumps need, as XLA's
// AlgebraicSimplifier does, but only identities that hold bit for bit for every
// input, NaN, ±0 and ±inf included (x+0 is not one: −0+0 is +0; x*0 is not one:
// inf*0 is NaN). Chains of reshapes, transposes and broadcasts collapse into one;
// movement ops that move nothing, converts to the same type or through an exact
// widening and back, double negation and multiplication by one disappear, an
// element of a tuple instruction is read from its operand, and a convolution
// reads its kernel from under a reverse of spatial dims (as window reversal). A rule
// either names an earlier instruction that takes over the value or rewrites the
// instruction in place.
func Simplify(m *hlo.Module, _ Config) (bool, error) {
	return anyComputation(m, func(c *hlo.Computation) bool { return rewriteInOrder(c, simplifyInstruction) }), nil
}

// simplification rewrites one instruction: with is an earlier instruction whose
// value it equals, mutated reports an in-place rewrite.
type simplification func(in *hlo.Instruction) (with *hlo.Instruction, mutated bool)

var simplifications = map[hlo.Opcode]simplification{
	hlo.OpReshape:      simplifyReshape,
	hlo.OpTranspose:    simplifyTranspose,
	hlo.OpBroadcast:    simplifyBroadcast,
	hlo.OpConvert:      simplifyConvert,
	hlo.OpSlice:        unlessMoves(sliceTakesAll),
	hlo.OpPad:          unlessMoves(padAddsNothing),
	hlo.OpDynamicSlice: unlessMoves(dynamicSliceTakesAll),
	hlo.OpConcatenate:  unlessMoves(func(in *hlo.Instruction) bool { return len(in.Operands) == 1 }),
	hlo.OpCopy:         unlessMoves(func(*hlo.Instruction) bool { return true }),
	hlo.OpReverse:      simplifyReverse,
	hlo.OpConvolution:  simplifyConvolution,
	hlo.OpNegate:       involution,
	hlo.OpNot:          involution,
	hlo.OpMultiply:     dropIdentityOperand(isOne, true),
	hlo.OpDivide:       dropIdentityOperand(isOne, false),
	hlo.OpAdd:          dropIdentityOperand(isAdditiveIdentity, true),
	hlo.OpSubtract:     dropIdentityOperand(isSubtractiveIdentity, false),
	hlo.OpAnd:          dropIdentityOperand(isAllOnes, true),
	hlo.OpOr:           dropIdentityOperand(isZero, true),
	hlo.OpXor:          dropIdentityOperand(isZero, true),
	// An element of a tuple instruction is its operand (expansions build tuples
	// whose elements are read one by one, and the rest then goes dead).
	hlo.OpGetTupleElement: func(in *hlo.Instruction) (*hlo.Instruction, bool) {
		if t := in.Operands[0]; t.Op == hlo.OpTuple {
			return t.Operands[in.Attrs.TupleIndex], false
		}
		return nil, false
	},
}

func simplifyInstruction(in *hlo.Instruction) (*hlo.Instruction, bool) {
	rule, ok := simplifications[in.Op]
	if !ok {
		return nil, false
	}
	return rule(in)
}

// sameValue is the operand when the instruction's shape equals it: a movement op
// that moves nothing.
func sameValue(in *hlo.Instruction) *hlo.Instruction {
	if op := in.Operands[0]; op.Shape.Equal(in.Shape) {
		return op
	}
	return nil
}

// unlessMoves replaces an instruction by its first operand when moves says it
// leaves every element where it was.
func unlessMoves(noMove func(in *hlo.Instruction) bool) simplification {
	return func(in *hlo.Instruction) (*hlo.Instruction, bool) {
		if noMove(in) {
			return sameValue(in), false
		}
		return nil, false
	}
}

// simplifyReshape reads a reshape of a reshape from the first one's operand (both
// are row-major reinterpretations) and drops a reshape to the same shape.
func simplifyReshape(in *hlo.Instruction) (*hlo.Instruction, bool) {
	mutated := false
	if op := in.Operands[0]; op.Op == hlo.OpReshape {
		in.Operands[0] = op.Operands[0]
		mutated = true
	}
	return sameValue(in), mutated
}

// simplifyTranspose composes a transpose of a transpose and drops the identity
// permutation. Output dim i of the outer reads its operand's dim outer[i], which
// reads x's dim inner[outer[i]].
func simplifyTranspose(in *hlo.Instruction) (*hlo.Instruction, bool) {
	mutated := false
	if op := in.Operands[0]; op.Op == hlo.OpTranspose {
		perm := make([]int64, len(in.Attrs.Dimensions))
		for i, d := range in.Attrs.Dimensions {
			perm[i] = op.Attrs.Dimensions[d]
		}
		in.Operands[0], in.Attrs.Dimensions = op.Operands[0], perm
		mutated = true
	}
	if isIota(in.Attrs.Dimensions) {
		return sameValue(in), mutated
	}
	if movesOnlyUnitDims(in) { // a reshape: every element stays where it is
		in.Op, in.Attrs.Dimensions = hlo.OpReshape, nil
		with, _ := simplifyReshape(in)
		return with, true
	}
	return nil, mutated
}

// movesOnlyUnitDims reports a transpose that keeps its operand's dims of more than
// one element in order (it moves only dims of size 1), so that in row-major order
// it moves no element. Autodiff's feature-group reshuffles of a depthwise kernel
// are such transposes.
func movesOnlyUnitDims(in *hlo.Instruction) bool {
	dims, last := in.Operands[0].Shape.Dims, int64(-1)
	for _, d := range in.Attrs.Dimensions {
		if dims[d] == 1 {
			continue
		}
		if d < last {
			return false
		}
		last = d
	}
	return true
}

// simplifyBroadcast composes a broadcast of a broadcast (x's dim k goes to the
// inner's dim inner[k], which goes to outer[inner[k]]) and drops a broadcast that
// adds no dimension in order.
func simplifyBroadcast(in *hlo.Instruction) (*hlo.Instruction, bool) {
	mutated := false
	if op := in.Operands[0]; op.Op == hlo.OpBroadcast {
		dims := make([]int64, len(op.Attrs.Dimensions))
		for k, d := range op.Attrs.Dimensions {
			dims[k] = in.Attrs.Dimensions[d]
		}
		in.Operands[0], in.Attrs.Dimensions = op.Operands[0], dims
		mutated = true
	}
	if isIota(in.Attrs.Dimensions) {
		return sameValue(in), mutated
	}
	return nil, mutated
}

// simplifyConvert drops a convert to the operand's own type, and a round trip
// through a type that holds every value of the original exactly.
func simplifyConvert(in *hlo.Instruction) (*hlo.Instruction, bool) {
	op := in.Operands[0]
	if r := sameValue(in); r != nil {
		return r, false
	}
	if op.Op == hlo.OpConvert {
		x := op.Operands[0]
		if x.Shape.DType == in.Shape.DType && exactWidening(x.Shape.DType, op.Shape.DType) {
			return x, false
		}
	}
	return nil, false
}

// exactWidening reports a conversion from → to that keeps every value of from
// (and so converts back exactly): a float to a float with as many exponent and
// significand bits, an integer to a wider one that holds its sign, an integer to
// a float whose significand holds all its bits.
func exactWidening(from, to hlo.DType) bool {
	switch {
	case from.IsFloat() && to.IsFloat():
		return from == to || to == hlo.F64 || (to == hlo.F32 && from != hlo.F64)
	case from.IsInteger() && to.IsInteger():
		if from.IsSigned() && to.IsUnsigned() {
			return false
		}
		if from.IsUnsigned() && to.IsSigned() {
			return to.Bits() > from.Bits()
		}
		return to.Bits() >= from.Bits()
	case from.IsInteger() && to.IsFloat():
		return significandBits[to] >= from.Bits()
	}
	return false
}

// significandBits counts a float type's significand bits, the implicit one
// included: the widest integer it holds exactly (sign aside).
var significandBits = map[hlo.DType]int{hlo.F16: 11, hlo.BF16: 8, hlo.F32: 24, hlo.F64: 53}

func sliceTakesAll(in *hlo.Instruction) bool {
	for i, s := range in.Attrs.Slice {
		if s.Start != 0 || s.Limit != in.Operands[0].Shape.Dims[i] || s.Stride != 1 {
			return false
		}
	}
	return true
}

func padAddsNothing(in *hlo.Instruction) bool {
	for _, p := range in.Attrs.Padding {
		if p != (hlo.PadDim{}) {
			return false
		}
	}
	return true
}

// dynamicSliceTakesAll: start indices are clamped so that the slice fits, so a
// slice as large as the operand always starts at 0.
func dynamicSliceTakesAll(in *hlo.Instruction) bool {
	return slices.Equal(in.Attrs.SliceSizes, in.Operands[0].Shape.Dims)
}

// simplifyReverse drops a reverse of a reverse over the same dimensions, and a
// reverse of no dimension.
func simplifyReverse(in *hlo.Instruction) (*hlo.Instruction, bool) {
	if len(in.Attrs.Dimensions) == 0 {
		return sameValue(in), false
	}
	op := in.Operands[0]
	if op.Op == hlo.OpReverse && sameSet(op.Attrs.Dimensions, in.Attrs.Dimensions) {
		return op.Operands[0], false
	}
	return nil, false
}

// simplifyConvolution reads a convolution's kernel from under a reverse of
// spatial dims and then a reshape that moves only unit dims, as autodiff's input
// gradient of a depthwise convolution writes it (reshape, reverse, convolution).
func simplifyConvolution(in *hlo.Instruction) (*hlo.Instruction, bool) {
	folded := foldKernelReverse(in)
	relabeled := relabelUnitReshape(in)
	return nil, folded || relabeled
}

// foldKernelReverse reads a convolution's kernel from under a reverse of some of
// its spatial dims, flipping those dims' window reversal instead (rhs_reversal is
// that reverse, tap for tap: the same products summed in the same order).
// Autodiff's input gradients and JAX's transposed convolutions reverse the
// kernel so; as a separate kernel the reverse cost a launch and kept the
// convolution from reading the filter four features at a time.
func foldKernelReverse(in *hlo.Instruction) bool {
	rev, cd := in.Operands[1], in.Attrs.Conv
	if rev.Op != hlo.OpReverse || cd == nil {
		return false
	}
	win := slices.Clone(in.Attrs.Window)
	for _, d := range rev.Attrs.Dimensions {
		i := slices.Index(cd.KernelSpatial, d)
		if i < 0 || i >= len(win) {
			return false // a feature dim reversed: not a window reversal
		}
		win[i].WindowReversal = !win[i].WindowReversal
	}
	in.Attrs.Window = win
	in.Operands[1] = rev.Operands[0]
	return true
}

// relabelUnitReshape reads a convolution's kernel from under a reshape of the same
// rank that moves only dims of size 1 (the dims of more than one element keep
// their order: no element moves), naming the operand's dims in the dim labels
// instead: each of the reshape's dims of more than one element is the operand's
// next such dim, each of size 1 the operand's next dim of size 1.
func relabelUnitReshape(in *hlo.Instruction) bool {
	r, cd := in.Operands[1], in.Attrs.Conv
	if r.Op != hlo.OpReshape || cd == nil {
		return false
	}
	from := r.Operands[0].Shape.Dims
	to := r.Shape.Dims
	if len(from) != len(to) || slices.Contains(to, 0) {
		return false
	}
	dimOf := make([]int64, len(to)) // the operand's dim each of the reshape's dims is
	next := [2]int64{}              // the next unit and non-unit dim of the operand to take
	for i, size := range to {
		kind := min(size, 2) - 1 // 0: a unit dim, 1: a larger one
		for next[kind] < int64(len(from)) && (min(from[next[kind]], 2)-1) != kind {
			next[kind]++
		}
		if next[kind] == int64(len(from)) || from[next[kind]] != size {
			return false
		}
		dimOf[i] = next[kind]
		next[kind]++
	}
	relabeled := *cd
	relabeled.KernelInput, relabeled.KernelOutput = dimOf[cd.KernelInput], dimOf[cd.KernelOutput]
	relabeled.KernelSpatial = make([]int64, len(cd.KernelSpatial))
	for i, d := range cd.KernelSpatial {
		relabeled.KernelSpatial[i] = dimOf[d]
	}
	in.Attrs.Conv = &relabeled
	in.Operands[1] = r.Operands[0]
	return true
}

// involution drops f(f(x)) for negate (a sign flip, NaNs included) and not.
func involution(in *hlo.Instruction) (*hlo.Instruction, bool) {
	if op := in.Operands[0]; op.Op == in.Op {
		return op.Operands[0], false
	}
	return nil, false
}

// dropIdentityOperand replaces op(x, e) by x when e is an identity of op (and
// op(e, x) too when op commutes).
func dropIdentityOperand(isIdentity func(dt hlo.DType, bits uint64) bool, commutes bool) simplification {
	return func(in *hlo.Instruction) (*hlo.Instruction, bool) {
		x, e := in.Operands[0], in.Operands[1]
		switch {
		case isSplatOf(e, isIdentity) && x.Shape.Equal(in.Shape):
			return x, false
		case commutes && isSplatOf(x, isIdentity) && e.Shape.Equal(in.Shape):
			return e, false
		}
		return nil, false
	}
}

// isSplatOf reports a constant, or a broadcast of one, whose every element
// satisfies is.
func isSplatOf(in *hlo.Instruction, is func(dt hlo.DType, bits uint64) bool) bool {
	if in.Op == hlo.OpBroadcast {
		in = in.Operands[0]
	}
	if in.Op != hlo.OpConstant || in.Attrs.Literal == nil {
		return false
	}
	lit := in.Attrs.Literal
	if !lit.Shape().IsArray() || lit.NumElements() == 0 || !lit.IsUniform() {
		return false
	}
	return is(lit.DType(), lit.Bits(0))
}

// One, as each type stores it: x*1 and x/1 are x for every x (NaNs keep their
// payload; lavapipe and cpuref both pass them through).
func isOne(dt hlo.DType, bits uint64) bool {
	switch {
	case dt.IsInteger():
		return bits == 1
	case dt.IsFloat():
		return floatValue(dt, bits) == 1
	}
	return false
}

// x + (−0) is x for every float x (+0 is not: −0 + +0 is +0); integers add 0.
func isAdditiveIdentity(dt hlo.DType, bits uint64) bool {
	if dt.IsFloat() {
		v := floatValue(dt, bits)
		return v == 0 && math.Signbit(v)
	}
	return dt.IsInteger() && bits == 0
}

// x − (+0) is x for every float x (−0 − +0 is −0).
func isSubtractiveIdentity(dt hlo.DType, bits uint64) bool {
	if dt.IsFloat() {
		v := floatValue(dt, bits)
		return v == 0 && !math.Signbit(v)
	}
	return dt.IsInteger() && bits == 0
}

func isZero(dt hlo.DType, bits uint64) bool { return (dt.IsInteger() || dt == hlo.Pred) && bits == 0 }

func isAllOnes(dt hlo.DType, bits uint64) bool {
	if dt == hlo.Pred {
		return bits == 1
	}
	return dt.IsInteger() && bits == uint64(1)<<dt.Bits()-1 // a shift by 64 is 0: all ones
}

// floatValue reads one float element's bits.
func floatValue(dt hlo.DType, bits uint64) float64 {
	l := hlo.NewLiteral(hlo.Scalar(dt))
	l.SetBits(0, bits)
	return l.Float64(0)
}

func isIota(dims []int64) bool {
	for i, d := range dims {
		if d != int64(i) {
			return false
		}
	}
	return true
}

func sameSet(a, b []int64) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
