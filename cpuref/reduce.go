package cpuref

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// Reductions apply a called scalar computation to an accumulator and one element at
// a time. The order is part of the specification, since floating-point addition is
// not associative: see each kernel.

// splitReduceOperands splits reduce's and reduce-window's operands into N inputs of
// equal dimensions and N scalar init values of matching types.
func splitReduceOperands(ops []*hlo.Literal) (inputs, inits []*hlo.Literal, err error) {
	if len(ops) == 0 || len(ops)%2 != 0 {
		return nil, nil, fmt.Errorf("needs N inputs and N init values, got %d operands", len(ops))
	}
	n := len(ops) / 2
	inputs, inits = ops[:n], ops[n:]
	for k := range inputs {
		if !inputs[k].Shape().SameDims(inputs[0].Shape()) {
			return nil, nil, fmt.Errorf("input %d is %v, input 0 is %v", k, inputs[k].Shape(), inputs[0].Shape())
		}
		if !inits[k].Shape().IsScalar() || inits[k].DType() != inputs[k].DType() {
			return nil, nil, fmt.Errorf("init value %d is %v, want a scalar %v", k, inits[k].Shape(), inputs[k].DType())
		}
	}
	return inputs, inits, nil
}

// resultShapes lists the N array shapes of a result that is one array (N = 1) or a
// tuple of N arrays.
func resultShapes(s hlo.Shape, n int) ([]hlo.Shape, error) {
	if n == 1 && s.IsArray() {
		return []hlo.Shape{s}, nil
	}
	if !s.IsTuple() || len(s.Elems) != n {
		return nil, fmt.Errorf("result %v is not a tuple of %d arrays", s, n)
	}
	return s.Elems, nil
}

// literalsFromBits builds the result from per-output bits: a tuple when the declared
// result is one (even of a single array), else the one array.
func literalsFromBits(result hlo.Shape, shapes []hlo.Shape, values [][]uint64) *hlo.Literal {
	lits := make([]*hlo.Literal, len(shapes))
	for k, s := range shapes {
		lits[k] = hlo.NewLiteral(s)
		for i, v := range values[k] {
			lits[k].SetBits(i, v)
		}
	}
	if !result.IsTuple() {
		return lits[0]
	}
	return hlo.TupleLiteral(lits...)
}

// filledBits returns n copies of each init value's bits.
func filledBits(inits []*hlo.Literal, n int64) [][]uint64 {
	acc := make([][]uint64, len(inits))
	for k, init := range inits {
		acc[k] = make([]uint64, n)
		v := init.Bits(0)
		for i := range acc[k] {
			acc[k][i] = v
		}
	}
	return acc
}

// evalReduce reduces the listed dimensions of N inputs with to_apply(acc_0 … acc_N-1,
// x_0 … x_N-1) → (acc_0 … acc_N-1). Each output element starts at the init values
// and takes its input elements one at a time in row-major order of the reduced
// dimensions (a strictly sequential left fold; an empty reduction gives the inits).
func evalReduce(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	inputs, inits, err := splitReduceOperands(ops)
	if err != nil {
		return nil, err
	}
	n := len(inputs)
	f, shapes, err := combiner(ev, in, n)
	if err != nil {
		return nil, err
	}
	inShape := inputs[0].Shape()
	if err := checkDimList("reduce", in.Attrs.Dimensions, inShape.Rank()); err != nil {
		return nil, err
	}
	kept := hlo.Complement(inShape.Rank(), in.Attrs.Dimensions)
	outDims := pick(inShape.Dims, kept)
	// toOut[d] is input dimension d's stride in the output (0 if reduced), so that
	// one row-major pass over the input visits each output's elements in order.
	toOut := make([]int64, inShape.Rank())
	outStrides := hlo.MakeShape(hlo.S8, outDims...).Strides()
	for i, d := range kept {
		toOut[d] = outStrides[i]
	}
	acc := filledBits(inits, hlo.MakeShape(hlo.S8, outDims...).NumElements())
	if f.prog != nil && len(acc[0]) > 1 {
		if err := reduceByOutput(ev, f.prog, inputs, in.Attrs.Dimensions, acc); err != nil {
			return nil, err
		}
		return literalsFromBits(in.Shape, shapes, acc), nil
	}
	args, res := make([]uint64, 2*n), make([]uint64, n)
	i := 0
	err = forEachIndexErr(inShape.Dims, func(idx []int64) error {
		o := linearIndex(toOut, idx)
		for k := range inputs {
			args[k], args[n+k] = acc[k][o], inputs[k].Bits(i)
		}
		if err := f.call(args, res); err != nil {
			return err
		}
		for k := range inputs {
			acc[k][o] = res[k]
		}
		i++
		return nil
	})
	if err != nil {
		return nil, err
	}
	return literalsFromBits(in.Shape, shapes, acc), nil
}

