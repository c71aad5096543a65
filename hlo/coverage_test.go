package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opSamples builds, for every opcode, one instruction of that op with the builder
// (the instruction returned is the module root). The printer/parser and cpuref
// coverage tests in this package may reuse it through sampleModule.
var opSamples = map[Opcode]func(b *Builder) *Instruction{
	OpComplex: func(b *Builder) *Instruction {
		return b.Complex(b.Parameter(MakeShape(F32, 2, 3), "re"), b.Parameter(MakeShape(F32, 2, 3), "im"))
	},
	OpFft:       func(b *Builder) *Instruction { return b.Fft(b.Parameter(MakeShape(F32, 2, 8), "x"), RFFT, 8) },
	OpParameter: func(b *Builder) *Instruction { return b.Parameter(MakeShape(F32, 2, 3), "p") },
	OpConstant: func(b *Builder) *Instruction {
		return b.Constant(MustFromSlice([]int64{2}, []float32{1.5, -2}))
	},
	OpIota: func(b *Builder) *Instruction { return b.Iota(MakeShape(S32, 2, 3), 1) },

	OpCompare: func(b *Builder) *Instruction { return b.Compare(f32x23(b, "x"), f32x23(b, "y"), CmpLT) },
	OpSelect: func(b *Builder) *Instruction {
		return b.Select(b.Parameter(MakeShape(Pred, 2, 3), "p"), f32x23(b, "x"), f32x23(b, "y"))
	},
	OpClamp: func(b *Builder) *Instruction {
		return b.Clamp(b.ScalarConstant(F32, -1), f32x23(b, "x"), b.ScalarConstant(F32, 1))
	},
	OpConvert:        func(b *Builder) *Instruction { return b.Convert(f32x23(b, "x"), S32) },
	OpBitcastConvert: func(b *Builder) *Instruction { return b.BitcastConvert(f32x23(b, "x"), U16) },

	OpBroadcast: func(b *Builder) *Instruction {
		return b.Broadcast(b.Parameter(MakeShape(F32, 3), "x"), []int64{2, 3}, []int64{1})
	},
	OpReshape:   func(b *Builder) *Instruction { return b.Reshape(f32x23(b, "x"), 3, 2) },
	OpTranspose: func(b *Builder) *Instruction { return b.Transpose(f32x23(b, "x"), 1, 0) },
	OpSlice: func(b *Builder) *Instruction {
		return b.Slice(b.Parameter(MakeShape(F32, 4, 6), "x"), []int64{1, 0}, []int64{4, 6}, []int64{2, 3})
	},
	OpConcatenate: func(b *Builder) *Instruction {
		return b.Concatenate(0, f32x23(b, "x"), b.Parameter(MakeShape(F32, 1, 3), "y"))
	},
	OpPad: func(b *Builder) *Instruction {
		return b.Pad(f32x23(b, "x"), b.ScalarConstant(F32, 0), []PadDim{{1, 0, 1}, {0, -1, 0}})
	},
	OpReverse: func(b *Builder) *Instruction { return b.Reverse(f32x23(b, "x"), 0) },
	OpCopy:    func(b *Builder) *Instruction { return b.Copy(f32x23(b, "x")) },
	OpDynamicSlice: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 4, 5), "x")
		i := b.Parameter(Scalar(S32), "i")
		return b.DynamicSlice(x, []*Instruction{i, b.ScalarConstant(S32, 1)}, []int64{2, 2})
	},
	OpDynamicUpdateSlice: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 4, 5), "x")
		u := b.Parameter(MakeShape(F32, 2, 2), "u")
		i := b.Parameter(Scalar(S32), "i")
		return b.DynamicUpdateSlice(x, u, []*Instruction{i, i})
	},
	OpGather: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 5, 4), "x")
		idx := b.Parameter(MakeShape(S32, 3), "idx")
		return b.Gather(x, idx, GatherDims{OffsetDims: []int64{1}, CollapsedSliceDims: []int64{0},
			StartIndexMap: []int64{0}, IndexVectorDim: 1}, []int64{1, 4})
	},
	OpScatter: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 5, 4), "x")
		idx := b.Parameter(MakeShape(S32, 3), "idx")
		u := b.Parameter(MakeShape(F32, 3, 4), "u")
		return b.Scatter([]*Instruction{x}, idx, []*Instruction{u}, b.Reducer(OpAdd, F32),
			ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0},
				ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1})
	},

	OpReduce: func(b *Builder) *Instruction {
		return b.Reduce([]*Instruction{f32x23(b, "x")}, []*Instruction{b.ScalarConstant(F32, 0)},
			b.Reducer(OpAdd, F32), []int64{1})
	},
	OpReduceWindow: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 4, 6), "x")
		return b.ReduceWindow([]*Instruction{x}, []*Instruction{b.ScalarConstant(F32, 0)},
			b.Reducer(OpMaximum, F32), MakeWindow([]int64{2, 2}, []int64{2, 2}))
	},
	OpSelectAndScatter: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 4, 6), "x")
		src := b.Parameter(MakeShape(F32, 2, 3), "src")
		return b.SelectAndScatter(x, src, b.ScalarConstant(F32, 0), b.Comparator(CmpGE, F32),
			b.Reducer(OpAdd, F32), MakeWindow([]int64{2, 2}, []int64{2, 2}))
	},
	OpDot: func(b *Builder) *Instruction {
		return b.Dot(f32x23(b, "x"), b.Parameter(MakeShape(F32, 3, 4), "y"))
	},
	OpConvolution: func(b *Builder) *Instruction {
		in := b.Parameter(MakeShape(F32, 1, 3, 5, 5), "in")
		k := b.Parameter(MakeShape(F32, 4, 3, 3, 3), "k")
		return b.Conv(in, k, MakeWindow([]int64{3, 3}, nil), DefaultConvDims(2), 1, 1)
	},
	OpSort: func(b *Builder) *Instruction {
		return b.Sort([]*Instruction{f32x23(b, "x")}, b.Comparator(CmpLT, F32), 1, true)
	},

	OpTuple: func(b *Builder) *Instruction {
		return b.Tuple(f32x23(b, "x"), b.Parameter(Scalar(S32), "n"))
	},
	OpGetTupleElement: func(b *Builder) *Instruction {
		t := b.Parameter(MakeTuple(MakeShape(F32, 2), Scalar(S32)), "t")
		return b.GetTupleElement(t, 1)
	},
	OpWhile: func(b *Builder) *Instruction {
		return b.While(countBelow(10), incrementS32(), b.ScalarConstant(S32, 0))
	},
	OpConditional: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 2), "x")
		p := b.Parameter(Scalar(Pred), "p")
		return b.Conditional(p, []*Computation{unaryComp(OpExp), unaryComp(OpNegate)},
			[]*Instruction{x, x})
	},
	OpCall: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 2), "x")
		return b.Call(unaryComp(OpExp), x)
	},
	OpFusion: func(b *Builder) *Instruction {
		x := b.Parameter(MakeShape(F32, 2), "x")
		y := b.Parameter(MakeShape(F32, 2), "y")
		return b.Fusion(FusionLoop, fusedMulAdd(), x, y)
	},
}

