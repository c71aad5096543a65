package codegen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestComplexKernelsValidate lowers a c64 and a c128 kernel for every op
// ComplexOps names (those that are not runtime ops) and validates each module;
// the device tests compare their results with cpuref.
func TestComplexKernelsValidate(t *testing.T) {
	for _, dt := range hlo.ComplexDTypes {
		t.Run(dt.String(), func(t *testing.T) { complexKernelsValidate(t, dt) })
	}
}

func complexKernelsValidate(t *testing.T, dt hlo.DType) {
	c64 := func(dims ...int64) hlo.Shape { return s(dt, dims...) }
	part := s(dt.ComplexPart(), 8)
	// constant, complex of two parts, and a convert from the other complex type.
	other := hlo.C128
	if dt == hlo.C128 {
		other = hlo.C64
	}
	lit := hlo.NewLiteral(c64(3))
	for i, z := range []complex128{complex(1, 2), complex(-3, 0.5), 0} {
		lit.SetComplex128(i, z)
	}
	samples := map[hlo.Opcode]func(b *cb) *hlo.Instruction{
		hlo.OpConstant: func(b *cb) *hlo.Instruction {
			return b.constant(lit)
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
			return b.simple(hlo.OpComplex, b.param(part), b.param(part))
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
			fromInt := b.declared(hlo.OpConvert, c64(8), hlo.Attributes{}, b.param(s(hlo.S32, 8)))
			fromPart := b.declared(hlo.OpConvert, c64(8), hlo.Attributes{}, b.param(part))
			fromOther := b.declared(hlo.OpConvert, c64(8), hlo.Attributes{}, b.param(s(other, 8)))
			return b.simple(hlo.OpAdd, b.simple(hlo.OpAdd, fromInt, fromPart), fromOther)
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
			adder := addComp(t, dt)
			return b.op(hlo.OpReduce, hlo.Attributes{Dimensions: []int64{1}}, []*hlo.Computation{adder}, b.param(c64(3, 2000)), b.param(c64()))
		},
		hlo.OpDynamicSlice: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpDynamicSlice, hlo.Attributes{SliceSizes: []int64{3}}, nil, b.param(c64(8)), b.param(s(hlo.S32)))
		},
		hlo.OpDynamicUpdateSlice: func(b *cb) *hlo.Instruction {
			return b.simple(hlo.OpDynamicUpdateSlice, b.param(c64(8)), b.param(c64(3)), b.param(s(hlo.S32)))
		},
		hlo.OpGather: func(b *cb) *hlo.Instruction {
			gd := &hlo.GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0}, IndexVectorDim: 1}
			return b.op(hlo.OpGather, hlo.Attributes{Gather: gd, SliceSizes: []int64{1, 4}}, nil, b.param(c64(8, 4)), b.param(s(hlo.S32, 3)))
		},
		hlo.OpScatter: func(b *cb) *hlo.Instruction { // every path: TestComplexScatterPaths
			return complexScatter(t, b, dt, hlo.OpAdd, false)
		},
		hlo.OpReduceWindow: func(b *cb) *hlo.Instruction {
			w := []hlo.WindowDim{{Size: 3, Stride: 2, PadLow: 1, PadHigh: 1, WindowDilation: 1, BaseDilation: 1}}
			return b.op(hlo.OpReduceWindow, hlo.Attributes{Window: w}, []*hlo.Computation{addComp(t, dt)}, b.param(c64(9)), b.param(c64()))
		},
		hlo.OpSort: func(b *cb) *hlo.Instruction {
			return b.op(hlo.OpSort, hlo.Attributes{Dimensions: []int64{1}, IsStable: true},
				[]*hlo.Computation{complexLexLess(t, dt)}, b.param(c64(3, 40)))
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
		require.True(t, ok, "no %v sample for %v", dt, op)
		t.Run(op.String(), func(t *testing.T) {
			b := newCB(t, dt.String()+"_"+op.String())
			p := lowerOK(t, b.build(sample(b)))
			assert.NotEmpty(t, p.Dispatches)
		})
	}
}

// complexScatter scatters rows of updates c[4, 6] into an operand c[10, 6] at
// s32 indices by a combiner (add, or the update itself for OpCopy).
func complexScatter(t testing.TB, b *cb, dt hlo.DType, combiner hlo.Opcode, unique bool) *hlo.Instruction {
	x, ind, upd := b.param(s(dt, 10, 6)), b.param(s(hlo.S32, 4)), b.param(s(dt, 4, 6))
	sd := &hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
		ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1, UniqueIndices: unique}
	comb := newCB(t, "combine_"+dt.String())
	cur, u := comb.param(s(dt)), comb.param(s(dt))
	root := u
	if combiner != hlo.OpCopy {
		root = comb.simple(combiner, cur, u)
	}
	return b.op(hlo.OpScatter, hlo.Attributes{Scatter: sd}, []*hlo.Computation{comb.build(root)}, x, ind, upd)
}

