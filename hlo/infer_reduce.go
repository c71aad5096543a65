package hlo

import (
	"errors"
	"fmt"
	"strings"
)

// Shape rules of the reductions (reduce, reduce-window, select-and-scatter) and sort,
// with the checks of the computations they call.

// signature returns a called computation's parameter shapes and result shape.
func signature(role string, c *Computation) ([]Shape, Shape, error) {
	if c == nil {
		return nil, Shape{}, fmt.Errorf("%s computation is nil", role)
	}
	if c.Root == nil {
		return nil, Shape{}, fmt.Errorf("%s computation %q has no root", role, c.Name)
	}
	for i, p := range c.Params {
		if p == nil {
			return nil, Shape{}, fmt.Errorf("%s computation %q has a nil parameter %d", role, c.Name, i)
		}
	}
	return c.ParamShapes(), c.Root.Shape, nil
}

func formatSignature(params []Shape, result Shape) string {
	parts := make([]string, len(params))
	for i, p := range params {
		parts[i] = p.String()
	}
	return "(" + strings.Join(parts, ", ") + ") -> " + result.String()
}

// checkReducer checks a reduction computation for N inputs of the given element
// types: it takes N accumulators then N inputs, all scalars of those types, and
// returns the N accumulators (a scalar when N = 1, else an N-tuple).
func checkReducer(role string, c *Computation, types []DType) error {
	params, result, err := signature(role, c)
	if err != nil {
		return err
	}
	scalars := make([]Shape, len(types))
	for i, t := range types {
		scalars[i] = Scalar(t)
	}
	want := append(append([]Shape{}, scalars...), scalars...)
	wantResult := resultOf(scalars)
	if !shapesEqual(params, want) || !result.Equal(wantResult) {
		return fmt.Errorf("%s computation %q has signature %s, want %s", role, c.Name,
			formatSignature(params, result), formatSignature(want, wantResult))
	}
	return nil
}

