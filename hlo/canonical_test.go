package hlo_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

const canonicalA = `HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e (x: f32[4]) -> f32[] {
  %x = f32[4] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %z), dimensions={0}, to_apply=%sum
}
`

// The same graph with every computation and instruction named differently.
const canonicalB = `HloModule m
%plus (p: f32[], q: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  %q = f32[] parameter(1)
  ROOT %t = f32[] add(%p, %q)
}
ENTRY %main (input: f32[4]) -> f32[] {
  %input = f32[4] parameter(0)
  %zero = f32[] constant(0)
  ROOT %total = f32[] reduce(%input, %zero), dimensions={0}, to_apply=%plus
}
`

func TestCanonicalTextIgnoresNames(t *testing.T) {
	a, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	b, err := hlo.ParseModule(canonicalB)
	require.NoError(t, err)
	assert.Equal(t, hlo.CanonicalText(a), hlo.CanonicalText(b))
	assert.NotEqual(t, hlo.Print(a), hlo.Print(b))
	assert.Contains(t, hlo.Print(a), "%sum", "CanonicalText must not rename the caller's module")

	c, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	c.Entry.Root.Operands[1].Attrs.Literal = hlo.ScalarLiteral(float32(1))
	assert.NotEqual(t, hlo.CanonicalText(a), hlo.CanonicalText(c), "a different constant is a different module")
}

func TestCloneIsDeep(t *testing.T) {
	a, err := hlo.ParseModule(canonicalA)
	require.NoError(t, err)
	c := a.Clone()
	require.NoError(t, hlo.Verify(c))
	assert.Equal(t, hlo.Print(a), hlo.Print(c))
	c.Entry.Root.Name = "renamed"
	c.Entry.Root.Attrs.Dimensions[0] = 7
	assert.Equal(t, "r", a.Entry.Root.Name)
	assert.Equal(t, int64(0), a.Entry.Root.Attrs.Dimensions[0])
	assert.Same(t, c.Entry, c.Computations[len(c.Computations)-1])
}

const canonicalFusion = `HloModule m
%fused (p: f32[4], q: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %q = f32[4] parameter(1)
  ROOT %s = f32[4] add(%p, %q)
}
ENTRY %e (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  ROOT %f = f32[4] fusion(%x, %y), kind=kInput, calls=%fused
}
`

// TestCloneAndCanonicalTextKeepFusionKind: the kind is part of the module's identity.
func TestCloneAndCanonicalTextKeepFusionKind(t *testing.T) {
	a, err := hlo.ParseModule(canonicalFusion)
	require.NoError(t, err)
	c := a.Clone()
	require.NoError(t, hlo.Verify(c))
	assert.Equal(t, hlo.FusionInput, c.Entry.Root.Attrs.FusionKind)
	assert.Same(t, c.Computations[0], c.Entry.Root.Called[0], "the clone calls its own fused computation")
	assert.Equal(t, hlo.Print(a), hlo.Print(c))

	canonical := hlo.CanonicalText(a)
	assert.Contains(t, canonical, "kind=kInput, calls=%c0\n")
	loop, err := hlo.ParseModule(strings.Replace(canonicalFusion, "kind=kInput", "kind=kLoop", 1))
	require.NoError(t, err)
	assert.NotEqual(t, canonical, hlo.CanonicalText(loop), "another kind is another module")
	c.Entry.Root.Attrs.FusionKind = hlo.FusionOutput
	assert.Equal(t, hlo.FusionInput, a.Entry.Root.Attrs.FusionKind)
}
