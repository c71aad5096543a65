package hlo

import "fmt"

// Opcode identifies an HLO operation. Every opcode has exactly one row in opTable; the
// builder, shape inference, verifier, printer, parser, cpuref and codegen all read it,
// and TestOpTableCoverage fails where one of them lacks an opcode.
type Opcode uint8

// The opcodes, in op-table order.
const (
	OpInvalid Opcode = iota
	OpParameter
	OpConstant
	OpIota
	// Unary elementwise.
	OpNegate
	OpAbs
	OpSign
	OpExp
	OpExpm1
	OpLog
	OpLog1p
	OpSqrt
	OpRsqrt
	OpCbrt
	OpTanh
	OpLogistic
	OpSin
	OpCos
	OpTan
	OpErf
	OpFloor
	OpCeil
	OpRoundNearestEven
	OpRoundNearestAfz
	OpIsFinite
	OpNot
	OpPopcnt
	OpClz
	OpReal
	OpImag
	// Binary elementwise.
	OpAdd
	OpSubtract
	OpMultiply
	OpDivide
	OpRemainder
	OpMaximum
	OpMinimum
	OpPower
	OpAtan2
	OpAnd
	OpOr
	OpXor
	OpShiftLeft
	OpShiftRightLogical
	OpShiftRightArithmetic
	OpCompare
	// Ternary and conversions.
	OpSelect
	OpClamp
	OpConvert
	OpBitcastConvert
	// Data movement.
	OpBroadcast
	OpReshape
	OpTranspose
	OpSlice
	OpConcatenate
	OpPad
	OpReverse
	OpCopy
	OpDynamicSlice
	OpDynamicUpdateSlice
	OpGather
	OpScatter
	// Reductions and contractions.
	OpReduce
	OpReduceWindow
	OpSelectAndScatter
	OpDot
	OpConvolution
	OpSort
	// Tuples and control flow.
	OpTuple
	OpGetTupleElement
	OpWhile
	OpConditional
	OpCall
	OpFusion
	// Ops an expander pass rewrites into the ops above before code generation
	// (OpInfo.ExpandedBy names the pass).
	OpBatchNormTraining
	OpBatchNormInference
	OpBatchNormGrad
	OpRngBitGenerator
	OpCustomCall
	OpAllReduce
	OpAllReduceStart
	OpAllReduceDone
	OpAllGather
	OpAllGatherStart
	OpAllGatherDone
	OpReduceScatter
	OpAllToAll
	OpCollectivePermute
	OpCollectivePermuteStart
	OpCollectivePermuteDone
	OpReplicaID
	OpPartitionID
	OpCollectiveBroadcast
	OpOptBarrier
	OpReducePrecision
	OpGetDimensionSize
	OpMap
	OpMulHi
	OpTopK
	OpTriangularSolve
	OpCholesky
	OpBitcast
	OpAfterAll
	// rng and its state (hlo/rng.go).
	OpRng
	OpRngGetAndUpdateState
	// Complex numbers and the Fourier transform (op_complex.go, op_fft.go).
	OpComplex
	OpFft
	numOpcodes
)

// OpKind groups opcodes that share shape rules and lowering strategy.
type OpKind uint8

// The kinds of operation.
const (
	KindLeaf        OpKind = iota // parameter, constant, iota
	KindUnary                     // elementwise, one operand
	KindBinary                    // elementwise, two operands of one type
	KindElementwise               // other elementwise: compare, select, clamp, convert
	KindMovement                  // moves or selects elements without arithmetic
	KindReduction                 // reduce, reduce-window, select-and-scatter
	KindContraction               // dot, convolution
	KindSort
	KindTuple
	KindControl   // while, conditional, call, fusion
	KindExpanded  // rewritten into other ops by an expander pass before code generation
	KindTransform // fft: each result element depends on whole rows of the operand
)

// TypeClass constrains the element type of an op's (array) operands.
type TypeClass uint8