// TestComplexScatterPaths lowers complex scatters on each path a non-atomic
// combiner takes: unique indices (one invocation per update), rows (one
// invocation per window element) and the single serial invocation (a window
// that is not disjoint), by add and by replacement.
func TestComplexScatterPaths(t *testing.T) {
	for _, dt := range hlo.ComplexDTypes {
		for _, op := range []hlo.Opcode{hlo.OpAdd, hlo.OpCopy, hlo.OpMultiply} {
			for _, unique := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/%v/unique=%v", dt, op, unique), func(t *testing.T) {
					b := newCB(t, "scatter")
					p := lowerOK(t, b.build(complexScatter(t, b, dt, op, unique)))
					require.Len(t, p.Dispatches, 2)
				})
			}
		}
		t.Run(dt.String()+"/serial", func(t *testing.T) {
			b := newCB(t, "scatter_serial")
			x, ind, upd := b.param(s(dt, 10, 6)), b.param(s(hlo.S32, 4, 1)), b.param(s(dt, 4, 3))
			sd := &hlo.ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
				ScatterDimsToOperandDims: []int64{1}, IndexVectorDim: 1}
			p := lowerOK(t, b.build(b.op(hlo.OpScatter, hlo.Attributes{Scatter: sd}, []*hlo.Computation{addComp(t, dt)}, x, ind, upd)))
			require.Len(t, p.Dispatches, 2)
		})
	}
}

// complexLexLess is the comparator real(a) < real(b), or equal real parts
// and imag(a) < imag(b), on complex scalars of dt.
func complexLexLess(t testing.TB, dt hlo.DType) *hlo.Computation {
	b := newCB(t, "lex_less_"+dt.String())
	x, y := b.param(s(dt)), b.param(s(dt))
	cmp := func(dir hlo.ComparisonDirection, u, v *hlo.Instruction) *hlo.Instruction {
		return b.op(hlo.OpCompare, hlo.Attributes{Direction: dir}, nil, u, v)
	}
	xr, yr := b.simple(hlo.OpReal, x), b.simple(hlo.OpReal, y)
	xi, yi := b.simple(hlo.OpImag, x), b.simple(hlo.OpImag, y)
	tie := b.simple(hlo.OpAnd, cmp(hlo.CmpEQ, xr, yr), cmp(hlo.CmpLT, xi, yi))
	return b.build(b.simple(hlo.OpOr, cmp(hlo.CmpLT, xr, yr), tie))
}

// TestComplexWithoutKernelIsRefused: c64 or c128 in an op without a complex
// kernel is an error naming the instruction.
func TestComplexWithoutKernelIsRefused(t *testing.T) {
	sel := newCB(t, "real_ge")
	a, c := sel.param(s(hlo.C64)), sel.param(s(hlo.C64))
	ge := sel.build(sel.op(hlo.OpCompare, hlo.Attributes{Direction: hlo.CmpGE}, nil,
		sel.simple(hlo.OpReal, a), sel.simple(hlo.OpReal, c)))
	b := newCB(t, "select_and_scatter")
	w := []hlo.WindowDim{hlo.NewWindowDim(3)}
	w[0].Stride = 3
	ss := b.op(hlo.OpSelectAndScatter, hlo.Attributes{Window: w}, []*hlo.Computation{ge, addComp(t, hlo.C64)},
		b.param(s(hlo.C64, 9)), b.param(s(hlo.C64, 3)), b.param(s(hlo.C64)))
	_, err := Lower(b.build(ss), LavapipeTarget())
	require.ErrorIs(t, err, hlo.ErrUnsupported)
	assert.Contains(t, err.Error(), "no complex kernel for select-and-scatter")
}

// TestC128NeedsFloat64: a target without 64-bit floats, or without 64-bit
// integers (the f64 math works on encodings), refuses c128 with ErrUnsupported
// naming the instruction and the feature; c64 lowers there.
func TestC128NeedsFloat64(t *testing.T) {
	for _, c := range []struct {
		name  string
		strip func(*Target)
		want  string
	}{
		{"float64", func(t *Target) { t.Float64 = false }, "shaderFloat64"},
		{"int64", func(t *Target) { t.Int64 = false }, "shaderInt64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := LavapipeTarget()
			c.strip(&target)
			b := newCB(t, "c128_exp")
			_, err := Lower(b.build(b.simple(hlo.OpExp, b.param(s(hlo.C128, 4)))), target)
			require.ErrorIs(t, err, hlo.ErrUnsupported)
			assert.Contains(t, err.Error(), "parameter.0 (parameter) uses c128, which has f64 parts and needs")
			assert.Contains(t, err.Error(), c.want)
			b = newCB(t, "c128_fft")
			_, err = Lower(b.build(b.op(hlo.OpFft, hlo.Attributes{FftType: hlo.FFT, FftLength: []int64{8}}, nil, b.param(s(hlo.C128, 8)))), target)
			require.ErrorIs(t, err, hlo.ErrUnsupported)
			assert.Contains(t, err.Error(), "(parameter) uses c128")
			b = newCB(t, "c64_exp")
			lowerOK(t, b.build(b.simple(hlo.OpExp, b.param(s(hlo.C64, 4)))))
		})
	}
}