// reduceByOutput is evalReduce's fold with the output elements shared out among
// the cores: each output element still takes its inputs one at a time in
// row-major order of the reduced dimensions (ascending dimension order is what the
// serial pass over the input visits), so every result is the serial one bit for
// bit. Each worker runs its own copy of the compiled combiner (its registers are
// scratch).
func reduceByOutput(ev *evaluator, prog *scalarProgram, inputs []*hlo.Literal, reduced []int64, acc [][]uint64) error {
	inShape := inputs[0].Shape()
	strides := inShape.Strides()
	kept := hlo.Complement(inShape.Rank(), reduced)
	rDims := slices.Sorted(slices.Values(reduced))
	keptDims, redDims := pick(inShape.Dims, kept), pick(inShape.Dims, rDims)
	keptStr, redStr := pick(strides, kept), pick(strides, rDims)
	redCount := hlo.MakeShape(hlo.S8, redDims...).NumElements()
	readers := make([]func(int) uint64, len(inputs))
	for k, x := range inputs {
		readers[k] = bitsReader(x)
	}
	n := len(inputs)
	parallelFor(len(acc[0]), int(max(redCount, 1))*elementCost, func(lo, hi int) {
		p := prog.clone()
		args, res := make([]uint64, 2*n), make([]uint64, n)
		out := unravel(keptDims, int64(lo))
		for o := lo; o < hi && !ev.stop.Load(); o++ {
			base := linearIndex(keptStr, out)
			for k := range n {
				args[k] = acc[k][o]
			}
			walkIndices(redDims, func(r []int64) bool {
				pos := int(base + linearIndex(redStr, r))
				for k, read := range readers {
					args[n+k] = read(pos)
				}
				p.run(args, res)
				copy(args[:n], res)
				return true
			})
			for k := range n {
				acc[k][o] = args[k]
			}
			nextIndex(keptDims, out)
		}
	})
	return ev.cancelled()
}

// reducer resolves called computation i as a scalar function of the given arity.
func reducer(ev *evaluator, in *hlo.Instruction, i, params, results int) (*scalarFn, error) {
	c, err := called(in, i)
	if err != nil {
		return nil, err
	}
	f, err := ev.scalarFunc(c)
	if err != nil {
		return nil, err
	}
	return f, f.expect(params, results)
}

// combiner resolves the N-ary combining computation of reduce, reduce-window and
// scatter, (acc_0 … acc_N-1, x_0 … x_N-1) → (acc_0 … acc_N-1), and the N array shapes
// of their result.
func combiner(ev *evaluator, in *hlo.Instruction, n int) (*scalarFn, []hlo.Shape, error) {
	f, err := reducer(ev, in, 0, 2*n, n)
	if err != nil {
		return nil, nil, err
	}
	shapes, err := resultShapes(in.Shape, n)
	if err != nil {
		return nil, nil, err
	}
	return f, shapes, nil
}

// windowOutputDim is the number of window positions along one dimension of size n:
// the base is dilated ((n-1)*base_dilation+1) and padded, the window dilated
// ((size-1)*window_dilation+1), and positions step by stride.
func windowOutputDim(n int64, w hlo.WindowDim) int64 {
	base := w.PadLow + w.PadHigh
	if n > 0 {
		base += (n-1)*w.BaseDilation + 1
	}
	window := (w.Size-1)*w.WindowDilation + 1
	if w.Size == 0 || base < window {
		return 0
	}
	return (base-window)/w.Stride + 1
}

// checkWindow validates a window against an operand's dimensions and the result's.
func checkWindow(win []hlo.WindowDim, inDims, outDims []int64) error {
	if len(win) != len(inDims) || len(outDims) != len(inDims) {
		return fmt.Errorf("window of %d dimensions for rank %d (result rank %d)", len(win), len(inDims), len(outDims))
	}
	for d, w := range win {
		if w.Size < 0 || w.Stride < 1 || w.WindowDilation < 1 || w.BaseDilation < 1 {
			return fmt.Errorf("window dimension %d is invalid: %+v", d, w)
		}
		if want := windowOutputDim(inDims[d], w); outDims[d] != want {
			return fmt.Errorf("window dimension %d gives %d positions, result declares %d", d, want, outDims[d])
		}
	}
	return nil
}

// windowSource finds the operand element under window element w of window position
// o. It reports false where that falls on padding or in a base-dilation hole,
// which contribute nothing (XLA skips them; with an identity init value this equals
// padding with the init value).
func windowSource(win []hlo.WindowDim, inStrides, inDims, o, w []int64) (int64, bool) {
	var p int64
	for d, wd := range win {
		pos := o[d]*wd.Stride + w[d]*wd.WindowDilation - wd.PadLow
		if pos < 0 || pos%wd.BaseDilation != 0 {
			return 0, false
		}
		pos /= wd.BaseDilation
		if pos >= inDims[d] {
			return 0, false
		}
		p += pos * inStrides[d]
	}
	return p, true
}

