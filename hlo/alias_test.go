package hlo

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aliasDump is a decode step's header as jax dumps it (donate_argnums=(1, 2)): the
// kind is printed for one entry and omitted (may-alias) for the other.
const aliasDump = `HloModule jit_step, is_scheduled=true, input_output_alias={ {0}: (1, {}, must-alias), {1}: (2, {0}) }, entry_computation_layout={(f32[4]{0}, f32[4]{0}, (f32[2]{0}, s32[]))->(f32[4]{0}, f32[2]{0}, f32[4]{0})}

ENTRY main {
  w = f32[4] parameter(0)
  c = f32[4] parameter(1)
  t = (f32[2], s32[]) parameter(2)
  s = f32[2] get-tuple-element(t), index=0
  sum = f32[4] add(w, c)
  neg = f32[2] negate(s)
  ROOT out = (f32[4], f32[2], f32[4]) tuple(sum, neg, w)
}`

func TestParseInputOutputAlias(t *testing.T) {
	m, err := ParseModule(aliasDump)
	require.NoError(t, err)
	want := []InputOutputAlias{
		{Output: []int64{0}, Param: 1, Kind: MustAlias},
		{Output: []int64{1}, Param: 2, ParamIndex: []int64{0}, Kind: MayAlias},
	}
	assert.Equal(t, want, m.InputOutputAlias)
	assert.Contains(t, Print(m), "HloModule jit_step, input_output_alias={ {0}: (1, {}, must-alias), {1}: (2, {0}, may-alias) }, entry_computation_layout=")
}

func TestInputOutputAliasRoundTrip(t *testing.T) {
	for _, text := range []string{
		`HloModule a, input_output_alias={ {0}: (1, {}, must-alias), {1}: (2, {0}, may-alias) }, entry_computation_layout={(f32[4]{0}, f32[4]{0}, (f32[2]{0}, s32[]))->(f32[4]{0}, f32[2]{0}, f32[4]{0})}`,
		`HloModule b, input_output_alias={ {}: (0, {}, may-alias) }, entry_computation_layout={(f32[4]{0})->f32[4]{0}}`,
	} {
		m, err := ParseModule(text + "\n" + aliasBody(text))
		require.NoError(t, err)
		printed := Print(m)
		assert.Contains(t, printed, text+"\n")
		again, err := ParseModule(printed)
		require.NoError(t, err)
		assert.Equal(t, printed, Print(again))
		assert.Equal(t, m.InputOutputAlias, m.Clone().InputOutputAlias)
	}
}

// aliasBody is the entry of the round-trip headers above.
func aliasBody(header string) string {
	if header[len("HloModule ")] == 'b' {
		return `ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}`
	}
	return `ENTRY main {
  w = f32[4] parameter(0)
  c = f32[4] parameter(1)
  t = (f32[2], s32[]) parameter(2)
  s = f32[2] get-tuple-element(t), index=0
  sum = f32[4] add(w, c)
  neg = f32[2] negate(s)
  ROOT out = (f32[4], f32[2], f32[4]) tuple(sum, neg, w)
}`
}

func TestCloneCopiesAliasesDeeply(t *testing.T) {
	m, err := ParseModule(`HloModule a, input_output_alias={ {0}: (1, {}, must-alias) }
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT t = (f32[4]) tuple(p)
}`)
	require.NoError(t, err)
	c := m.Clone()
	c.InputOutputAlias[0].Output[0] = 7
	c.InputOutputAlias[0].Param = 0
	assert.Equal(t, []int64{0}, m.InputOutputAlias[0].Output)
	assert.Equal(t, int64(1), m.InputOutputAlias[0].Param)
}

func TestFingerprintSeesAliases(t *testing.T) {
	body := `
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT t = (f32[4]) tuple(p)
}`
	plain, err := ParseModule("HloModule a" + body)
	require.NoError(t, err)
	aliased, err := ParseModule("HloModule a, input_output_alias={ {0}: (1, {}, must-alias) }" + body)
	require.NoError(t, err)
	may, err := ParseModule("HloModule a, input_output_alias={ {0}: (1, {}) }" + body)
	require.NoError(t, err)
	assert.NotEqual(t, Fingerprint(plain), Fingerprint(aliased))
	assert.NotEqual(t, Fingerprint(may), Fingerprint(aliased))
}

