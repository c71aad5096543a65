package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// literalFn calls a computation on scalar literals: the slow path of the kernels
// whose elements (c128) do not fit the 64-bit words of scalarFn. reduce,
// reduce-window, scatter, select-and-scatter and sort on c128 all fold through it.
type literalFn struct {
	ev      *evaluator
	comp    *hlo.Computation
	results int
}

// newLiteralFn is the computation in.Called[i], returning results scalars.
func newLiteralFn(ev *evaluator, in *hlo.Instruction, i, results int) (*literalFn, error) {
	comp, err := called(in, i)
	if err != nil {
		return nil, err
	}
	return &literalFn{ev: ev, comp: comp, results: results}, nil
}

// call evaluates the computation on args and returns its scalar results.
func (f *literalFn) call(args ...*hlo.Literal) ([]*hlo.Literal, error) {
	out, err := f.ev.callComputation(f.comp, args...)
	if err != nil {
		return nil, err
	}
	res, err := reducerResults(out, f.results)
	if err != nil {
		return nil, err
	}
	return res, f.ev.cancelled()
}

// combine is one step of an N-ary fold: to_apply(acc_0 … acc_N-1, x_0 … x_N-1).
func (f *literalFn) combine(acc, x []*hlo.Literal) ([]*hlo.Literal, error) {
	return f.call(append(append([]*hlo.Literal{}, acc...), x...)...)
}

// predicate calls a computation returning one pred scalar.
func (f *literalFn) predicate(args ...*hlo.Literal) (bool, error) {
	res, err := f.call(args...)
	if err != nil {
		return false, err
	}
	if !res[0].Shape().Equal(hlo.Scalar(hlo.Pred)) {
		return false, fmt.Errorf("comparator returns %v, want pred[]", res[0].Shape())
	}
	return res[0].Bytes()[0] != 0, nil
}

// elementsAt are element i of each literal, as scalar literals.
func elementsAt(ls []*hlo.Literal, i int) []*hlo.Literal {
	out := make([]*hlo.Literal, len(ls))
	for k, l := range ls {
		out[k] = scalarElement(l, i)
	}
	return out
}

// evalReduceWide is reduce over values with c128 elements, which do not fit the
// 64-bit words evalReduce folds: the same strictly sequential left fold in
// row-major order of the reduced dimensions, each step a call of to_apply on scalar
// literals (slower; the same result where both apply).
func evalReduceWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	inputs, inits, err := splitReduceOperands(ops)
	if err != nil {
		return nil, err
	}
	f, err := newLiteralFn(ev, in, 0, len(inputs))
	if err != nil {
		return nil, err
	}
	inShape := inputs[0].Shape()
	if err := checkDimList("reduce", in.Attrs.Dimensions, inShape.Rank()); err != nil {
		return nil, err
	}
	kept := hlo.Complement(inShape.Rank(), in.Attrs.Dimensions)
	outShape := hlo.MakeShape(hlo.S8, pick(inShape.Dims, kept)...)
	toOut := make([]int64, inShape.Rank())
	outStrides := outShape.Strides()
	for i, d := range kept {
		toOut[d] = outStrides[i]
	}
	acc := make([][]*hlo.Literal, outShape.NumElements())
	for o := range acc {
		acc[o] = inits
	}
	i := 0
	err = forEachIndexErr(inShape.Dims, func(idx []int64) error {
		o := linearIndex(toOut, idx)
		var err error
		acc[o], err = f.combine(acc[o], elementsAt(inputs, i))
		i++
		return err
	})
	if err != nil {
		return nil, err
	}
	return gatherResults(in.Shape, acc, len(inputs))
}

// scalarElement is element i of x as a scalar literal (its bytes copied).
func scalarElement(x *hlo.Literal, i int) *hlo.Literal {
	size := x.DType().Size()
	l, _ := hlo.LiteralFromBytes(hlo.Scalar(x.DType()), append([]byte(nil), x.Bytes()[i*size:(i+1)*size]...))
	return l
}

// reducerResults are to_apply's n results: the scalar, or the tuple's elements.
func reducerResults(out *hlo.Literal, n int) ([]*hlo.Literal, error) {
	if !out.Shape().IsTuple() {
		out = hlo.TupleLiteral(out)
	}
	if len(out.Elems()) != n {
		return nil, fmt.Errorf("to_apply returns %v, want %d scalars", out.Shape(), n)
	}
	return out.Elems(), nil
}

// gatherResults stores each output position's n scalars in the result literals.
func gatherResults(s hlo.Shape, acc [][]*hlo.Literal, n int) (*hlo.Literal, error) {
	shapes := []hlo.Shape{s}
	if s.IsTuple() {
		shapes = s.Elems
	}
	if len(shapes) != n {
		return nil, fmt.Errorf("%d results, but the instruction declares %v", n, s)
	}
	outs := make([]*hlo.Literal, n)
	for k := range outs {
		outs[k] = hlo.NewLiteral(shapes[k])
		size := shapes[k].DType.Size()
		for o, vals := range acc {
			if !vals[k].Shape().Equal(hlo.Scalar(shapes[k].DType)) {
				return nil, fmt.Errorf("to_apply result %d is %v, want %v[]", k, vals[k].Shape(), shapes[k].DType)
			}
			copy(outs[k].Bytes()[o*size:(o+1)*size], vals[k].Bytes())
		}
	}
	if s.IsTuple() {
		return hlo.TupleLiteral(outs...), nil
	}
	return outs[0], nil
}