// The type classes.
const (
	AnyType       TypeClass = iota // every array type
	Numeric                        // integers and floats
	FloatOnly                      // f16, bf16, f32, f64
	IntOnly                        // signed and unsigned integers
	IntOrPred                      // integers and pred (bitwise logic)
	SignedNumeric                  // signed integers and floats (abs, sign: XLA refuses unsigned)
	NumericOrPred                  // integers, floats and pred (add, multiply, maximum, minimum: on pred or, and, or, and)
	// The classes of the ops that take complex numbers too (c64, c128).
	FloatOrComplex       // floats and complex (exp, log, sqrt, …, real, imag)
	NumericOrComplex     // integers, floats and complex (negate, subtract, divide, power)
	NumericPredOrComplex // integers, floats, pred and complex (add, multiply)
	SignedOrComplex      // signed integers, floats and complex (abs, sign)
)

// Allows reports whether dt is in the class.
func (c TypeClass) Allows(dt DType) bool {
	switch c {
	case Numeric:
		return dt.IsNumeric()
	case FloatOnly:
		return dt.IsFloat()
	case IntOnly:
		return dt.IsInteger()
	case IntOrPred:
		return dt.IsInteger() || dt == Pred
	case SignedNumeric:
		return dt.IsSigned() || dt.IsFloat()
	case NumericOrPred:
		return dt.IsNumeric() || dt == Pred
	case FloatOrComplex:
		return dt.IsFloat() || dt.IsComplex()
	case NumericOrComplex:
		return dt.IsNumeric() || dt.IsComplex()
	case NumericPredOrComplex:
		return dt.IsNumeric() || dt == Pred || dt.IsComplex()
	case SignedOrComplex:
		return dt.IsSigned() || dt.IsFloat() || dt.IsComplex()
	default:
		return dt.IsValid() && dt != Token
	}
}

func (c TypeClass) String() string {
	return [...]string{"any type", "a numeric type", "a floating-point type",
		"an integer type", "an integer or pred type", "a signed integer or floating-point type",
		"a numeric or pred type", "a floating-point or complex type", "a numeric or complex type",
		"a numeric, pred or complex type", "a signed integer, floating-point or complex type"}[c]
}

// Variadic marks an op row whose operand count is not fixed.
const Variadic = -1

// OpInfo is one row of the op table.
type OpInfo struct {
	Name  string // XLA text name
	Kind  OpKind
	Arity int // operand count, or Variadic
	// Types constrains operand element types (for elementwise ops; others check in
	// shape inference).
	Types TypeClass
	// Elementwise ops map each output element from the same-index operand elements.
	Elementwise bool
	// Commutative binary ops may swap operands (CSE, algebraic simplification).
	Commutative bool
	// Called names the roles of the called computations, in Instruction.Called order,
	// as the HLO text attribute names them (to_apply, condition, body, …). A role
	// ending in "*" is a list attribute (branch_computations).
	Called []string
	// SideEffectFree ops may be removed when unused, merged with an identical
	// instruction and duplicated when rematerialised. A custom-call refines it per
	// instruction (Instruction.SideEffectFree).
	SideEffectFree bool
	// ExpandedBy names the pass of passes.Pipeline that rewrites every instruction of
	// this op into other ops before code generation (Kind is KindExpanded). Code
	// generation never sees these ops; cpuref defines them directly, and the GPU
	// differential tests run them through the whole pipeline.
	ExpandedBy string
	// Expensive ops are worth computing once even at the price of a buffer: fusion
	// copies a cheap producer into each of its consumers, never an expensive one
	// (XLA's IsExpensive). Set in optable_costs.go.
	Expensive bool
	// Cost is how rematerialisation estimates the work of recomputing the op.
	Cost CostModel
	// NoGPU says why GPU code generation lacks this op; plan.Build refuses a
	// module that uses it (ErrUnsupported) before any pass runs. Empty for every
	// op that runs on the GPU. cpuref defines these ops like any other.
	NoGPU string
}

// CostModel names how the work of an instruction is estimated (remat ranks the
// values it may recompute by bytes saved per unit of work).
type CostModel uint8

// The cost models.
const (
	CostPerElement  CostModel = iota // one unit per result element
	CostContraction                  // result elements × the contracted extent (dot)
	CostWindow                       // the larger of result and first operand elements (reductions, windows, convolution)
	CostCalled                       // the sum over the called computation's instructions (fusion)
)

func unaryOp(name string, types TypeClass) OpInfo {
	return OpInfo{Name: name, Kind: KindUnary, Arity: 1, Types: types, Elementwise: true, SideEffectFree: true}
}

func binaryOp(name string, types TypeClass, commutative bool) OpInfo {
	return OpInfo{Name: name, Kind: KindBinary, Arity: 2, Types: types, Elementwise: true,
		Commutative: commutative, SideEffectFree: true}
}