func TestInputOutputAliasErrors(t *testing.T) {
	body := `
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = (f32[2], s32[]) parameter(2)
  s = f32[2] get-tuple-element(t), index=0
  ROOT r = (f32[4], f32[2], f32[4]) tuple(p, s, q)
}`
	cases := []struct{ header, want string }{
		{`{ {0}: (5, {}) }`, "input_output_alias {0}: (5, {}, may-alias): parameter 5 is out of range"},
		{`{ {3}: (0, {}) }`, "input_output_alias {3}: (0, {}, may-alias): output: shape index {3}"},
		{`{ {}: (0, {}) }`, "names the tuple"},
		{`{ {1}: (0, {}) }`, "the output leaf is f32[2] but the parameter leaf is f32[4]"},
		{`{ {1}: (2, {}) }`, "parameter 2: shape index {} names the tuple"},
		{`{ {1}: (2, {1}) }`, "the output leaf is f32[2] but the parameter leaf is s32[]"},
		{`{ {0}: (1, {}), {2}: (1, {}, must-alias) }`, "input_output_alias {2}: (1, {}, must-alias): parameter 1 leaf {} is aliased twice"},
		{`{ {0}: (1, {}), {0}: (0, {}) }`, "output {0} is aliased twice"},
	}
	for _, c := range cases {
		_, err := ParseModule("HloModule a, input_output_alias=" + c.header + body)
		require.Error(t, err, c.header)
		assert.True(t, errors.Is(err, ErrVerify), c.header)
		assert.Contains(t, err.Error(), c.want, c.header)
	}
	syntax := []struct{ header, want string }{
		{`{ {0}: (1, {}, aliased) }`, `expected may-alias or must-alias in input_output_alias, found "aliased"`},
		{`{ {0} (1, {}) }`, "expected ':' after an output index in input_output_alias"},
		{`{ {0}: (1) }`, "expected ',' after the parameter number"},
		{`{ {0}: (1, {}) }, input_output_alias={}`, "duplicate attribute input_output_alias in module header"},
	}
	for _, c := range syntax {
		_, err := ParseModule("HloModule a, input_output_alias=" + c.header + body)
		require.Error(t, err, c.header)
		assert.Contains(t, err.Error(), c.want, c.header)
	}
}

func TestVerifyChecksBuiltAliases(t *testing.T) {
	m, err := ParseModule(`HloModule a
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}`)
	require.NoError(t, err)
	m.InputOutputAlias = []InputOutputAlias{{Param: 0, Kind: MustAlias}}
	require.NoError(t, Verify(m))
	leaves, err := ResolveAliases(m)
	require.NoError(t, err)
	assert.Equal(t, []AliasLeaves{{Output: 0, Param: 0, ParamLeaf: 0, Kind: MustAlias}}, leaves)
	m.InputOutputAlias[0].Kind = 9
	assert.ErrorContains(t, Verify(m), "unknown alias kind 9")
}

func TestLeafIndex(t *testing.T) {
	s := MakeTuple(MakeShape(F32, 2), MakeTuple(Scalar(S32), MakeShape(F32, 3)), MakeShape(F16, 1))
	for _, c := range []struct {
		idx  []int64
		leaf int
		want Shape
	}{
		{[]int64{0}, 0, MakeShape(F32, 2)},
		{[]int64{1, 0}, 1, Scalar(S32)},
		{[]int64{1, 1}, 2, MakeShape(F32, 3)},
		{[]int64{2}, 3, MakeShape(F16, 1)},
	} {
		leaf, shape, err := s.LeafIndex(c.idx)
		require.NoError(t, err)
		assert.Equal(t, c.leaf, leaf)
		assert.True(t, shape.Equal(c.want))
	}
	_, _, err := s.LeafIndex([]int64{1})
	assert.ErrorContains(t, err, "names the tuple")
	_, _, err = s.LeafIndex([]int64{0, 0})
	assert.ErrorContains(t, err, "element 0 at depth 1 is not in f32[2]")
	_, _, err = s.LeafIndex([]int64{-1})
	assert.Error(t, err)
}
