package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrintStrings(t *testing.T) {
	m, err := ParseModule(textSamples[OpReduce])
	require.NoError(t, err)
	assert.Equal(t, Print(m), m.String())
	assert.Equal(t, "%r = f32[3]{0} reduce(f32[2,3,4]{2,1,0} %x.1, f32[] %zero), dimensions={0,2}, to_apply=%add",
		m.Entry.Root.String())
	assert.Equal(t, `%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}
`, m.Computations[0].String())
}

// TestPrintMalformedModule: the printer is a debugging aid and must not panic on a
// module the verifier would reject.
func TestPrintMalformedModule(t *testing.T) {
	conv := &Instruction{Name: "conv", Op: OpConvolution, Shape: MakeShape(F32, 1),
		Attrs: Attributes{Conv: &ConvDims{InputBatch: 7, InputSpatial: []int64{-1}}}}
	c := &Computation{Name: "broken", Instructions: []*Instruction{
		{Name: "k", Op: OpConstant, Shape: Scalar(F32)},
		{Name: "n", Op: OpNegate, Shape: Scalar(F32), Operands: []*Instruction{nil}},
		{Name: "call", Op: OpCall, Shape: Scalar(F32), Called: []*Computation{nil}},
		conv,
	}}
	m := &Module{Name: "m", Entry: c}
	var text string
	require.NotPanics(t, func() { text = Print(m) })
	assert.Contains(t, text, "-> () {")
	assert.Contains(t, text, "constant({...})")
	assert.Contains(t, text, "negate(%<nil>)")
	assert.Contains(t, text, "to_apply=%<nil>")
	assert.Contains(t, text, "dim_labels=f??_o?->f?")
}