func op(name string, kind OpKind, arity int, called ...string) OpInfo {
	return OpInfo{Name: name, Kind: kind, Arity: arity, Called: called, SideEffectFree: true}
}

// The expander passes, by pipeline name.
const (
	BatchNormExpander       = "batchnorm-expander"
	RngBitGeneratorExpander = "rng-bit-generator-expander"
	CustomCallExpander      = "custom-call-expander"
	CollectiveExpander      = "collective-expander"
	OptBarrierExpander      = "opt-barrier-expander"
	ReducePrecisionExpander = "reduce-precision-expander"
	DimensionSizeExpander   = "dimension-size-expander"
	MapInliner              = "map-inliner"
	MulHiExpander           = "mulhi-expander"
	TopKDecomposer          = "topk-decomposer"
	TriangularSolveExpander = "triangular-solve-expander"
	CholeskyExpander        = "cholesky-expander"
	BitcastExpander         = "bitcast-expander"
	AfterAllExpander        = "after-all-expander"
	RngExpander             = "rng-expander"
	RngStateExpander        = "rng-state"
)

func expanded(name string, arity int, pass string, called ...string) OpInfo {
	return OpInfo{Name: name, Kind: KindExpanded, Arity: arity, Called: called, SideEffectFree: true, ExpandedBy: pass}
}

// collective is a collective op: side-effect free, as every device of a
// multi-device run executes the same program (merging two equal ones or dropping
// an unused one changes every device alike), and a one-member group exchanges
// nothing.
func collective(name string, arity int, called ...string) OpInfo {
	return expanded(name, arity, CollectiveExpander, called...)
}

func elementwise(name string, arity int) OpInfo {
	info := op(name, KindElementwise, arity)
	info.Elementwise = true
	return info
}

