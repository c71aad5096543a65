package cpuref

import "github.com/vkxla/vkxla/hlo"

// kernels is the table of kernels by opcode. Every row of hlo's op table has one
// (TestEveryOpcodeHasKernel). It is filled in init because the control-flow kernels
// call back into the evaluator, which reads this table.
var kernels map[hlo.Opcode]kernel

func init() {
	kernels = map[hlo.Opcode]kernel{
		hlo.OpParameter: evalParameter,
		hlo.OpConstant:  evalConstant,
		hlo.OpIota:      evalIota,

		hlo.OpCompare:        evalCompare,
		hlo.OpSelect:         evalSelect,
		hlo.OpClamp:          evalClamp,
		hlo.OpConvert:        evalConvert,
		hlo.OpBitcastConvert: evalBitcastConvert,

		hlo.OpBroadcast:          evalBroadcast,
		hlo.OpReshape:            evalReshape,
		hlo.OpTranspose:          evalTranspose,
		hlo.OpSlice:              evalSlice,
		hlo.OpConcatenate:        evalConcatenate,
		hlo.OpPad:                evalPad,
		hlo.OpReverse:            evalReverse,
		hlo.OpCopy:               evalCopy,
		hlo.OpDynamicSlice:       evalDynamicSlice,
		hlo.OpDynamicUpdateSlice: evalDynamicUpdateSlice,
		hlo.OpGather:             evalGather,
		hlo.OpScatter:            evalScatter,

		hlo.OpReduce:           evalReduce,
		hlo.OpReduceWindow:     evalReduceWindow,
		hlo.OpSelectAndScatter: evalSelectAndScatter,
		hlo.OpDot:              evalDot,
		hlo.OpConvolution:      evalConvolution,
		hlo.OpSort:             evalSort,

		hlo.OpTuple:           evalTuple,
		hlo.OpGetTupleElement: evalGetTupleElement,
		hlo.OpWhile:           evalWhile,
		hlo.OpConditional:     evalConditional,
		hlo.OpCall:            evalCall,
		hlo.OpFusion:          evalCall, // as a call: the kind changes nothing that is computed

		hlo.OpBatchNormTraining:      evalBatchNormTraining,
		hlo.OpBatchNormInference:     evalBatchNormInference,
		hlo.OpBatchNormGrad:          evalBatchNormGrad,
		hlo.OpRngBitGenerator:        evalRngBitGenerator,
		hlo.OpRng:                    evalRng,
		hlo.OpRngGetAndUpdateState:   evalRngGetAndUpdateState,
		hlo.OpCustomCall:             evalCustomCall,
		hlo.OpAllReduce:              evalCollective,
		hlo.OpAllReduceStart:         evalCollective,
		hlo.OpAllReduceDone:          evalAsyncDone,
		hlo.OpAllGather:              evalCollective,
		hlo.OpAllGatherStart:         evalCollective,
		hlo.OpAllGatherDone:          evalAsyncDone,
		hlo.OpReduceScatter:          evalCollective,
		hlo.OpAllToAll:               evalCollective,
		hlo.OpCollectivePermute:      evalCollective,
		hlo.OpCollectivePermuteStart: evalCollective,
		hlo.OpCollectivePermuteDone:  evalAsyncDone,
		hlo.OpReplicaID:              evalCollective,
		hlo.OpPartitionID:            evalCollective,
		hlo.OpCollectiveBroadcast:    evalCollective,
		hlo.OpOptBarrier:             evalOptBarrier,
		hlo.OpReducePrecision:        evalReducePrecision,
		hlo.OpGetDimensionSize:       evalGetDimensionSize,
		hlo.OpMap:                    evalMap,
		hlo.OpMulHi:                  evalMulHi,
		hlo.OpTopK:                   evalTopK,
		hlo.OpTriangularSolve:        evalTriangularSolve,
		hlo.OpCholesky:               evalCholesky,
		hlo.OpBitcast:                evalBitcast,
		hlo.OpAfterAll:               evalAfterAll,
	}
	// Every unary and binary elementwise op shares one kernel; the element function
	// is chosen by opcode and type (scalar_ops.go).
	for _, op := range hlo.AllOpcodes() {
		switch op.Info().Kind {
		case hlo.KindUnary:
			kernels[op] = evalUnary
		case hlo.KindBinary:
			kernels[op] = evalBinary
		}
	}
	kernels[hlo.OpComplex] = evalComplex
	kernels[hlo.OpFft] = evalFft
	wrapWideKernels() // last: it wraps the kernels above
}
