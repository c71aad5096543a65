package peer

import (
	"errors"
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"github.com/vkxla/vkxla/hlo"
)

// ErrUnsupported is wrapped by Translate's errors for an HLO construct the peer
// backend cannot express.
var ErrUnsupported = errors.New("not expressible on the peer backend")

// Translate builds m's entry computation on a GoMLX backend, op for op, so that
// the peer runs the very program vkxla runs (the same graph autodiff produced,
// not GoMLX's own gradient). Its parameters are m's, in order; its outputs are
// m's output leaves (a root tuple flattened). Ops the backend lacks are
// rewritten where an exact equivalent exists in ops it has (dynamic-update-slice
// of a window one wide along its dynamic axes, as a select against an iota mask;
// docs/results.md says which programs use it) and refused with ErrUnsupported
// otherwise.
func Translate(backend backends.Backend, m *hlo.Module) (backends.Executable, error) {
	t := &translator{b: backend.Builder(m.Name), ops: map[*hlo.Instruction][]backends.Op{}}
	for _, in := range m.Entry.Instructions {
		ops, err := t.instruction(in)
		if err != nil {
			return nil, fmt.Errorf("peer: %s (%s): %w", in.Name, in.Op, err)
		}
		t.ops[in] = ops
	}
	outs := t.ops[m.Entry.Root]
	// The backend refuses an op named twice among the outputs: repeat it as a copy.
	seen := map[backends.Op]bool{}
	for i, o := range outs {
		if seen[o] {
			id, err := t.b.Identity(o)
			if err != nil {
				return nil, err
			}
			outs[i] = id
		}
		seen[outs[i]] = true
	}
	return t.b.Compile(outs, nil)
}

type translator struct {
	b   backends.Builder
	ops map[*hlo.Instruction][]backends.Op // tuples have several
}

// operand is the single op of instruction in's operand i.
func (t *translator) operand(in *hlo.Instruction, i int) backends.Op { return t.ops[in.Operands[i]][0] }

// DType maps an HLO element type to GoMLX's.
func DType(dt hlo.DType) (dtypes.DType, error) {
	switch dt {
	case hlo.Pred:
		return dtypes.Bool, nil
	case hlo.S32:
		return dtypes.Int32, nil
	case hlo.S64:
		return dtypes.Int64, nil
	case hlo.F32:
		return dtypes.Float32, nil
	case hlo.F64:
		return dtypes.Float64, nil
	case hlo.BF16:
		return dtypes.BFloat16, nil
	}
	return dtypes.InvalidDType, fmt.Errorf("element type %v: %w", dt, ErrUnsupported)
}

// Shape maps an array shape.
func Shape(s hlo.Shape) (shapes.Shape, error) {
	dt, err := DType(s.DType)
	if err != nil {
		return shapes.Shape{}, err
	}
	return shapes.Make(dt, ints(s.Dims)...), nil
}

