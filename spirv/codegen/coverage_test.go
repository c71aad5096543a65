package codegen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// runtimeOps never reach code generation: the runtime handles parameters, tuples
// and control flow itself, and lowers a fusion's called computation as one kernel
// computation (the fusion instruction itself is never emitted).
var runtimeOps = map[hlo.Opcode]bool{
	hlo.OpParameter: true, hlo.OpTuple: true, hlo.OpGetTupleElement: true,
	hlo.OpWhile: true, hlo.OpConditional: true, hlo.OpCall: true, hlo.OpFusion: true,
}

// opSample builds a small kernel computation rooted at one op.
type opSample func(t *testing.T) *hlo.Computation

var opSamples = map[hlo.Opcode]opSample{
	hlo.OpComplex: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "complex")
		return b.build(b.simple(hlo.OpComplex, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 9))))
	},
	hlo.OpConstant: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "constant")
		return b.build(b.constant(hlo.MustFromSlice([]int64{2, 3}, []int32{1, 2, 3, 4, 5, 6})))
	},
	hlo.OpIota: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "iota")
		return b.build(b.declared(hlo.OpIota, s(hlo.F32, 4, 5), hlo.Attributes{IotaDimension: 0}))
	},
	hlo.OpCompare: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "compare")
		return b.build(b.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpLE}, nil, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 9))))
	},
	hlo.OpSelect: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "select")
		return b.build(b.simple(hlo.OpSelect, b.param(s(hlo.Pred, 9)), b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 9))))
	},
	hlo.OpClamp: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "clamp")
		return b.build(b.simple(hlo.OpClamp, b.param(s(hlo.S32)), b.param(s(hlo.S32, 9)), b.param(s(hlo.S32))))
	},
	hlo.OpConvert: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "convert")
		return b.build(b.declared(hlo.OpConvert, s(hlo.S8, 9), hlo.Attributes{}, b.param(s(hlo.F32, 9))))
	},
	hlo.OpBitcastConvert: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "bitcast")
		return b.build(b.declared(hlo.OpBitcastConvert, s(hlo.U8, 9, 4), hlo.Attributes{}, b.param(s(hlo.F32, 9))))
	},
	hlo.OpBroadcast: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "broadcast")
		return b.build(b.declared(hlo.OpBroadcast, s(hlo.F32, 3, 9), hlo.Attributes{Dimensions: []int64{1}}, b.param(s(hlo.F32, 9))))
	},
	hlo.OpReshape: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "reshape")
		return b.build(b.declared(hlo.OpReshape, s(hlo.F32, 3, 3), hlo.Attributes{}, b.param(s(hlo.F32, 9))))
	},
	hlo.OpTranspose: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "transpose")
		return b.build(b.op(hlo.OpTranspose, hlo.Attributes{Dimensions: []int64{1, 0}}, nil, b.param(s(hlo.F32, 2, 9))))
	},
	hlo.OpSlice: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "slice")
		return b.build(b.op(hlo.OpSlice, hlo.Attributes{Slice: []hlo.SliceDim{{Start: 1, Limit: 8, Stride: 2}}}, nil, b.param(s(hlo.F32, 9))))
	},
	hlo.OpConcatenate: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "concatenate")
		return b.build(b.op(hlo.OpConcatenate, hlo.Attributes{Dimensions: []int64{0}}, nil, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 2))))
	},
	hlo.OpPad: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "pad")
		return b.build(b.op(hlo.OpPad, hlo.Attributes{Padding: []hlo.PadDim{{Low: 2, High: -1, Interior: 1}}}, nil, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32))))
	},
	hlo.OpCopy: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "copy")
		return b.build(b.op(hlo.OpCopy, hlo.Attributes{}, nil, b.param(s(hlo.S16, 3, 5))))
	},
	hlo.OpReverse: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "reverse")
		return b.build(b.op(hlo.OpReverse, hlo.Attributes{Dimensions: []int64{0}}, nil, b.param(s(hlo.F32, 9))))
	},
	hlo.OpDynamicSlice: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "dynamic_slice")
		return b.build(b.op(hlo.OpDynamicSlice, hlo.Attributes{SliceSizes: []int64{4}}, nil, b.param(s(hlo.F32, 9)), b.param(s(hlo.S32))))
	},
	hlo.OpDynamicUpdateSlice: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "dynamic_update_slice")
		return b.build(b.simple(hlo.OpDynamicUpdateSlice, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 3)), b.param(s(hlo.S32))))
	},
	hlo.OpGather: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "gather")
		gd := &hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}
		return b.build(b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{1, 4}}, nil, b.param(s(hlo.F32, 9, 4)), b.param(s(hlo.S32, 5))))
	},
	hlo.OpScatter: func(t *testing.T) *hlo.Computation { return scatterComp(t, hlo.F32, 9, 3, hlo.OpAdd, false) },
	hlo.OpReduce: func(t *testing.T) *hlo.Computation {
		return reduceComp(t, hlo.F32, []int64{3, 9}, []int64{1}, hlo.OpAdd)
	},
	hlo.OpReduceWindow: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "reduce_window")
		return b.build(b.op(hlo.OpReduceWindow, hlo.Attributes{Window: []hlo.WindowDim{hlo.NewWindowDim(3)}},
			[]*hlo.Computation{scalarComp(t, hlo.OpMaximum, hlo.F32)}, b.param(s(hlo.F32, 9)), b.param(s(hlo.F32))))
	},
	hlo.OpSelectAndScatter: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "select_and_scatter")
		w := hlo.NewWindowDim(3)
		w.Stride = 3
		return b.build(b.op(hlo.OpSelectAndScatter, hlo.Attributes{Window: []hlo.WindowDim{w}},
			[]*hlo.Computation{compareComp(t, hlo.CmpGE, hlo.F32), scalarComp(t, hlo.OpAdd, hlo.F32)},
			b.param(s(hlo.F32, 9)), b.param(s(hlo.F32, 3)), b.param(s(hlo.F32))))
	},
	hlo.OpDot: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "dot")
		dd := &hlo.DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}
		return b.build(b.op(hlo.OpDot, hlo.Attributes{Dot: dd}, nil, b.param(s(hlo.F32, 3, 9)), b.param(s(hlo.F32, 9, 2))))
	},
	hlo.OpConvolution: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "convolution")
		w := []hlo.WindowDim{hlo.NewWindowDim(3), hlo.NewWindowDim(3)}
		return b.build(b.op(hlo.OpConvolution, hlo.Attributes{Conv: convDims2D(), Window: w}, nil,
			b.param(s(hlo.F32, 1, 5, 5, 2)), b.param(s(hlo.F32, 3, 3, 2, 4))))
	},
	hlo.OpSort: func(t *testing.T) *hlo.Computation {
		b := newCB(t, "sort")
		return b.build(b.op(hlo.OpSort, hlo.Attributes{Dimensions: []int64{0}}, []*hlo.Computation{compareComp(t, hlo.CmpLT, hlo.F32)}, b.param(s(hlo.F32, 9))))
	},
}

