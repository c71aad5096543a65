package cpuref

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Data-movement kernels copy element bits; no arithmetic, so no numerics beyond
// the placement rules, which follow XLA's operation semantics.

// gatherInto fills out (of shape s) with src elements: element idx of out comes from
// src's row-major position srcPos(idx). srcPos is called from several goroutines at
// once (ranges of out are filled on every core), so it must only read what it captures.
func gatherInto(s hlo.Shape, src *hlo.Literal, srcPos func(idx []int64) int64) *hlo.Literal {
	out := hlo.NewLiteral(s)
	read := bitsReader(src)
	parallelElements(s, elementCost, func(lo, hi int) {
		idx := unravel(s.Dims, int64(lo))
		var buf [blockLen]uint64
		for b := lo; b < hi; b += blockLen {
			blk := buf[:min(blockLen, hi-b)]
			for i := range blk {
				blk[i] = read(int(srcPos(idx)))
				nextIndex(s.Dims, idx)
			}
			writeBits(out, b, blk)
		}
	})
	return out
}

// evalBroadcast: operand dimension i becomes result dimension dimensions[i]; the
// other result dimensions repeat it.
func evalBroadcast(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, dims := ops[0], in.Attrs.Dimensions
	if len(dims) != x.Shape().Rank() {
		return nil, fmt.Errorf("broadcast of %v needs %d dimensions, got %v", x.Shape(), x.Shape().Rank(), dims)
	}
	if err := checkDimList("broadcast", dims, in.Shape.Rank()); err != nil {
		return nil, err
	}
	for i, d := range dims {
		if x.Shape().Dims[i] != in.Shape.Dims[d] {
			return nil, fmt.Errorf("broadcast operand dimension %d (size %d) does not match result dimension %d (size %d)",
				i, x.Shape().Dims[i], d, in.Shape.Dims[d])
		}
	}
	strides := x.Shape().Strides()
	return gatherInto(in.Shape, x, func(idx []int64) int64 {
		var p int64
		for i, d := range dims {
			p += idx[d] * strides[i]
		}
		return p
	}), nil
}

// evalReshape keeps the row-major element order.
func evalReshape(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	if x.DType() != in.Shape.DType || int64(x.NumElements()) != in.Shape.NumElements() {
		return nil, fmt.Errorf("cannot reshape %v to %v", x.Shape(), in.Shape)
	}
	return hlo.LiteralFromBytes(in.Shape, append([]byte(nil), x.Bytes()...))
}

// evalTranspose: result dimension i is operand dimension permutation[i].
func evalTranspose(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, perm := ops[0], in.Attrs.Dimensions
	if len(perm) != x.Shape().Rank() {
		return nil, fmt.Errorf("transpose of %v needs a permutation of %d dimensions, got %v", x.Shape(), x.Shape().Rank(), perm)
	}
	if err := checkDimList("transpose", perm, x.Shape().Rank()); err != nil {
		return nil, err
	}
	strides := x.Shape().Strides()
	return gatherInto(in.Shape, x, func(idx []int64) int64 {
		var p int64
		for i, d := range perm {
			p += idx[i] * strides[d]
		}
		return p
	}), nil
}

// evalSlice takes start, start+stride, … below limit in each dimension.
func evalSlice(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, sl := ops[0], in.Attrs.Slice
	if len(sl) != x.Shape().Rank() {
		return nil, fmt.Errorf("slice of %v needs %d dimensions, got %d", x.Shape(), x.Shape().Rank(), len(sl))
	}
	for d, s := range sl {
		if s.Stride <= 0 || s.Start < 0 || s.Limit > x.Shape().Dims[d] || s.Start > s.Limit {
			return nil, fmt.Errorf("slice [%d:%d:%d] invalid for dimension %d of %v", s.Start, s.Limit, s.Stride, d, x.Shape())
		}
		if want := s.Count(); in.Shape.Dims[d] != want {
			return nil, fmt.Errorf("slice dimension %d has %d elements, result declares %d", d, want, in.Shape.Dims[d])
		}
	}
	strides := x.Shape().Strides()
	return gatherInto(in.Shape, x, func(idx []int64) int64 {
		var p int64
		for d, s := range sl {
			p += (s.Start + idx[d]*s.Stride) * strides[d]
		}
		return p
	}), nil
}