var opTable = [numOpcodes]OpInfo{
	OpInvalid:   {Name: "invalid"},
	OpParameter: op("parameter", KindLeaf, 0),
	OpConstant:  op("constant", KindLeaf, 0),
	OpIota:      op("iota", KindLeaf, 0),

	// The ops of class …OrComplex take c64 and c128 too (cpuref/complex.go defines
	// them); abs of a complex number is real (inferUnary).
	OpNegate:           unaryOp("negate", NumericOrComplex),
	OpAbs:              unaryOp("abs", SignedOrComplex),
	OpSign:             unaryOp("sign", SignedOrComplex),
	OpExp:              unaryOp("exponential", FloatOrComplex),
	OpExpm1:            unaryOp("exponential-minus-one", FloatOrComplex),
	OpLog:              unaryOp("log", FloatOrComplex),
	OpLog1p:            unaryOp("log-plus-one", FloatOrComplex),
	OpSqrt:             unaryOp("sqrt", FloatOrComplex),
	OpRsqrt:            unaryOp("rsqrt", FloatOrComplex),
	OpCbrt:             unaryOp("cbrt", FloatOnly),
	OpTanh:             unaryOp("tanh", FloatOrComplex),
	OpLogistic:         unaryOp("logistic", FloatOnly),
	OpSin:              unaryOp("sine", FloatOrComplex),
	OpCos:              unaryOp("cosine", FloatOrComplex),
	OpTan:              unaryOp("tan", FloatOrComplex),
	OpErf:              unaryOp("erf", FloatOnly),
	OpFloor:            unaryOp("floor", FloatOnly),
	OpCeil:             unaryOp("ceil", FloatOnly),
	OpRoundNearestEven: unaryOp("round-nearest-even", FloatOnly),
	OpRoundNearestAfz:  unaryOp("round-nearest-afz", FloatOnly), // halves away from zero
	OpIsFinite:         unaryOp("is-finite", FloatOnly),
	OpNot:              unaryOp("not", IntOrPred),
	OpPopcnt:           unaryOp("popcnt", IntOnly),
	OpClz:              unaryOp("count-leading-zeros", IntOnly),
	// real and imag of a complex operand are its parts (of the part type); of a
	// real (float) operand, as XLA allows, the operand and zeros.
	OpReal: unaryOp("real", FloatOrComplex),
	OpImag: unaryOp("imag", FloatOrComplex),

	// On pred, add and maximum are or, multiply and minimum and (StableHLO's spec).
	OpAdd:                  binaryOp("add", NumericPredOrComplex, true),
	OpSubtract:             binaryOp("subtract", NumericOrComplex, false),
	OpMultiply:             binaryOp("multiply", NumericPredOrComplex, true),
	OpDivide:               binaryOp("divide", NumericOrComplex, false),
	OpRemainder:            binaryOp("remainder", Numeric, false),
	OpMaximum:              binaryOp("maximum", NumericOrPred, true),
	OpMinimum:              binaryOp("minimum", NumericOrPred, true),
	OpPower:                binaryOp("power", NumericOrComplex, false),
	OpAtan2:                binaryOp("atan2", FloatOnly, false),
	OpAnd:                  binaryOp("and", IntOrPred, true),
	OpOr:                   binaryOp("or", IntOrPred, true),
	OpXor:                  binaryOp("xor", IntOrPred, true),
	OpShiftLeft:            binaryOp("shift-left", IntOnly, false),
	OpShiftRightLogical:    binaryOp("shift-right-logical", IntOnly, false),
	OpShiftRightArithmetic: binaryOp("shift-right-arithmetic", IntOnly, false),
	OpCompare:              elementwise("compare", 2),

	OpSelect:         elementwise("select", 3),
	OpClamp:          elementwise("clamp", 3),
	OpConvert:        elementwise("convert", 1),
	OpBitcastConvert: op("bitcast-convert", KindElementwise, 1),

	OpBroadcast:          op("broadcast", KindMovement, 1),
	OpReshape:            op("reshape", KindMovement, 1),
	OpTranspose:          op("transpose", KindMovement, 1),
	OpSlice:              op("slice", KindMovement, 1),
	OpConcatenate:        op("concatenate", KindMovement, Variadic),
	OpPad:                op("pad", KindMovement, 2),
	OpReverse:            op("reverse", KindMovement, 1),
	OpCopy:               op("copy", KindMovement, 1),
	OpDynamicSlice:       op("dynamic-slice", KindMovement, Variadic),
	OpDynamicUpdateSlice: op("dynamic-update-slice", KindMovement, Variadic),
	OpGather:             op("gather", KindMovement, 2),
	OpScatter:            op("scatter", KindMovement, Variadic, "to_apply"),

	OpReduce:           op("reduce", KindReduction, Variadic, "to_apply"),
	OpReduceWindow:     op("reduce-window", KindReduction, Variadic, "to_apply"),
	OpSelectAndScatter: op("select-and-scatter", KindReduction, 3, "select", "scatter"),
	OpDot:              op("dot", KindContraction, 2),
	OpConvolution:      op("convolution", KindContraction, 2),
	OpSort:             op("sort", KindSort, Variadic, "to_apply"),

	OpTuple:           op("tuple", KindTuple, Variadic),
	OpGetTupleElement: op("get-tuple-element", KindTuple, 1),
	OpWhile:           op("while", KindControl, 1, "condition", "body"),
	OpConditional:     op("conditional", KindControl, Variadic, "branch_computations*"),
	OpCall:            op("call", KindControl, Variadic, "to_apply"),
	OpFusion:          op("fusion", KindControl, Variadic, "calls"),

	OpBatchNormTraining:  expanded("batch-norm-training", 3, BatchNormExpander),
	OpBatchNormInference: expanded("batch-norm-inference", 5, BatchNormExpander),
	OpBatchNormGrad:      expanded("batch-norm-grad", 5, BatchNormExpander),
	OpRngBitGenerator:    expanded("rng-bit-generator", 1, RngBitGeneratorExpander),
	// A custom-call may have side effects (custom_call_has_side_effect=true); the
	// column is false so that code reading only the op table stays safe.
	OpCustomCall: {Name: "custom-call", Kind: KindExpanded, Arity: Variadic,
		Called: []string{"called_computations*"}, ExpandedBy: CustomCallExpander},

	OpAllReduce:              collective("all-reduce", Variadic, "to_apply"),
	OpAllReduceStart:         collective("all-reduce-start", Variadic, "to_apply"),
	OpAllReduceDone:          collective("all-reduce-done", 1),
	OpAllGather:              collective("all-gather", Variadic),
	OpAllGatherStart:         collective("all-gather-start", Variadic),
	OpAllGatherDone:          collective("all-gather-done", 1),
	OpReduceScatter:          collective("reduce-scatter", Variadic, "to_apply"),
	OpAllToAll:               collective("all-to-all", Variadic),
	OpCollectivePermute:      collective("collective-permute", 1),
	OpCollectivePermuteStart: collective("collective-permute-start", 1),
	OpCollectivePermuteDone:  collective("collective-permute-done", 1),
	OpReplicaID:              collective("replica-id", 0),
	OpPartitionID:            collective("partition-id", 0),
	OpCollectiveBroadcast:    collective("collective-broadcast", Variadic),
	// opt-barrier is the identity that passes must not see through: CSE never
	// merges one, fusion never fuses across one, and its expander runs last of all.
	OpOptBarrier: expanded("opt-barrier", 1, OptBarrierExpander),
	// reduce-precision rounds to a narrower float format in integer ops on the bits.
	OpReducePrecision: expanded("reduce-precision", 1, ReducePrecisionExpander),
	// get-dimension-size of a static shape is a constant.
	OpGetDimensionSize: expanded("get-dimension-size", 1, DimensionSizeExpander),
	// map applies a scalar computation elementwise; the inliner copies its body
	// over whole arrays (XLA's MapInliner).
	OpMap: expanded("map", Variadic, MapInliner, "to_apply"),
	// mulhi is the high half of the double-width integer product.
	OpMulHi: expanded("mulhi", 2, MulHiExpander),
	// topk is a sort along the last dimension and two slices (XLA's TopkDecomposer).
	OpTopK: expanded("topk", 1, TopKDecomposer),
	// triangular-solve and cholesky loop over rows and columns with dot,
	// dynamic-slice and dynamic-update-slice inside a while.
	OpTriangularSolve: expanded("triangular-solve", 2, TriangularSolveExpander),
	OpCholesky:        expanded("cholesky", 1, CholeskyExpander),
	// bitcast reinterprets its operand's bytes under its own layout: a reshape, or
	// transposes and a reshape where a layout is not row-major.
	OpBitcast: expanded("bitcast", 1, BitcastExpander),
	// after-all joins tokens into one; on one in-order device every token is the
	// same zero-byte value, so its expander makes a token constant.
	OpAfterAll: expanded("after-all", Variadic, AfterAllExpander),
	// rng draws through rng-get-and-update-state and rng-bit-generator; the state
	// lives outside the program (docs/ir.md), so neither is side-effect free: two
	// identical draws must not merge, nor an unused one vanish before its state
	// offset is taken.
	OpRng:                  sideEffecting(expanded("rng", 2, RngExpander)),
	OpRngGetAndUpdateState: sideEffecting(expanded("rng-get-and-update-state", 0, RngStateExpander)),

	// complex(re, im) makes complex numbers of two real arrays; fft is XLA's
	// Fourier transform over the last 1–3 dimensions (on the GPU: c64,
	// spirv/codegen/fft.go).
	OpComplex: elementwise("complex", 2),
	OpFft:     op("fft", KindTransform, 1),
}

