package cpuref

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// TestTopKJSONBackendConfig: a TopK custom-call whose backend_config is JSON
// ({"k": 3}, as XLA prints it) evaluates; JSON numbers decode as float64, which
// once never equalled the result's k.
func TestTopKJSONBackendConfig(t *testing.T) {
	m := parse(t, `HloModule tk
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[1,5] parameter(0)
  ROOT tk = (f32[1,3], s32[1,3]) custom-call(x), custom_call_target="TopK", backend_config="{\"k\": 3}", called_computations={cmp}
}`)
	out, err := Eval(m, mat(dims(1, 5), float32(2), 9, -1, 7, 4))
	require.NoError(t, err)
	vals, err := hlo.Values[float32](out.Elems()[0])
	require.NoError(t, err)
	idx, err := hlo.Values[int32](out.Elems()[1])
	require.NoError(t, err)
	assert.Equal(t, []float32{9, 7, 4}, vals)
	assert.Equal(t, []int32{1, 3, 4}, idx)
}