// evalConcatenate joins the operands along dimensions[0], in operand order.
func evalConcatenate(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(in.Attrs.Dimensions) != 1 {
		return nil, fmt.Errorf("concatenate needs one dimension, got %v", in.Attrs.Dimensions)
	}
	dim := in.Attrs.Dimensions[0]
	if err := checkDimList("concatenate", []int64{dim}, in.Shape.Rank()); err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	outStrides := in.Shape.Strides()
	var offset int64
	for k, x := range ops {
		if x.DType() != in.Shape.DType || x.Shape().Rank() != in.Shape.Rank() {
			return nil, fmt.Errorf("concatenate operand %d is %v, result %v", k, x.Shape(), in.Shape)
		}
		for d := range x.Shape().Dims {
			if int64(d) != dim && x.Shape().Dims[d] != in.Shape.Dims[d] {
				return nil, fmt.Errorf("concatenate operand %d is %v, result %v", k, x.Shape(), in.Shape)
			}
		}
		if offset+x.Shape().Dims[dim] > in.Shape.Dims[dim] {
			return nil, fmt.Errorf("concatenated operands exceed the result %v", in.Shape)
		}
		i := 0
		forEachIndex(x.Shape().Dims, func(idx []int64) {
			p := linearIndex(outStrides, idx) + offset*outStrides[dim]
			out.SetBits(int(p), x.Bits(i))
			i++
		})
		offset += x.Shape().Dims[dim]
	}
	if offset != in.Shape.Dims[dim] {
		return nil, fmt.Errorf("concatenated operands give %d elements along dimension %d, result declares %d", offset, dim, in.Shape.Dims[dim])
	}
	return out, nil
}

// evalPad places operand element i of each dimension at low + i*(interior+1) in the
// result, filling the rest with the padding value. Negative low/high padding cuts
// elements off the edges (after interior padding is applied).
func evalPad(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, padValue, pads := ops[0], ops[1], in.Attrs.Padding
	if !padValue.Shape().IsScalar() || padValue.DType() != x.DType() {
		return nil, fmt.Errorf("padding value %v must be a scalar of the operand type %v", padValue.Shape(), x.DType())
	}
	if len(pads) != x.Shape().Rank() {
		return nil, fmt.Errorf("pad of %v needs %d dimensions, got %d", x.Shape(), x.Shape().Rank(), len(pads))
	}
	for d, p := range pads {
		n := x.Shape().Dims[d]
		want := p.Low + p.High + n + max(n-1, 0)*p.Interior
		if p.Interior < 0 || want < 0 || in.Shape.Dims[d] != want {
			return nil, fmt.Errorf("padding %+v of dimension %d (size %d) gives %d, result declares %d", p, d, n, want, in.Shape.Dims[d])
		}
	}
	out := hlo.NewLiteral(in.Shape)
	fill := padValue.Bits(0)
	for i := 0; i < out.NumElements(); i++ {
		out.SetBits(i, fill)
	}
	outStrides := in.Shape.Strides()
	i := 0
	forEachIndex(x.Shape().Dims, func(idx []int64) {
		var p int64
		inside := true
		for d, pd := range pads {
			pos := pd.Low + idx[d]*(pd.Interior+1)
			if pos < 0 || pos >= in.Shape.Dims[d] {
				inside = false
				break
			}
			p += pos * outStrides[d]
		}
		if inside {
			out.SetBits(int(p), x.Bits(i))
		}
		i++
	})
	return out, nil
}

// evalReverse flips the listed dimensions.
// evalCopy is XLA's copy: the operand's value, in a literal of its own.
func evalCopy(_ *evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	return ops[0].Clone(), nil
}

