package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// evalReduceWindowWide is reduce-window over c128 values: evalReduceWindow's
// order (each window row-major, padding and dilation holes skipped, starting at the
// init values), each step a call of to_apply on scalar literals.
func evalReduceWindowWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	inputs, inits, err := splitReduceOperands(ops)
	if err != nil {
		return nil, err
	}
	shapes, err := resultShapes(in.Shape, len(inputs))
	if err != nil {
		return nil, err
	}
	f, err := newLiteralFn(ev, in, 0, len(inputs))
	if err != nil {
		return nil, err
	}
	inShape, win := inputs[0].Shape(), in.Attrs.Window
	if err := checkWindow(win, inShape.Dims, shapes[0].Dims); err != nil {
		return nil, err
	}
	inStrides, sizes := inShape.Strides(), windowSizes(win)
	acc := make([][]*hlo.Literal, 0, shapes[0].NumElements())
	err = forEachIndexErr(shapes[0].Dims, func(out []int64) error {
		vals := inits
		err := forEachIndexErr(sizes, func(w []int64) error {
			p, ok := windowSource(win, inStrides, inShape.Dims, out, w)
			if !ok {
				return nil
			}
			var err error
			vals, err = f.combine(vals, elementsAt(inputs, int(p)))
			return err
		})
		acc = append(acc, vals)
		return err
	})
	if err != nil {
		return nil, err
	}
	return gatherResults(in.Shape, acc, len(inputs))
}

// evalSelectAndScatterWide is select-and-scatter over c128 values, in
// evalSelectAndScatter's order and argument order, select and scatter called on
// scalar literals. XLA's usual select (ge) is not defined on complex values; a
// select that orders them some other way (e.g. by real part) is.
func evalSelectAndScatterWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) != 3 {
		return nil, fmt.Errorf("select-and-scatter needs operand, source and init, got %d operands", len(ops))
	}
	operand, source, init := ops[0], ops[1], ops[2]
	if !init.Shape().IsScalar() || init.DType() != operand.DType() || source.DType() != operand.DType() {
		return nil, fmt.Errorf("operand %v, source %v and init %v must share one type", operand.Shape(), source.Shape(), init.Shape())
	}
	sel, err := newLiteralFn(ev, in, 0, 1)
	if err != nil {
		return nil, err
	}
	scatter, err := newLiteralFn(ev, in, 1, 1)
	if err != nil {
		return nil, err
	}
	win, opShape := in.Attrs.Window, operand.Shape()
	if err := checkWindow(win, opShape.Dims, source.Shape().Dims); err != nil {
		return nil, err
	}
	out := make([][]*hlo.Literal, opShape.NumElements())
	for o := range out {
		out[o] = []*hlo.Literal{init}
	}
	inStrides, sizes := opShape.Strides(), windowSizes(win)
	s := 0
	err = forEachIndexErr(source.Shape().Dims, func(pos []int64) error {
		i := s
		s++
		selected := int64(-1)
		err := forEachIndexErr(sizes, func(w []int64) error {
			p, ok := windowSource(win, inStrides, opShape.Dims, pos, w)
			if !ok {
				return nil
			}
			if selected < 0 {
				selected = p
				return nil
			}
			keep, err := sel.predicate(scalarElement(operand, int(selected)), scalarElement(operand, int(p)))
			if !keep {
				selected = p
			}
			return err
		})
		if err != nil || selected < 0 {
			return err
		}
		out[selected], err = scatter.combine(out[selected], []*hlo.Literal{scalarElement(source, i)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return gatherResults(in.Shape, out, 1)
}

// evalMapWide is map over c128 operands: to_apply called on each position's
// scalars as literals.
func evalMapWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if !in.Shape.IsArray() {
		return nil, fmt.Errorf("map result %v is not an array", in.Shape)
	}
	f, err := newLiteralFn(ev, in, 0, 1)
	if err != nil {
		return nil, err
	}
	out := make([][]*hlo.Literal, in.Shape.NumElements())
	for i := range out {
		if out[i], err = f.call(elementsAt(ops, i)...); err != nil {
			return nil, err
		}
	}
	return gatherResults(in.Shape, out, 1)
}