func ints(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

var unary = map[hlo.Opcode]func(backends.Builder, backends.Op) (backends.Op, error){
	hlo.OpNegate:   backends.Builder.Neg,
	hlo.OpExp:      backends.Builder.Exp,
	hlo.OpLog:      backends.Builder.Log,
	hlo.OpRsqrt:    backends.Builder.Rsqrt,
	hlo.OpSqrt:     backends.Builder.Sqrt,
	hlo.OpTanh:     backends.Builder.Tanh,
	hlo.OpAbs:      backends.Builder.Abs,
	hlo.OpLogistic: backends.Builder.Logistic,
	hlo.OpErf:      backends.Builder.Erf,
	hlo.OpExpm1:    backends.Builder.Expm1,
	hlo.OpLog1p:    backends.Builder.Log1p,
	hlo.OpSin:      backends.Builder.Sin,
	hlo.OpCos:      backends.Builder.Cos,
	hlo.OpFloor:    backends.Builder.Floor,
	hlo.OpCeil:     backends.Builder.Ceil,
}

var binary = map[hlo.Opcode]func(backends.Builder, backends.Op, backends.Op) (backends.Op, error){
	hlo.OpAdd:      backends.Builder.Add,
	hlo.OpSubtract: backends.Builder.Sub,
	hlo.OpMultiply: backends.Builder.Mul,
	hlo.OpDivide:   backends.Builder.Div,
	hlo.OpMaximum:  backends.Builder.Max,
	hlo.OpMinimum:  backends.Builder.Min,
	hlo.OpPower:    backends.Builder.Pow,
}

var compare = map[hlo.ComparisonDirection]func(backends.Builder, backends.Op, backends.Op) (backends.Op, error){
	hlo.CmpEQ: backends.Builder.Equal, hlo.CmpNE: backends.Builder.NotEqual,
	hlo.CmpLT: backends.Builder.LessThan, hlo.CmpLE: backends.Builder.LessOrEqual,
	hlo.CmpGT: backends.Builder.GreaterThan, hlo.CmpGE: backends.Builder.GreaterOrEqual,
}

func one(op backends.Op, err error) ([]backends.Op, error) {
	if err != nil {
		return nil, err
	}
	return []backends.Op{op}, nil
}

// instruction translates one instruction of the entry computation.
func (t *translator) instruction(in *hlo.Instruction) ([]backends.Op, error) {
	if f, ok := unary[in.Op]; ok {
		return one(f(t.b, t.operand(in, 0)))
	}
	if f, ok := binary[in.Op]; ok {
		return one(f(t.b, t.operand(in, 0), t.operand(in, 1)))
	}
	switch in.Op {
	case hlo.OpParameter:
		s, err := Shape(in.Shape)
		if err != nil {
			return nil, err
		}
		return one(t.b.Parameter(fmt.Sprintf("p%d", in.Attrs.ParameterNumber), s, nil))
	case hlo.OpConstant:
		return one(t.constant(in.Attrs.Literal))
	case hlo.OpCompare:
		f, ok := compare[in.Attrs.Direction]
		if !ok {
			return nil, fmt.Errorf("comparison %v: %w", in.Attrs.Direction, ErrUnsupported)
		}
		return one(f(t.b, t.operand(in, 0), t.operand(in, 1)))
	case hlo.OpSelect:
		return one(t.b.Where(t.operand(in, 0), t.operand(in, 1), t.operand(in, 2)))
	case hlo.OpClamp:
		return one(t.b.Clamp(t.operand(in, 0), t.operand(in, 1), t.operand(in, 2)))
	case hlo.OpConvert:
		dt, err := DType(in.Shape.DType)
		if err != nil {
			return nil, err
		}
		return one(t.b.ConvertDType(t.operand(in, 0), dt))
	case hlo.OpBroadcast:
		s, err := Shape(in.Shape)
		if err != nil {
			return nil, err
		}
		return one(t.b.BroadcastInDim(t.operand(in, 0), s, ints(in.Attrs.Dimensions)))
	case hlo.OpReshape:
		return one(t.b.Reshape(t.operand(in, 0), ints(in.Shape.Dims)...))
	case hlo.OpTranspose:
		return one(t.b.Transpose(t.operand(in, 0), ints(in.Attrs.Dimensions)...))
	case hlo.OpConcatenate:
		ops := make([]backends.Op, len(in.Operands))
		for i := range ops {
			ops[i] = t.operand(in, i)
		}
		return one(t.b.Concatenate(int(in.Attrs.Dimensions[0]), ops...))
	case hlo.OpIota:
		s, err := Shape(in.Shape)
		if err != nil {
			return nil, err
		}
		return one(t.b.Iota(s, int(in.Attrs.IotaDimension)))
	case hlo.OpDot:
		d := in.Attrs.Dot
		return one(t.b.DotGeneral(t.operand(in, 0), ints(d.LhsContracting), ints(d.LhsBatch),
			t.operand(in, 1), ints(d.RhsContracting), ints(d.RhsBatch)))
	case hlo.OpConvolution:
		return one(t.convolution(in))
	case hlo.OpReduce:
		return one(t.reduce(in))
	case hlo.OpDynamicUpdateSlice:
		return one(t.dynamicUpdateSlice(in))
	case hlo.OpTuple:
		ops := make([]backends.Op, len(in.Operands))
		for i := range ops {
			ops[i] = t.operand(in, i)
		}
		return ops, nil
	case hlo.OpGetTupleElement:
		return []backends.Op{t.ops[in.Operands[0]][in.Attrs.TupleIndex]}, nil
	}
	return nil, ErrUnsupported
}

// constant makes an array literal a backend constant.
func (t *translator) constant(lit *hlo.Literal) (backends.Op, error) {
	flat, err := FlatData(lit)
	if err != nil {
		return nil, err
	}
	return t.b.Constant(flat, ints(lit.Shape().Dims)...)
}

func (t *translator) convolution(in *hlo.Instruction) (backends.Op, error) {
	cd := in.Attrs.Conv
	axes := backends.ConvolveAxesConfig{
		InputBatch: int(cd.InputBatch), InputChannels: int(cd.InputFeature), InputSpatial: ints(cd.InputSpatial),
		KernelInputChannels: int(cd.KernelInput), KernelOutputChannels: int(cd.KernelOutput), KernelSpatial: ints(cd.KernelSpatial),
		OutputBatch: int(cd.OutputBatch), OutputChannels: int(cd.OutputFeature), OutputSpatial: ints(cd.OutputSpatial),
	}
	n := len(in.Attrs.Window)
	strides, pads := make([]int, n), make([][2]int, n)
	inDil, kDil := make([]int, n), make([]int, n)
	for i, w := range in.Attrs.Window {
		if w.WindowReversal {
			return nil, fmt.Errorf("window reversal: %w", ErrUnsupported)
		}
		strides[i], pads[i] = int(w.Stride), [2]int{int(w.PadLow), int(w.PadHigh)}
		inDil[i], kDil[i] = int(max(w.BaseDilation, 1)), int(max(w.WindowDilation, 1))
	}
	return t.b.ConvGeneral(t.operand(in, 0), t.operand(in, 1), axes, strides, pads, inDil, kDil,
		int(in.Attrs.FeatureGroupCount), int(in.Attrs.BatchGroupCount))
}

// reduce maps a one-operand reduce whose reducer is a single add, maximum,
// minimum or multiply of its two parameters, from that op's identity, to the
// backend's ReduceSum/Max/Min/Product.
func (t *translator) reduce(in *hlo.Instruction) (backends.Op, error) {
	if len(in.Operands) != 2 {
		return nil, fmt.Errorf("a reduce of %d operands: %w", len(in.Operands)/2, ErrUnsupported)
	}
	root := in.Called[0].Root
	init := in.Operands[1]
	if init.Op != hlo.OpConstant || len(root.Operands) != 2 || root.Operands[0].Op != hlo.OpParameter || root.Operands[1].Op != hlo.OpParameter {
		return nil, fmt.Errorf("reducer %s from %s: %w", root.Op, init.Op, ErrUnsupported)
	}
	identity := map[hlo.Opcode]float64{hlo.OpAdd: 0, hlo.OpMultiply: 1, hlo.OpMaximum: math.Inf(-1), hlo.OpMinimum: math.Inf(1)}
	want, ok := identity[root.Op]
	if !ok || init.Attrs.Literal.Float64(0) != want {
		return nil, fmt.Errorf("reducer %s from %v: %w", root.Op, init.Attrs.Literal.Float64(0), ErrUnsupported)
	}
	x, axes := t.operand(in, 0), ints(in.Attrs.Dimensions)
	switch root.Op {
	case hlo.OpAdd:
		return t.b.ReduceSum(x, axes...)
	case hlo.OpMultiply:
		return t.b.ReduceProduct(x, axes...)
	case hlo.OpMaximum:
		return t.b.ReduceMax(x, axes...)
	}
	return t.b.ReduceMin(x, axes...)
}

// dynamicUpdateSlice rewrites a dynamic-update-slice whose update spans every
// axis of the operand or is one wide on it (a KV cache's write of one position)
// as where(mask, broadcast(update), operand): mask holds on the positions
// iota = clamp(start, 0, dim − 1) of every one-wide axis. That is the op's
// definition for such updates (starts are clamped so the window fits; a full
// axis always starts at 0). Other updates are refused.
func (t *translator) dynamicUpdateSlice(in *hlo.Instruction) (backends.Op, error) {
	operand, update := in.Operands[0], in.Operands[1]
	s, err := Shape(operand.Shape)
	if err != nil {
		return nil, err
	}
	var mask backends.Op
	for axis, d := range operand.Shape.Dims {
		u := update.Shape.Dims[axis]
		if u == d {
			continue
		}
		if u != 1 {
			return nil, fmt.Errorf("an update %d wide on axis %d of %d: %w", u, axis, d, ErrUnsupported)
		}
		start := in.Operands[2+axis]
		is, err := Shape(start.Shape)
		if err != nil {
			return nil, err
		}
		at, err := t.clampIndex(t.ops[start][0], is.DType, d-1)
		if err != nil {
			return nil, err
		}
		iota, err := t.b.Iota(shapes.Make(is.DType, s.Dimensions...), axis)
		if err != nil {
			return nil, err
		}
		wide, err := t.b.BroadcastInDim(at, shapes.Make(is.DType, s.Dimensions...), nil)
		if err != nil {
			return nil, err
		}
		hit, err := t.b.Equal(iota, wide)
		if err != nil {
			return nil, err
		}
		if mask == nil {
			mask = hit
		} else if mask, err = t.b.LogicalAnd(mask, hit); err != nil {
			return nil, err
		}
	}
	upd, err := t.b.BroadcastInDim(t.ops[update][0], s, seq(len(s.Dimensions)))
	if err != nil || mask == nil {
		return upd, err
	}
	return t.b.Where(mask, upd, t.ops[operand][0])
}

// clampIndex is clamp(x, 0, hi) for a scalar index x of type dt.
func (t *translator) clampIndex(x backends.Op, dt dtypes.DType, hi int64) (backends.Op, error) {
	lo, err := t.b.Constant(scalarOf(dt, 0))
	if err != nil {
		return nil, err
	}
	top, err := t.b.Constant(scalarOf(dt, hi))
	if err != nil {
		return nil, err
	}
	return t.b.Clamp(lo, x, top)
}

func scalarOf(dt dtypes.DType, v int64) any {
	if dt == dtypes.Int64 {
		return []int64{v}
	}
	return []int32{int32(v)}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
