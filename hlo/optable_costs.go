package hlo

// The per-op facts passes use besides an op's shape rules: which ops are expensive
// (fusion computes them once) and how remat estimates the work of recomputing
// each. Kept as lists here, next to the table they fill, so that adding an op is
// one row in optable.go plus, where it applies, one entry below.

// expensiveOps: transcendental and division-like arithmetic, and the movement
// ops whose every element costs an index computation or a gather.
var expensiveOps = []Opcode{
	OpDivide, OpRemainder, OpPower, OpAtan2, OpExp, OpExpm1, OpLog, OpLog1p, OpSqrt,
	OpRsqrt, OpCbrt, OpTanh, OpLogistic, OpSin, OpCos, OpTan, OpErf, OpGather, OpConcatenate, OpPad,
}

var costModels = map[Opcode]CostModel{
	OpDot:          CostContraction,
	OpReduce:       CostWindow,
	OpReduceWindow: CostWindow,
	OpConvolution:  CostWindow,
	OpFusion:       CostCalled,
}

func init() {
	for _, op := range expensiveOps {
		opTable[op].Expensive = true
	}
	for op, c := range costModels {
		opTable[op].Cost = c
	}
}
