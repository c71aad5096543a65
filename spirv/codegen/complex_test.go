package codegen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestComplexKernelsValidate lowers a c64 kernel for every op ComplexOps names
// (those that are not runtime ops) and validates each module; the device tests
// compare their results with cpuref.
func TestComplexKernelsValidate(t *testing.T) {
	c64 := func(dims ...int64) hlo.Shape { return s(hlo.C64, dims...) }
	samples := map[hlo.Opcode]func(b *cb) *hlo.Instruction{
		hlo.OpConstant: func(b *cb) *hlo.Instruction {
			return b.constant(hlo.MustFromSlice([]int64{3}, []complex64{complex(1, 2), complex(-3, 0.5), 0}))
		},
		hlo.OpNegate: func(b *cb) *hlo.Instruction { return b.simple(hlo.OpNegate, b.param(c64(8))) },
		hlo.OpReal:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpReal, b.param(c64(8))) },
		hlo.OpAbs:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpAbs, b.param(c64(8))) },
		hlo.OpSin:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpSin, b.param(c64(8))) },
		hlo.OpCos:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpCos, b.param(c64(8))) },
		hlo.OpSqrt:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpSqrt, b.param(c64(8))) },
		hlo.OpRsqrt:  func(b *cb) *hlo.Instruction { return b.simple(hlo.OpRsqrt, b.param(c64(8))) },
		hlo.OpLog:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpLog, b.param(c64(8))) },
		hlo.OpExp:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpExp, b.param(c64(8))) },
		hlo.OpSign:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpSign, b.param(c64(8))) },
		hlo.OpTanh:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpTanh, b.param(c64(8))) },
		hlo.OpTan:    func(b *cb) *hlo.Instruction { return b.simple(hlo.OpTan, b.param(c64(8))) },
		hlo.OpExpm1:  func(b *cb) *hlo.Instruction { return b.simple(hlo.OpExpm1, b.param(c64(8))) },
		hlo.OpLog1p:  func(b *cb) *hlo.Instruction { return b.simple(hlo.OpLog1p, b.param(c64(8))) },
		hlo.OpPower:  func(b *cb) *hlo.Instruction { return b.simple(hlo.OpPower, b.param(c64(8)), b.param(c64(8))) },
		hlo.OpImag:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpImag, b.param(c64(8))) },
		hlo.OpComplex: func(b *cb) *hlo.Instruction {
			return b.simple(hlo.OpComplex, b.param(s(hlo.F32, 8)), b.param(s(hlo.F32, 8)))
		},
		hlo.OpAdd:      func(b *cb) *hlo.Instruction { return b.simple(hlo.OpAdd, b.param(c64(8)), b.param(c64(8))) },
		hlo.OpSubtract: func(b *cb) *hlo.Instruction { return b.simple(hlo.OpSubtract, b.param(c64(8)), b.param(c64(8))) },
		hlo.OpMultiply: func(b *cb) *hlo.Instruction { return b.simple(hlo.OpMultiply, b.param(c64(8)), b.param(c64(8))) },
		hlo.OpDivide:   func(b *cb) *hlo.Instruction { return b.simple(hlo.OpDivide, b.param(c64(8)), b.param(c64(8))) },
		hlo.OpCompare: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpNE}, nil, b.param(c64(8)), b.param(c64(8)))
		},
		hlo.OpSelect: func(b *cb) *hlo.Instruction {
			return b.simple(hlo.OpSelect, b.param(s(hlo.Pred)), b.param(c64(8)), b.param(c64(8)))
		},
		hlo.OpConvert: func(b *cb) *hlo.Instruction {
			return b.declared(hlo.OpConvert, c64(8), hlo.Attributes{}, b.param(s(hlo.S32, 8)))
		},
		hlo.OpBroadcast: func(b *cb) *hlo.Instruction {
			return b.declared(hlo.OpBroadcast, c64(3, 8), hlo.Attributes{Dimensions: []int64{1}}, b.param(c64(8)))
		},
		hlo.OpReshape: func(b *cb) *hlo.Instruction {
			return b.declared(hlo.OpReshape, c64(2, 4), hlo.Attributes{}, b.param(c64(8)))
		},
		hlo.OpTranspose: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpTranspose, hlo.Attributes{Dimensions: []int64{1, 0}}, nil, b.param(c64(2, 4)))
		},
		hlo.OpSlice: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpSlice, hlo.Attributes{Slice: []hlo.SliceDim{{Start: 1, Limit: 7, Stride: 2}}}, nil, b.param(c64(8)))
		},
		hlo.OpConcatenate: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpConcatenate, hlo.Attributes{Dimensions: []int64{0}}, nil, b.param(c64(3)), b.param(c64(5)))
		},
		hlo.OpPad: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpPad, hlo.Attributes{Padding: []hlo.PadDim{{Low: 1, High: 2, Interior: 1}}}, nil, b.param(c64(4)), b.param(c64()))
		},
		hlo.OpReverse: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpReverse, hlo.Attributes{Dimensions: []int64{0}}, nil, b.param(c64(8)))
		},
		hlo.OpCopy: func(b *cb) *hlo.Instruction { return b.simple(hlo.OpCopy, b.param(c64(8))) },
		hlo.OpReduce: func(b *cb) *hlo.Instruction {
			adder := addComp(t, hlo.C64)
			return b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{adder}, b.param(c64(3, 2000)), b.param(c64()))
		},
		hlo.OpDynamicSlice: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpDynamicSlice, hlo.Attributes{SliceSizes: []int64{3}}, nil, b.param(c64(8)), b.param(s(hlo.S32)))
		},
		hlo.OpDynamicUpdateSlice: func(b *cb) *hlo.Instruction {
			return b.simple(hlo.OpDynamicUpdateSlice, b.param(c64(8)), b.param(c64(3)), b.param(s(hlo.S32)))
		},
		hlo.OpFft: func(b *cb) *hlo.Instruction { // every fft_type: TestFFTKernelsValidate
			return b.op(hlo.OpFft, hlo.Attributes{FftType: hlo.FFT, FftLength: []int64{8}}, nil, b.param(c64(3, 8)))
		},
	}
	for op := range ComplexOps {
		if runtimeOps[op] {
			continue
		}
		sample, ok := samples[op]
		require.True(t, ok, "no c64 sample for %v", op)
		t.Run(op.String(), func(t *testing.T) {
			b := newCB(t, "c64_"+op.String())
			p := lowerOK(t, b.build(sample(b)))
			assert.NotEmpty(t, p.Dispatches)
		})
	}
}

// TestComplexWithoutKernelIsRefused: c64 in an op without a complex kernel, and
// c128 anywhere, are errors naming the instruction.
func TestComplexWithoutKernelIsRefused(t *testing.T) {
	b := newCB(t, "reduce_window")
	rw := b.op(hlo.OpReduceWindow, hlo.Attributes{Window: []hlo.WindowDim{hlo.NewWindowDim(3)}},
		[]*hlo.Computation{addComp(t, hlo.C64)}, b.param(s(hlo.C64, 9)), b.param(s(hlo.C64)))
	_, err := Lower(b.build(rw), LavapipeTarget())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no complex kernel for reduce-window")
	b = newCB(t, "c128")
	_, err = Lower(b.build(b.simple(hlo.OpNegate, b.param(s(hlo.C128, 4)))), LavapipeTarget())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c128")
}