// TestOpcodeCoverage fails for any opcode the runtime sends to code generation that
// Lower cannot turn into valid kernels.
func TestOpcodeCoverage(t *testing.T) {
	var missing []string
	for _, op := range hlo.AllOpcodes() {
		if runtimeOps[op] || op.Info().ExpandedBy != "" { // expander passes lower these first
			continue
		}
		if op.Info().NoGPU != "" { // refused before code generation (TestNoGPUOpsAreRefused)
			continue
		}
		sample := sampleFor(op)
		if sample == nil {
			missing = append(missing, op.String())
			continue
		}
		t.Run(op.String(), func(t *testing.T) {
			p := lowerOK(t, sample(t))
			require.NotEmpty(t, p.Dispatches)
		})
	}
	require.Empty(t, missing, "opcodes without a code generation sample: %s", strings.Join(missing, ", "))
}

// sampleFor is op's sample: its own, or for unary and binary ops one over nine
// elements of a type the op accepts. Nil: no sample.
func sampleFor(op hlo.Opcode) opSample {
	switch op.Info().Kind {
	case hlo.KindUnary:
		return func(t *testing.T) *hlo.Computation {
			b := newCB(t, op.String())
			return b.build(b.simple(op, b.param(s(firstAllowed(op), 9))))
		}
	case hlo.KindBinary:
		return func(t *testing.T) *hlo.Computation {
			b := newCB(t, op.String())
			dt := firstAllowed(op)
			return b.build(b.simple(op, b.param(s(dt, 9)), b.param(s(dt, 9))))
		}
	}
	return opSamples[op]
}

// firstAllowed is an element type the op accepts (f32 where it can).
func firstAllowed(op hlo.Opcode) hlo.DType {
	if op.Info().Types.Allows(hlo.F32) {
		return hlo.F32
	}
	for _, dt := range hlo.AllDTypes {
		if op.Info().Types.Allows(dt) {
			return dt
		}
	}
	return hlo.Invalid
}

// TestNoGPUOpsAreRefused: the ops the op table marks NoGPU are refused by Lower
// with an error, never a panic or a kernel.
func TestNoGPUOpsAreRefused(t *testing.T) {
	samples := map[hlo.Opcode]string{} // none at present (fft has kernels: fft.go)
	for _, op := range hlo.AllOpcodes() {
		if op.Info().NoGPU == "" {
			continue
		}
		text, ok := samples[op]
		require.True(t, ok, "no sample for the NoGPU op %v", op)
		m, err := hlo.ParseModule(text)
		require.NoError(t, err)
		_, err = Lower(m.Entry, LavapipeTarget())
		require.Error(t, err, "%v", op)
		require.Contains(t, err.Error(), "complex", "%v", op)
	}
}
