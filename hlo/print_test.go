package hlo

import (
	"strings"
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
		{Name: "fused", Op: OpFusion, Shape: Scalar(F32), Attrs: Attributes{FusionKind: 9}},
		conv,
	}}
	m := &Module{Name: "m", Entry: c}
	var text string
	require.NotPanics(t, func() { text = Print(m) })
	assert.Contains(t, text, "-> () {")
	assert.Contains(t, text, "constant({...})")
	assert.Contains(t, text, "negate(%<nil>)")
	assert.Contains(t, text, "to_apply=%<nil>")
	assert.Contains(t, text, "%fused = f32[] fusion(), kind=fusionkind(9)\n", "no calls= without a computation")
	assert.Contains(t, text, "dim_labels=f??_o?->f?")
}

// TestPrintFusion prints a builder-made fusion exactly as XLA writes one: kind= then
// calls=, the fused computation before its caller.
func TestPrintFusion(t *testing.T) {
	for _, kind := range []FusionKind{FusionLoop, FusionInput, FusionOutput, FusionCustom} {
		b := NewBuilder("m")
		x := b.Parameter(MakeShape(F32, 2), "x")
		y := b.Parameter(MakeShape(F32, 2), "y")
		m, err := b.Build(b.SetName(b.Fusion(kind, fusedMulAdd(), x, y), "f"))
		require.NoError(t, err)
		assert.Equal(t, "%f = f32[2]{0} fusion(f32[2]{0} %x, f32[2]{0} %y), kind="+kind.String()+", calls=%fused_mul_add",
			m.Entry.Root.String())
		assert.True(t, strings.HasPrefix(m.Computations[0].String(), "%fused_mul_add (x.1: f32[2], y.1: f32[2]) -> f32[2] {\n"),
			m.Computations[0].String())
		again, err := ParseModule(Print(m))
		require.NoError(t, err)
		assert.Equal(t, kind, again.Entry.Root.Attrs.FusionKind)
		assert.Equal(t, Print(m), Print(again))
	}
}