func windowSizes(win []hlo.WindowDim) []int64 {
	sizes := make([]int64, len(win))
	for d, w := range win {
		sizes[d] = w.Size
	}
	return sizes
}

// evalReduceWindow reduces each window position like reduce: starting at the init
// values, window elements are taken in row-major order of the window, skipping
// padding and dilation holes.
func evalReduceWindow(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	inputs, inits, err := splitReduceOperands(ops)
	if err != nil {
		return nil, err
	}
	n := len(inputs)
	f, shapes, err := combiner(ev, in, n)
	if err != nil {
		return nil, err
	}
	inShape, win := inputs[0].Shape(), in.Attrs.Window
	if err := checkWindow(win, inShape.Dims, shapes[0].Dims); err != nil {
		return nil, err
	}
	inStrides, sizes := inShape.Strides(), windowSizes(win)
	acc := filledBits(inits, shapes[0].NumElements())
	args, res := make([]uint64, 2*n), make([]uint64, n)
	o := 0
	err = forEachIndexErr(shapes[0].Dims, func(out []int64) error {
		err := forEachIndexErr(sizes, func(w []int64) error {
			p, ok := windowSource(win, inStrides, inShape.Dims, out, w)
			if !ok {
				return nil
			}
			for k := range inputs {
				args[k], args[n+k] = acc[k][o], inputs[k].Bits(int(p))
			}
			if err := f.call(args, res); err != nil {
				return err
			}
			for k := range inputs {
				acc[k][o] = res[k]
			}
			return nil
		})
		o++
		return err
	})
	if err != nil {
		return nil, err
	}
	return literalsFromBits(in.Shape, shapes, acc), nil
}

// evalSelectAndScatter (max-pool gradients): the result starts as the init value
// everywhere. For each source element, in row-major order, the window at its
// position is scanned in row-major order (padding skipped): the first element is
// selected, and a later element e replaces the selected s when select(s, e) is
// false. Then result[selected] = scatter(result[selected], source element), the
// argument order of StableHLO's definition (XLA's evaluator passes them the other
// way round; the usual add is indifferent). A window of padding only selects
// nothing.
func evalSelectAndScatter(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	operand, source, init := ops[0], ops[1], ops[2]
	if !init.Shape().IsScalar() || init.DType() != operand.DType() || source.DType() != operand.DType() {
		return nil, fmt.Errorf("operand %v, source %v and init %v must share one type", operand.Shape(), source.Shape(), init.Shape())
	}
	sel, err := reducer(ev, in, 0, 2, 1)
	if err != nil {
		return nil, err
	}
	scatter, err := reducer(ev, in, 1, 2, 1)
	if err != nil {
		return nil, err
	}
	win, opShape := in.Attrs.Window, operand.Shape()
	if err := checkWindow(win, opShape.Dims, source.Shape().Dims); err != nil {
		return nil, err
	}
	out := filledBits([]*hlo.Literal{init}, opShape.NumElements())[0]
	inStrides, sizes := opShape.Strides(), windowSizes(win)
	args, res := make([]uint64, 2), make([]uint64, 1)
	s := 0
	err = forEachIndexErr(source.Shape().Dims, func(pos []int64) error {
		i := s
		s++
		selected, err := selectInWindow(sel, operand, win, inStrides, opShape.Dims, sizes, pos)
		if err != nil || selected < 0 {
			return err
		}
		args[0], args[1] = out[selected], source.Bits(i)
		if err := scatter.call(args, res); err != nil {
			return err
		}
		out[selected] = res[0]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return literalsFromBits(in.Shape, []hlo.Shape{in.Shape}, [][]uint64{out}), nil
}

// selectInWindow returns the operand position select-and-scatter's select picks in
// the window at pos, or -1 if the window holds only padding.
func selectInWindow(sel *scalarFn, operand *hlo.Literal, win []hlo.WindowDim, inStrides, inDims, sizes, pos []int64) (int64, error) {
	selected := int64(-1)
	var selVal uint64
	args, res := make([]uint64, 2), make([]uint64, 1)
	err := forEachIndexErr(sizes, func(w []int64) error {
		p, ok := windowSource(win, inStrides, inDims, pos, w)
		if !ok {
			return nil
		}
		v := operand.Bits(int(p))
		if selected < 0 {
			selected, selVal = p, v
			return nil
		}
		args[0], args[1] = selVal, v
		if err := sel.call(args, res); err != nil {
			return err
		}
		if res[0] == 0 {
			selected, selVal = p, v
		}
		return nil
	})
	return selected, err
}
