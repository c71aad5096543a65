package hlo

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FuzzVerify corrupts builder-made sample modules in ways the input chooses
// (operands, called computations, attributes, shapes, opcodes, order, roots,
// parameters) and checks that Verify never panics: it must return an error or
// accept the module, never crash, since the parser runs it on arbitrary text.
func FuzzVerify(f *testing.F) {
	for i := range AllOpcodes() {
		f.Add([]byte{byte(i), 0, 1, 2, 3, 1, 2, 3, 4, 2, 0, 1, 3, 5, 2, 1})
	}
	for _, seed := range hugeShapeSeeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Verify(corruptedModule(t, data)) // must not panic
	})
}

// corruptedModule is the sample module the data picks, corrupted as the data says.
func corruptedModule(t *testing.T, data []byte) *Module {
	ops := AllOpcodes()
	r := &fuzzReader{data: data}
	m := sampleModule(t, ops[r.intn(len(ops))])
	for n := 0; n < 8 && !r.done(); n++ {
		corruptModule(r, m)
	}
	return m
}

// hugeDims are dimensions appended to a corrupted shape: at and past the size limits.
var hugeDims = [][]int64{{1 << 31, 1 << 31, 4}, {MaxShapeElements}, {MaxShapeElements + 1},
	{math.MaxInt64}, {0, 1 << 62}, {1 << 25, 1 << 25, 2}}

// hugeShapeSeeds give a parameter of an elementwise sample each of hugeDims (byte 2
// picks corruption 3, the shape; the two bool bytes skip the tuple and take hugeDims).
func hugeShapeSeeds() [][]byte {
	var seeds [][]byte
	for i := range hugeDims {
		seeds = append(seeds, []byte{byte(OpNegate) - 1, 0, 3, 3, 0, 0, 1, byte(i)})
	}
	return seeds
}

// TestHugeShapeSeeds: the seeds reach the verifier's size check (the limit itself,
// hugeDims[1], passes it).
func TestHugeShapeSeeds(t *testing.T) {
	for i, seed := range hugeShapeSeeds() {
		err := Verify(corruptedModule(t, seed))
		if i == 1 {
			assert.False(t, errors.Is(err, ErrShapeTooLarge), "%v", err)
			continue
		}
		assert.ErrorIs(t, err, ErrShapeTooLarge, "seed %d", i)
	}
}

// corruptModule applies one corruption chosen by r.
func corruptModule(r *fuzzReader, m *Module) {
	all := moduleInstructions(m)
	in := all[r.intn(len(all))]
	pickInstr := func() *Instruction {
		if i := r.intn(len(all) + 1); i < len(all) {
			return all[i]
		}
		return nil
	}
	pickComp := func() *Computation {
		if i := r.intn(len(m.Computations) + 1); i < len(m.Computations) {
			return m.Computations[i]
		}
		return nil
	}
	switch r.intn(9) {
	case 0:
		if len(in.Operands) > 0 {
			in.Operands[r.intn(len(in.Operands))] = pickInstr()
		} else {
			in.Operands = append(in.Operands, pickInstr())
		}
	case 1:
		in.Called = []*Computation{pickComp(), pickComp()}[:r.intn(3)]
	case 2:
		corruptAttributes(r, &in.Attrs)
	case 3:
		in.Shape = r.shape()
		if r.bool() {
			in.Shape = MakeTuple(in.Shape, r.shape())
		} else if r.bool() {
			in.Shape.Dims = append(in.Shape.Dims, hugeDims[r.intn(len(hugeDims))]...)
		}
	case 4:
		in.Op = Opcode(r.intn(int(numOpcodes) + 2))
	case 5:
		c := m.Computations[r.intn(len(m.Computations))]
		if n := len(c.Instructions); n > 1 {
			i, j := r.intn(n), r.intn(n)
			c.Instructions[i], c.Instructions[j] = c.Instructions[j], c.Instructions[i]
		}
	case 6:
		m.Computations[r.intn(len(m.Computations))].Root = pickInstr()
	case 7:
		c := m.Computations[r.intn(len(m.Computations))]
		if len(c.Params) > 0 {
			c.Params = c.Params[:r.intn(len(c.Params))]
		}
	default:
		m.Entry = pickComp()
	}
}

func moduleInstructions(m *Module) []*Instruction {
	var all []*Instruction
	for _, c := range m.Computations {
		all = append(all, c.Instructions...)
	}
	return all
}

func corruptAttributes(r *fuzzReader, a *Attributes) {
	switch r.intn(10) {
	case 0:
		a.Dimensions = r.smalls(r.intn(4))
	case 1:
		a.Slice = []SliceDim{{r.small(), r.small(), r.small()}}
	case 2:
		a.Padding = []PadDim{{r.small(), r.small(), r.small()}, {r.small(), r.small(), r.small()}}
	case 3:
		a.Window = fuzzWindow(r, r.intn(3))
	case 4:
		a.Direction, a.CompareType = ComparisonDirection(r.intn(8)), CompareType(r.intn(7))
	case 5:
		a.Dot = &DotDims{r.smalls(r.intn(2)), r.smalls(r.intn(2)), r.smalls(r.intn(2)), r.smalls(r.intn(2))}
	case 6:
		a.Conv = &ConvDims{InputBatch: r.small(), InputFeature: r.small(), InputSpatial: r.smalls(r.intn(3)),
			KernelInput: r.small(), KernelOutput: r.small(), KernelSpatial: r.smalls(r.intn(3)),
			OutputBatch: r.small(), OutputFeature: r.small(), OutputSpatial: r.smalls(r.intn(3))}
		a.FeatureGroupCount, a.BatchGroupCount = r.small(), r.small()
	case 7:
		a.Gather = &GatherDims{OffsetDims: r.smalls(r.intn(3)), CollapsedSliceDims: r.smalls(r.intn(2)),
			StartIndexMap: r.smalls(r.intn(3)), IndexVectorDim: r.small(),
			OperandBatchingDims: r.smalls(r.intn(2)), StartIndicesBatchingDims: r.smalls(r.intn(2))}
		a.SliceSizes = r.smalls(r.intn(4))
	case 8:
		a.Scatter = &ScatterDims{UpdateWindowDims: r.smalls(r.intn(3)), InsertedWindowDims: r.smalls(r.intn(2)),
			ScatterDimsToOperandDims: r.smalls(r.intn(3)), IndexVectorDim: r.small(),
			InputBatchingDims: r.smalls(r.intn(2)), ScatterIndicesBatchingDims: r.smalls(r.intn(2))}
	default:
		a.TupleIndex, a.ParameterNumber, a.IotaDimension = r.small(), r.small(), r.small()
		if r.bool() {
			a.Literal = nil
		}
	}
}