// cpuOnly sets an op row's NoGPU reason.
func cpuOnly(info OpInfo, why string) OpInfo {
	info.NoGPU = why
	return info
}

// sideEffecting clears an op row's SideEffectFree column.
func sideEffecting(info OpInfo) OpInfo {
	info.SideEffectFree = false
	return info
}

// Info returns the op-table row of an opcode.
func (o Opcode) Info() *OpInfo {
	if o >= numOpcodes {
		return &opTable[OpInvalid]
	}
	return &opTable[o]
}

// String returns the XLA text name.
func (o Opcode) String() string {
	if o >= numOpcodes || o == OpInvalid {
		return fmt.Sprintf("opcode(%d)", uint8(o))
	}
	return opTable[o].Name
}

// AllOpcodes lists every valid opcode in table order.
func AllOpcodes() []Opcode {
	ops := make([]Opcode, 0, numOpcodes-1)
	for o := OpInvalid + 1; o < numOpcodes; o++ {
		ops = append(ops, o)
	}
	return ops
}

var opcodesByName = func() map[string]Opcode {
	m := make(map[string]Opcode, numOpcodes)
	for _, o := range AllOpcodes() {
		m[opTable[o].Name] = o
	}
	return m
}()

// LookupOpcode maps an XLA text name to its opcode.
func LookupOpcode(name string) (Opcode, bool) {
	o, ok := opcodesByName[name]
	return o, ok
}