// fusedMulAdd is the flat computation (x, y: f32[2]) -> (x + y) * x.
func fusedMulAdd() *Computation {
	b := NewBuilder("fused_mul_add")
	x := b.Parameter(MakeShape(F32, 2), "x")
	y := b.Parameter(MakeShape(F32, 2), "y")
	c, err := b.BuildComputation(b.Mul(b.Add(x, y), x))
	if err != nil {
		panic(err)
	}
	return c
}

func f32x23(b *Builder, name string) *Instruction { return b.Parameter(MakeShape(F32, 2, 3), name) }

// unarySampleType is an element type each unary or binary op accepts.
func sampleType(op Opcode) DType {
	switch op.Info().Types {
	case IntOnly, IntOrPred:
		return S32
	}
	return F32
}

// countBelow is the while condition n < limit over an s32[] state.
func countBelow(limit int64) *Computation {
	b := NewBuilder("below")
	n := b.Parameter(Scalar(S32), "n")
	c, err := b.BuildComputation(b.Compare(n, b.ScalarConstant(S32, float64(limit)), CmpLT))
	if err != nil {
		panic(err)
	}
	return c
}

// incrementS32 is the while body n + 1 over an s32[] state.
func incrementS32() *Computation {
	b := NewBuilder("increment")
	n := b.Parameter(Scalar(S32), "n")
	c, err := b.BuildComputation(b.Add(n, b.ScalarConstant(S32, 1)))
	if err != nil {
		panic(err)
	}
	return c
}

