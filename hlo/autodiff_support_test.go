package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReemit(t *testing.T) {
	src := NewBuilder("src")
	x := src.Parameter(MakeShape(F32, 2, 3), "x")
	bc := src.Broadcast(x, []int64{4, 2, 3}, []int64{1, 2})
	red := src.Reduce([]*Instruction{bc}, []*Instruction{src.ScalarConstant(F32, 0)}, src.Reducer(OpAdd, F32), []int64{0})
	require.NoError(t, src.Err())

	dst := NewBuilder("dst")
	y := dst.Parameter(MakeShape(F32, 2, 3), "y")
	nb := dst.Reemit(bc, []*Instruction{y})
	require.NoError(t, dst.Err())
	assert.True(t, nb.Shape.Equal(MakeShape(F32, 4, 2, 3)), "the declared broadcast shape is kept: %v", nb.Shape)
	assert.Equal(t, []int64{1, 2}, nb.Attrs.Dimensions)
	nr := dst.Reemit(red, []*Instruction{nb, dst.Reemit(red.Operands[1], nil)})
	require.NoError(t, dst.Err())
	assert.True(t, nr.Shape.Equal(MakeShape(F32, 2, 3)), "the reduce's shape is inferred: %v", nr.Shape)
	assert.Same(t, red.Called[0], nr.Called[0])
	bc.Attrs.Dimensions[0] = 9
	assert.Equal(t, int64(1), nb.Attrs.Dimensions[0], "attributes are copied")

	// Wrong operands are the builder's usual error; parameters and nil are refused.
	bad := NewBuilder("bad")
	z := bad.Parameter(MakeShape(F32, 5), "z")
	assert.Nil(t, bad.Reemit(bc, []*Instruction{z}))
	assert.ErrorContains(t, bad.Err(), "broadcast")
	for _, in := range []*Instruction{x, nil} {
		b := NewBuilder("b")
		assert.Nil(t, b.Reemit(in, nil))
		assert.Error(t, b.Err())
	}
}