func evalReverse(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	if err := checkDimList("reverse", in.Attrs.Dimensions, x.Shape().Rank()); err != nil {
		return nil, err
	}
	flip := make([]bool, x.Shape().Rank())
	for _, d := range in.Attrs.Dimensions {
		flip[d] = true
	}
	dims, strides := x.Shape().Dims, x.Shape().Strides()
	return gatherInto(in.Shape, x, func(idx []int64) int64 {
		var p int64
		for d, i := range idx {
			if flip[d] {
				i = dims[d] - 1 - i
			}
			p += i * strides[d]
		}
		return p
	}), nil
}

// startIndices reads dynamic-slice style start indices: one scalar operand per
// dimension, or (older form) a single rank-1 operand holding them all.
func startIndices(ops []*hlo.Literal, rank int) ([]int64, error) {
	if len(ops) == 1 && ops[0].Shape().Rank() == 1 {
		if err := requireInts("start indices", ops[0]); err != nil {
			return nil, err
		}
		if ops[0].NumElements() != rank {
			return nil, fmt.Errorf("start index vector %v for a rank-%d operand", ops[0].Shape(), rank)
		}
		starts := make([]int64, rank)
		for i := range starts {
			starts[i] = indexValue(ops[0], int64(i))
		}
		return starts, nil
	}
	if len(ops) != rank {
		return nil, fmt.Errorf("%d start indices for a rank-%d operand", len(ops), rank)
	}
	starts := make([]int64, rank)
	for i, op := range ops {
		if err := requireInts("start index", op); err != nil {
			return nil, err
		}
		if !op.Shape().IsScalar() {
			return nil, fmt.Errorf("start index %d is %v, not a scalar", i, op.Shape())
		}
		starts[i] = indexValue(op, 0)
	}
	return starts, nil
}

// clampStarts moves each start index into [0, dim-size] so the window fits, as XLA
// does for dynamic-slice and dynamic-update-slice.
func clampStarts(starts, dims, sizes []int64) error {
	for d := range starts {
		if sizes[d] < 0 || sizes[d] > dims[d] {
			return fmt.Errorf("window size %d does not fit dimension %d of size %d", sizes[d], d, dims[d])
		}
		starts[d] = clampInt64(starts[d], 0, dims[d]-sizes[d])
	}
	return nil
}

// evalDynamicSlice takes a window of the result's size at clamped start indices.
func evalDynamicSlice(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) < 1 {
		return nil, fmt.Errorf("dynamic-slice needs an operand")
	}
	x := ops[0]
	if in.Shape.Rank() != x.Shape().Rank() {
		return nil, fmt.Errorf("dynamic-slice result %v and operand %v differ in rank", in.Shape, x.Shape())
	}
	starts, err := startIndices(ops[1:], x.Shape().Rank())
	if err != nil {
		return nil, err
	}
	if err := clampStarts(starts, x.Shape().Dims, in.Shape.Dims); err != nil {
		return nil, err
	}
	strides := x.Shape().Strides()
	return gatherInto(in.Shape, x, func(idx []int64) int64 {
		var p int64
		for d, i := range idx {
			p += (starts[d] + i) * strides[d]
		}
		return p
	}), nil
}

// evalDynamicUpdateSlice overwrites a window of a copy of the operand with update,
// at start indices clamped so the update fits.
func evalDynamicUpdateSlice(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	if len(ops) < 2 {
		return nil, fmt.Errorf("dynamic-update-slice needs an operand and an update")
	}
	x, upd := ops[0], ops[1]
	if upd.DType() != x.DType() || upd.Shape().Rank() != x.Shape().Rank() {
		return nil, fmt.Errorf("update %v does not match operand %v", upd.Shape(), x.Shape())
	}
	starts, err := startIndices(ops[2:], x.Shape().Rank())
	if err != nil {
		return nil, err
	}
	if err := clampStarts(starts, x.Shape().Dims, upd.Shape().Dims); err != nil {
		return nil, err
	}
	out := x.Clone()
	strides := x.Shape().Strides()
	i := 0
	forEachIndex(upd.Shape().Dims, func(idx []int64) {
		var p int64
		for d, j := range idx {
			p += (starts[d] + j) * strides[d]
		}
		out.SetBits(int(p), upd.Bits(i))
		i++
	})
	return out, nil
}