// unaryComp is the computation x: f32[2] -> op(x).
func unaryComp(op Opcode) *Computation {
	b := NewBuilder(op.String() + "_f32x2")
	c, err := b.BuildComputation(b.Unary(op, b.Parameter(MakeShape(F32, 2), "x")))
	if err != nil {
		panic(err)
	}
	return c
}

// sampleBuilder returns the builder function for op: its opSamples entry, or for
// unary and binary elementwise ops one built from the op table's type class.
func sampleBuilder(op Opcode) func(b *Builder) *Instruction {
	switch op.Info().Kind {
	case KindUnary:
		return func(b *Builder) *Instruction {
			return b.Unary(op, b.Parameter(MakeShape(sampleType(op), 2, 3), "x"))
		}
	case KindBinary:
		return func(b *Builder) *Instruction {
			t := sampleType(op)
			return b.Binary(op, b.Parameter(MakeShape(t, 2, 3), "x"), b.Parameter(MakeShape(t, 2, 3), "y"))
		}
	}
	return opSamples[op]
}

// sampleModule builds a module whose root is one instruction of op.
func sampleModule(t *testing.T, op Opcode) *Module {
	t.Helper()
	build := sampleBuilder(op)
	require.NotNil(t, build, "no builder sample for %v", op)
	b := NewBuilder("sample_" + op.String())
	root := build(b)
	m, err := b.Build(root)
	require.NoError(t, err, "builder sample for %v", op)
	return m
}

// TestOpTableCoverage walks every row of the op table and fails where shape
// inference, the builder or the verifier lacks the op.
func TestOpTableCoverage(t *testing.T) {
	for _, op := range AllOpcodes() {
		t.Run(op.String(), func(t *testing.T) {
			kind := op.Info().Kind
			if kind != KindUnary && kind != KindBinary {
				assert.NotNil(t, shapeRules[op], "shape inference has no rule for %v", op)
			}
			m := sampleModule(t, op)
			root := m.Entry.Root
			require.Equal(t, op, root.Op)
			assert.NoError(t, Verify(m), "verifier rejects the builder's %v", op)
			shapes := make([]Shape, len(root.Operands))
			for i, x := range root.Operands {
				shapes[i] = x.Shape
			}
			assert.NoError(t, CheckShape(op, shapes, &root.Attrs, root.Called, root.Shape))
			if ResultIsDeclared(op) {
				_, err := InferShape(op, shapes, &root.Attrs, root.Called)
				assert.ErrorIs(t, err, ErrDeclaredShape)
				return
			}
			got, err := InferShape(op, shapes, &root.Attrs, root.Called)
			require.NoError(t, err)
			assert.True(t, got.Equal(root.Shape), "InferShape %v, builder %v", got, root.Shape)
		})
	}
}

// TestVerifierChecksEveryOp corrupts each sample's root shape and expects the
// verifier to notice, so that no op passes verification unchecked.
func TestVerifierChecksEveryOp(t *testing.T) {
	for _, op := range AllOpcodes() {
		t.Run(op.String(), func(t *testing.T) {
			m := sampleModule(t, op)
			root := m.Entry.Root
			if op == OpParameter {
				root.Attrs.ParameterNumber = 5 // any shape is a valid parameter shape
			} else {
				root.Shape = MakeShape(F64, 7)
			}
			err := Verify(m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), root.Name)
		})
	}
}
