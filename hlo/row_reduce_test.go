package hlo

import (
	"slices"
	"testing"
)

func TestRowReduceDims(t *testing.T) {
	for _, tc := range []struct {
		dims []int64
		rows []int64
		ok   bool
	}{
		{[]int64{2}, []int64{3, 4}, true},
		{[]int64{2, 1}, []int64{3}, true},
		{[]int64{1}, nil, false},       // a middle dim
		{[]int64{0, 1, 2}, nil, false}, // every dim: no rows
	} {
		b := NewBuilder("r")
		x := b.Parameter(MakeShape(F32, 3, 4, 5), "x")
		r := b.Reduce([]*Instruction{x}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpAdd, F32), tc.dims)
		if b.Err() != nil {
			t.Fatal(b.Err())
		}
		rows, ok := RowReduceDims(r)
		if ok != tc.ok || (ok && !slices.Equal(rows, tc.rows)) {
			t.Errorf("dims %v: got %v %v, want %v %v", tc.dims, rows, ok, tc.rows, tc.ok)
		}
	}
}
