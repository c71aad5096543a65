package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildMLP builds relu(x·w + b) summed over the batch: the shape of most programs.
func buildMLP(t *testing.T) *Module {
	t.Helper()
	b := NewBuilder("mlp")
	x := b.Parameter(MakeShape(F32, 4, 3), "x")
	w := b.Parameter(MakeShape(F32, 3, 2), "w")
	bias := b.Parameter(MakeShape(F32, 2), "b")
	h := b.Add(b.Dot(x, w), b.Broadcast(bias, []int64{4, 2}, []int64{1}))
	relu := b.Max(h, b.BroadcastScalar(b.ScalarConstant(F32, 0), 4, 2))
	sum := b.Reduce([]*Instruction{relu}, []*Instruction{b.ScalarConstant(F32, 0)}, b.Reducer(OpAdd, F32), []int64{0})
	m, err := b.Build(sum)
	require.NoError(t, err)
	return m
}

func TestBuilderMLP(t *testing.T) {
	m := buildMLP(t)
	require.Len(t, m.Computations, 2)
	assert.Equal(t, "add_f32", m.Computations[0].Name)
	assert.Same(t, m.Entry, m.Computations[1])
	assert.Equal(t, MakeShape(F32, 2), m.Entry.Root.Shape)
	require.Len(t, m.Entry.Params, 3)
	assert.Equal(t, "x", m.Entry.Params[0].Name)
	assert.Equal(t, int64(2), m.Entry.Params[2].Attrs.ParameterNumber)
	assert.NoError(t, Verify(m))
}