func shapesEqual(a, b []Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// splitReduceOperands splits reduce and reduce-window operands into N inputs of one
// dims and N scalar init values of the inputs' element types.
func splitReduceOperands(operands []Shape) (inputs []Shape, types []DType, err error) {
	n := len(operands) / 2
	if n == 0 || len(operands) != 2*n {
		return nil, nil, fmt.Errorf("takes N inputs and N init values, got %d operands", len(operands))
	}
	inputs, inits := operands[:n], operands[n:]
	types = make([]DType, n)
	for i, x := range inputs {
		if !x.SameDims(inputs[0]) {
			return nil, nil, fmt.Errorf("inputs %v and %v have different dimensions", inputs[0], x)
		}
		if !inits[i].Equal(Scalar(x.DType)) {
			return nil, nil, fmt.Errorf("init value %d is %v, want a %v scalar for input %v", i, inits[i], x.DType, x)
		}
		types[i] = x.DType
	}
	return inputs, types, nil
}

// inferReduce: the inputs lose the reduced dimensions (any set, in any order).
func inferReduce(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	inputs, types, err := splitReduceOperands(a.operands)
	if err != nil {
		return Shape{}, err
	}
	x, dims := inputs[0], a.attrs.Dimensions
	if err := checkDimSet("dimensions", dims, x.Rank()); err != nil {
		return Shape{}, fmt.Errorf("input %v: %w", x, err)
	}
	if err := checkReducer("to_apply", a.called[0], types); err != nil {
		return Shape{}, err
	}
	var kept []int64
	for i, d := range x.Dims {
		if !containsDim(dims, int64(i)) {
			kept = append(kept, d)
		}
	}
	outs := make([]Shape, len(types))
	for i, t := range types {
		outs[i] = MakeShape(t, kept...)
	}
	return resultOf(outs), nil
}

// dilatedBound is the extent of n elements with dilation-1 holes between them.
func dilatedBound(d *dimArith, n, dilation int64) int64 {
	if n == 0 {
		return 0
	}
	return d.add(d.mul(n-1, dilation), 1)
}

// checkWindowDim checks one window dimension's fields (XLA: size, stride and both
// dilations at least 1; padding may be negative).
func checkWindowDim(i int, w WindowDim) error {
	if w.Size < 1 || w.Stride < 1 || w.BaseDilation < 1 || w.WindowDilation < 1 {
		return fmt.Errorf("window dimension %d has size %d, stride %d, dilations %d/%d; each must be at least 1",
			i, w.Size, w.Stride, w.BaseDilation, w.WindowDilation)
	}
	return nil
}

// windowOutput applies a window to the base dims: each output dim counts the window
// positions, stride apart, that fit in the base dilated by BaseDilation and padded.
func windowOutput(base Shape, window []WindowDim, allowReversal bool) ([]int64, error) {
	if len(window) != base.Rank() {
		return nil, fmt.Errorf("window has %d dimensions for %v", len(window), base)
	}
	out := make([]int64, len(window))
	for i, w := range window {
		if err := checkWindowDim(i, w); err != nil {
			return nil, err
		}
		if w.WindowReversal && !allowReversal {
			return nil, fmt.Errorf("window dimension %d is reversed; only convolution reverses windows", i)
		}
		var d dimArith
		padded := d.add(d.add(w.PadLow, dilatedBound(&d, base.Dims[i], w.BaseDilation)), w.PadHigh)
		span := dilatedBound(&d, w.Size, w.WindowDilation)
		if err := d.err(fmt.Sprintf("window dimension %d over dimension %d of %v", i, i, base)); err != nil {
			return nil, err
		}
		if padded < 0 {
			return nil, fmt.Errorf("window padding %d_%d makes dimension %d of %v negative", w.PadLow, w.PadHigh, i, base)
		}
		if span <= padded {
			out[i] = (padded-span)/w.Stride + 1
		}
	}
	return out, nil
}

func inferReduceWindow(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	inputs, types, err := splitReduceOperands(a.operands)
	if err != nil {
		return Shape{}, err
	}
	dims, err := windowOutput(inputs[0], a.attrs.Window, false)
	if err != nil {
		return Shape{}, err
	}
	if err := checkReducer("to_apply", a.called[0], types); err != nil {
		return Shape{}, err
	}
	outs := make([]Shape, len(types))
	for i, t := range types {
		outs[i] = MakeShape(t, dims...)
	}
	return resultOf(outs), nil
}

// inferSelectAndScatter: operand, source, init. The window applied to the operand
// gives the source's dims; select is (T, T) -> pred[], scatter is (T, T) -> T; the
// result has the operand's shape.
func inferSelectAndScatter(a *shapeArgs) (Shape, error) {
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x, src, init := a.operands[0], a.operands[1], a.operands[2]
	if src.DType != x.DType || !init.Equal(Scalar(x.DType)) {
		return Shape{}, fmt.Errorf("source %v and init value %v must match operand %v in element type, init a scalar", src, init, x)
	}
	dims, err := windowOutput(x, a.attrs.Window, false)
	if err != nil {
		return Shape{}, err
	}
	if want := MakeShape(x.DType, dims...); !want.Equal(src) {
		return Shape{}, fmt.Errorf("source %v must have the windowed operand shape %v", src, want)
	}
	t := Scalar(x.DType)
	if err := checkSignature("select", a.called[0], []Shape{t, t}, Scalar(Pred)); err != nil {
		return Shape{}, err
	}
	if err := checkSignature("scatter", a.called[1], []Shape{t, t}, t); err != nil {
		return Shape{}, err
	}
	return x.Clone(), nil
}

// checkSignature checks a called computation's parameters and result exactly.
func checkSignature(role string, c *Computation, params []Shape, result Shape) error {
	got, res, err := signature(role, c)
	if err != nil {
		return err
	}
	if !shapesEqual(got, params) || !res.Equal(result) {
		return fmt.Errorf("%s computation %q has signature %s, want %s", role, c.Name,
			formatSignature(got, res), formatSignature(params, result))
	}
	return nil
}

// inferSort: N operands of one dims sorted along one dimension; the comparator takes
// (lhs_0, rhs_0, lhs_1, rhs_1, …) scalars and returns pred[].
func inferSort(a *shapeArgs) (Shape, error) {
	if len(a.operands) == 0 {
		return Shape{}, errors.New("needs at least one operand")
	}
	if err := needArrays(a); err != nil {
		return Shape{}, err
	}
	x := a.operands[0]
	if len(a.attrs.Dimensions) != 1 {
		return Shape{}, fmt.Errorf("needs exactly one dimension, got %v", a.attrs.Dimensions)
	}
	if err := checkDim("dimension", a.attrs.Dimensions[0], x.Rank()); err != nil {
		return Shape{}, fmt.Errorf("operand %v: %w", x, err)
	}
	params := make([]Shape, 0, 2*len(a.operands))
	for _, s := range a.operands {
		if !s.SameDims(x) {
			return Shape{}, fmt.Errorf("operands %v and %v have different dimensions", x, s)
		}
		params = append(params, Scalar(s.DType), Scalar(s.DType))
	}
	if err := checkSignature("to_apply", a.called[0], params, Scalar(Pred)); err != nil {
		return Shape{}, err
	}
	return resultOf(a.operands), nil
}
