package cpuref

// Kernels of the expanded ops real dumps contain: map, mulhi, topk, bitcast and
// after-all (triangular-solve and cholesky are in linalg.go).

import (
	"sort"

	"github.com/vkxla/vkxla/hlo"
)

// evalMap applies to_apply to the operands' elements at every index.
func evalMap(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	f, err := reducer(ev, in, 0, len(ops), 1)
	if err != nil {
		return nil, err
	}
	out := hlo.NewLiteral(in.Shape)
	args, res := make([]uint64, len(ops)), make([]uint64, 1)
	for i := range out.NumElements() {
		for k, x := range ops {
			args[k] = x.Bits(i)
		}
		if err := f.call(args, res); err != nil {
			return nil, err
		}
		out.SetBits(i, res[0])
	}
	return out, nil
}

// evalMulHi is hlo.MulHiBits elementwise.
func evalMulHi(_ *evaluator, _ *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x, y := ops[0], ops[1]
	dt := x.DType()
	out := hlo.NewLiteral(x.Shape())
	for i := range x.NumElements() {
		out.SetBits(i, hlo.MulHiBits(x.Bits(i), y.Bits(i), dt.Bits(), dt.IsSigned()))
	}
	return out, nil
}

// evalTopK sorts each row of the last dimension by position, stably, by value
// (descending, or ascending when largest=false; floats in IEEE total order) and
// keeps the first k values and positions.
func evalTopK(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	dt, s := x.DType(), x.Shape()
	n, k := int(s.Dims[s.Rank()-1]), int(in.Attrs.K)
	values, indices := hlo.NewLiteral(in.Shape.Elems[0]), hlo.NewLiteral(in.Shape.Elems[1])
	before := func(a, b uint64) bool { return orderedLess(dt, b, a) }
	if in.Attrs.Smallest {
		before = func(a, b uint64) bool { return orderedLess(dt, a, b) }
	}
	pos := make([]int, n)
	for row := 0; row*n < x.NumElements(); row++ {
		for j := range pos {
			pos[j] = j
		}
		sort.SliceStable(pos, func(a, b int) bool { return before(x.Bits(row*n+pos[a]), x.Bits(row*n+pos[b])) })
		for j, p := range pos[:k] {
			values.SetBits(row*k+j, x.Bits(row*n+p))
			indices.SetInt64(row*k+j, int64(p))
		}
	}
	return hlo.TupleLiteral(values, indices), nil
}

// orderedLess orders elements of dt: floats in IEEE total order, integers by value.
func orderedLess(dt hlo.DType, a, b uint64) bool {
	switch {
	case dt.IsFloat():
		return totalOrderKey(dt, a) < totalOrderKey(dt, b)
	case dt.IsSigned():
		return signExtend(dt, a) < signExtend(dt, b)
	}
	return a < b
}

// evalBitcast reads the operand's bytes in the memory order of its layout and
// writes them in that of the result's: element idx of the result sits at the
// memory offset its layout gives it, and the operand element at that offset is
// found by its own layout. The bits pass unchanged.
func evalBitcast(_ *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	x := ops[0]
	var ol, rl []int64
	if l := in.Attrs.Layouts; l != nil {
		ol, rl = l.Operand, l.Result
	}
	xs, rs := x.Shape(), in.Shape
	if ol == nil {
		ol = hlo.RowMajor(xs.Rank())
	}
	if rl == nil {
		rl = hlo.RowMajor(rs.Rank())
	}
	out := hlo.NewLiteral(rs)
	xStrides := xs.Strides()
	i := 0
	forEachIndex(rs.Dims, func(idx []int64) {
		off := memoryOffset(rs.Dims, rl, idx)
		var at int64
		for _, d := range ol { // minor first: peel each operand index off the offset
			at += off % xs.Dims[d] * xStrides[d]
			off /= xs.Dims[d]
		}
		out.SetBits(i, x.Bits(int(at)))
		i++
	})
	return out, nil
}

// memoryOffset is idx's position in memory under a minor-to-major layout.
func memoryOffset(dims, layout, idx []int64) int64 {
	var off, stride int64 = 0, 1
	for _, d := range layout {
		off += idx[d] * stride
		stride *= dims[d]
	}
	return off
}

// evalAfterAll is a token: a value of no bytes.
func evalAfterAll(_ *evaluator, _ *hlo.Instruction, _ []*hlo.Literal) (*hlo.Literal, error) {
	return hlo.NewLiteral(hlo.Scalar(hlo.Token)), nil
}
