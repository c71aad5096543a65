package cpuref

import (
	"fmt"
	"math"

	"github.com/vkxla/vkxla/hlo"
)

// forEachIndex calls f with every index of dims in row-major order (the last
// dimension fastest). idx is reused between calls. A zero-sized dimension means no
// calls; rank 0 means one call with an empty index.
func forEachIndex(dims []int64, f func(idx []int64)) {
	walkIndices(dims, func(idx []int64) bool { f(idx); return true })
}

// forEachIndexErr is forEachIndex stopping at the first error.
func forEachIndexErr(dims []int64, f func(idx []int64) error) error {
	var err error
	walkIndices(dims, func(idx []int64) bool {
		err = f(idx)
		return err == nil
	})
	return err
}

// forEachIndex is the package's forEachIndex stopping early once the evaluation is
// cancelled (evalInstruction then discards the partial result): for the kernels
// whose work per index is large.
func (ev *evaluator) forEachIndex(dims []int64, f func(idx []int64)) {
	walkIndices(dims, func(idx []int64) bool {
		f(idx)
		return !ev.stop.Load()
	})
}

// walkIndices visits the indices of dims in row-major order while f returns true.
func walkIndices(dims []int64, f func(idx []int64) bool) {
	for _, d := range dims {
		if d <= 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for f(idx) && nextIndex(dims, idx) {
	}
}

// nextIndex advances idx in row-major order and reports false after the last index.
func nextIndex(dims, idx []int64) bool {
	for d := len(dims) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < dims[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

// linearIndex is the row-major position of idx for the given strides.
func linearIndex(strides, idx []int64) int64 {
	var p int64
	for i, s := range strides {
		p += idx[i] * s
	}
	return p
}

// pick returns idx[dims[0]], idx[dims[1]], ….
func pick(idx, dims []int64) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = idx[d]
	}
	return out
}

// indexValue reads an integer index element as int64; unsigned values beyond
// MaxInt64 saturate (every such index is out of range anyway).
func indexValue(l *hlo.Literal, i int64) int64 {
	if l.DType().IsUnsigned() {
		if v := l.Uint64(int(i)); v <= math.MaxInt64 {
			return int64(v)
		}
		return math.MaxInt64
	}
	return l.Int64(int(i))
}

// clampInt64 limits v to [lo, hi]; with hi < lo the result is lo.
func clampInt64(v, lo, hi int64) int64 {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// checkDimList verifies that every entry of dims names a dimension of a rank-r
// array, so kernels can index with them without panicking.
func checkDimList(what string, dims []int64, rank int) error {
	for _, d := range dims {
		if d < 0 || int(d) >= rank {
			return fmt.Errorf("%s dimension %d out of range for rank %d", what, d, rank)
		}
	}
	return nil
}

// requireInts checks that a literal holds integers, as index operands must.
func requireInts(what string, l *hlo.Literal) error {
	if !l.DType().IsInteger() {
		return fmt.Errorf("%s must be an integer array, got %v", what, l.Shape())
	}
	return nil
}
