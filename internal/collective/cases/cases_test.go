package cases

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every case parses and verifies, names are unique, and On splits them by
// device count.
func TestCasesParse(t *testing.T) {
	names := map[string]bool{}
	for _, c := range Collectives {
		_, err := c.Module()
		require.NoError(t, err, c.Name)
		assert.False(t, names[c.Name], "%s twice", c.Name)
		names[c.Name] = true
	}
	assert.Len(t, Collectives, len(On(2))+len(On(4)))
	for _, text := range []string{MismatchedLoop, InLoop(1)} {
		_, err := Parse(text)
		require.NoError(t, err)
	}
}

// The builders' arithmetic: 1 and 2 grow to 5 and 6 (sum 11); a sum already
// at 10 runs no iteration.
func TestWants(t *testing.T) {
	a, b := LoopConditionWant(1, 2)
	assert.Equal(t, [2]float32{5, 6}, [2]float32{a, b})
	a, b = LoopConditionWant(4, 6)
	assert.Equal(t, [2]float32{4, 6}, [2]float32{a, b})
	assert.Equal(t, []float32{8, -4}, InLoopWant([]float32{1, 0}, []float32{1, -1}))
}
