package hlo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseXLADumps parses modules written the way XLA dumps them (metadata, layouts
// with tiles, % names, entry_computation_layout, elided constants, backend_config,
// sharding, comments), verifies them, and checks that they round-trip.
func TestParseXLADumps(t *testing.T) {
	files, err := filepath.Glob("testdata/xla/*.hlo")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			m, err := ParseModuleFile(file)
			require.NoError(t, err)
			require.NoError(t, Verify(m))
			text, err := os.ReadFile(file)
			require.NoError(t, err)
			assertTextRoundTrip(t, string(text))
		})
	}
}

func TestParseMLPDump(t *testing.T) {
	m, err := ParseModuleFile("testdata/xla/mlp_forward.hlo")
	require.NoError(t, err)
	assert.Equal(t, "jit_mlp", m.Name)
	require.Len(t, m.Computations, 1)
	e := m.Entry
	assert.Equal(t, "main.24", e.Name)
	require.Len(t, e.Params, 4)
	// Parameters are ordered by number, not by where they stand in the text.
	assert.Equal(t, []string{"Arg_0.1", "Arg_1.2", "Arg_2.3", "Arg_3.4"},
		[]string{e.Params[0].Name, e.Params[1].Name, e.Params[2].Name, e.Params[3].Name})
	assert.Equal(t, "add.16", e.Root.Name)
	assert.Equal(t, MakeShape(F32, 32, 10), e.Root.Shape)
	dot := e.Root.Operands[0]
	require.Equal(t, OpDot, dot.Op)
	assert.Equal(t, &DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}, dot.Attrs.Dot)
}

func TestParseWhileDump(t *testing.T) {
	m, err := ParseModuleFile("testdata/xla/while_loop.hlo")
	require.NoError(t, err)
	names := make([]string, len(m.Computations))
	for i, c := range m.Computations {
		names[i] = c.Name
	}
	// Callees first: the loop body's callee precedes the body; the entry is last.
	assert.Equal(t, []string{"None.7", "region_0.17", "region_1.22", "main.32"}, names)
	loop := m.Entry.Root.Operands[0]
	require.Equal(t, OpWhile, loop.Op)
	assert.Equal(t, []*Computation{m.Computation("region_1.22"), m.Computation("region_0.17")}, loop.Called)
}

// TestElidedConstantsAreSeeded checks the documented rule: {...} is filled from
// SplitMix64 seeded with the FNV-1a hash of the constant's name, floats in [-1, 1).
func TestElidedConstantsAreSeeded(t *testing.T) {
	const text = `HloModule m
ENTRY e {
  a = f32[64] constant({...})
  b = f32[64] constant({...})
  i = s32[64] constant({...})
  p = pred[64] constant({...})
  ROOT t = (f32[64], f32[64], s32[64], pred[64]) tuple(a, b, i, p)
}`
	m1, err := ParseModule(text)
	require.NoError(t, err)
	m2, err := ParseModule(text)
	require.NoError(t, err)
	lit := func(m *Module, name string) *Literal { return instructionNamed(t, m, name).Attrs.Literal }
	assert.Equal(t, lit(m1, "a").Bytes(), lit(m2, "a").Bytes(), "same name, same values")
	assert.NotEqual(t, lit(m1, "a").Bytes(), lit(m1, "b").Bytes(), "another name, other values")

	floats, err := Values[float32](lit(m1, "a"))
	require.NoError(t, err)
	for _, v := range floats {
		assert.True(t, v >= -1 && v < 1, "float %v outside [-1, 1)", v)
	}
	ints, err := Values[int32](lit(m1, "i"))
	require.NoError(t, err)
	for _, v := range ints {
		assert.True(t, v >= 0 && v < 8, "int %v outside 0…7", v)
	}
	bools, err := Values[bool](lit(m1, "p"))
	require.NoError(t, err)
	assert.Contains(t, bools, true)
	assert.Contains(t, bools, false)

	// The first values pin the generator, so that a change to it is deliberate.
	assert.Equal(t, []float32{-0.25653806, 0.9962446, 0.98421305}, floats[:3])
}

func instructionNamed(t *testing.T, m *Module, name string) *Instruction {
	t.Helper()
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Name == name {
				return in
			}
		}
	}
	require.Failf(t, "no instruction", "%q", name)
	return nil
}

// TestParseAcceptedForms covers syntax XLA's tools accept that the samples do not.
func TestParseAcceptedForms(t *testing.T) {
	cases := map[string]string{
		"computation after ENTRY and no signatures": `HloModule m
ENTRY e {
  x = f32[] parameter(0)
  ROOT r = f32[] call(x), to_apply=f
}
f {
  y = f32[] parameter(0)
  ROOT n = f32[] negate(y)
}`,
		"no ENTRY: the last computation is the entry": `HloModule m
f {
  y = f32[] parameter(0)
  ROOT n = f32[] negate(y)
}
g {
  x = f32[] parameter(0)
  ROOT r = f32[] call(x), to_apply=f
}`,
		"no ROOT: the last instruction is the root": `HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  n = f32[2] negate(x)
}`,
		"operands defined later": `HloModule m
ENTRY e {
  ROOT r = f32[2] add(n, x)
  n = f32[2] negate(x)
  x = f32[2] parameter(0)
}`,
		"comments, tiled layouts, ignored attributes": `// leading comment
HloModule m, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0:T(8,128)})->f32[8,128]{1,0:T(8,128)}}
/* block
   comment */
ENTRY %e.1 (p.0: f32[8,128]) -> f32[8,128] {
  %p.0 = f32[8,128]{1,0:T(8,128)} parameter(0), parameter_replication={false}, sharding={maximal device=0}
  ROOT %n.1 = f32[8,128]{1,0:T(8,128)S(1)} exponential(f32[8,128]{1,0:T(8,128)} /*index=0*/ %p.0), metadata={op_type="Neg" op_name="n" source_file="a \"quoted\" {path}" source_line=3}, backend_config="{\"x\": [1, 2]}", origin={{"n"}}, statistics={visualizing_index=1}, result_accuracy={tolerance={atol=0,rtol=0,ulps=1}}
}`,
		"literals: exponents, signs, nan payloads, pred as 0/1": `HloModule m
ENTRY e {
  f = f32[6] constant({1e+10, -2.5E-3, +3, -nan, nan(0x7fc00001), -0})
  b = pred[2] constant({1, 0})
  ROOT t = (f32[6], pred[2]) tuple(f, b)
}`,
		"execution_thread after a computation": `HloModule m
ENTRY e {
  ROOT x = f32[] parameter(0)
}, execution_thread="main"`,
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			assertTextRoundTrip(t, text)
		})
	}
}

func TestParseRenamesRepeatedNames(t *testing.T) {
	m, err := ParseModule(`HloModule m
` + addF32 + `
mul {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT x.1 = f32[] multiply(x, y)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  s = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT p = f32[] reduce(x, zero), dimensions={0}, to_apply=mul
}`)
	require.NoError(t, err)
	var names []string
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			names = append(names, in.Name)
		}
	}
	// x.1 is taken by mul's root, so mul's x becomes x.2.
	assert.Equal(t, []string{"x", "y", "sum", "x.2", "y.1", "x.1", "x.3", "zero", "s", "p"}, names)
}

func TestPrintFormats(t *testing.T) {
	cases := []struct {
		op   Opcode
		want []string
	}{
		{OpSlice, []string{"slice={[0:8:2], [1:4]}"}},
		{OpPad, []string{"padding=1_0_0x0_2_1", "padding=0_1x-1_3"}},
		{OpReduceWindow, []string{"window={size=2x3 stride=2x3 pad=0_0x1_1}, to_apply=%add"}},
		{OpConvolution, []string{
			"window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n",
			"window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4\n"}},
		{OpDot, []string{
			"lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n",
			"dot(f32[3,4]{1,0} %m, f32[4]{0} %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"}},
		{OpCompare, []string{"direction=LT\n", "direction=NE, type=TOTALORDER\n"}},
		{OpConditional, []string{"branch_computations={%neg, %id}\n"}},
		{OpSort, []string{"dimensions={0}, is_stable=true, to_apply=%cmp\n"}},
		{OpConstant, []string{"constant({{1, -2.5}, {inf, -inf}})", "s8[] constant(-128)", "constant({})"}},
		{OpGather, []string{"offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}\n"}},
		{OpFusion, []string{
			"%fused_loop (p0: f32[4], p1: f32[4]) -> f32[4] {\n",
			"%f = f32[4]{0} fusion(f32[4]{0} %a, f32[4]{0} %b), kind=kLoop, calls=%fused_loop\n",
			"%rows = f32[4]{0} fusion(f32[4,3]{1,0} %xs, f32[] %zero), kind=kInput, calls=%fused_reduce\n",
			"%pair = (f32[4]{0}, f32[4]{0}) fusion(f32[4]{0} %f, f32[4]{0} %rows), kind=kLoop, calls=%fused_pair\n"}},
	}
	for _, c := range cases {
		text, _ := textSampleFor(c.op)
		m, err := ParseModule(text)
		require.NoError(t, err, c.op)
		printed := Print(m)
		for _, w := range c.want {
			assert.Contains(t, printed, w, c.op)
		}
	}
}

const errorCaseReducer = "add {\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y)\n}\n"

// errorCaseFused is a fused computation f: (a: f32[2]) -> negate(a).
const errorCaseFused = "f {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n"

// parseErrorCases are bad inputs with the position of the problem and a fragment of
// the message; FuzzParse starts from them too.
var parseErrorCases = []struct {
	name, text, want string
}{
	{"empty input", ``, "1:1: expected 'HloModule' at start of module, found end of input"},
	{"no computations", `HloModule m`, "1:12: expected a computation, found end of input"},
	{"operand separator", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT a = f32[] add(x %y)\n}",
		`4:24: expected ',' or ')' after operand, found "%y"`},
	{"unknown opcode", "HloModule m\nENTRY e {\n  ROOT x = f32[] frobnicate()\n}",
		`3:18: expected an opcode, found "frobnicate" (not a supported HLO op)`},
	{"unknown element type", "HloModule m\nENTRY e {\n  ROOT x = q7[] parameter(0)\n}",
		`3:12: unknown or unsupported element type "q7"`},
	{"dynamic dimension", "HloModule m\nENTRY e {\n  ROOT x = f32[<=4] parameter(0)\n}",
		"3:16: dynamic dimension <=4 is not supported: vkxla compiles static shapes"},
	{"unbounded dynamic dimension", "HloModule m\nENTRY e {\n  ROOT x = f32[2,?] parameter(0)\n}",
		"3:18: dynamic dimension ? is not supported"},
	{"unknown operand", "HloModule m\nENTRY e {\n  ROOT n = f32[] negate(y)\n}",
		`3:25: unknown operand "y" of n`},
	{"operand annotation mismatch", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[2] negate(f32[3] x)\n}",
		"4:33: operand x is annotated f32[3] but has shape f32[2]"},
	{"declared shape wrong", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT n = f32[3] negate(x)\n}",
		"4:8: n: negate: declared shape f32[3] differs from inferred shape f32[2]"},
	{"unknown computation", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=%g\n}",
		`4:36: unknown computation "g" called by c`},
	{"unknown attribute", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x), fast=true\n}",
		"4:29: unknown attribute fast on negate"},
	{"attribute of another op", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT n = f32[] negate(x), dimensions={0}\n}",
		"4:29: attribute dimensions does not apply to negate"},
	{"missing attribute", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT t = f32[2] transpose(x)\n}",
		"4:8: transpose t is missing attribute dimensions"},
	{"duplicate attribute", "HloModule m\nENTRY e {\n  ROOT i = s32[2] iota(), iota_dimension=0, iota_dimension=0\n}",
		"3:45: duplicate attribute iota_dimension"},
	{"arity", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT a = f32[] add(x)\n}",
		"4:8: add takes 2 operand(s), found 1"},
	{"duplicate name", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  x = f32[] parameter(1)\n}",
		`4:3: duplicate instruction name "x" (first defined at 3:3)`},
	{"cycle", "HloModule m\nENTRY e {\n  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}",
		"instruction a depends on itself"},
	{"two roots", "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0)\n  ROOT n = f32[] negate(x)\n}",
		"4:8: computation e has more than one ROOT"},
	{"parameter numbers", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] parameter(2)\n}",
		"4:8: parameter(2) in computation e, which has 2 parameters"},
	{"constant too short", "HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}",
		`3:33: expected ',' between constant values, found "}"`},
	{"constant too long", "HloModule m\nENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}",
		`3:33: expected '}' after 2 values in dimension 0 of a f32[2] constant, found ","`},
	{"integer out of range", "HloModule m\nENTRY e {\n  ROOT c = s8[] constant(128)\n}",
		`3:26: expected a s8 value, found "128"`},
	{"float overflow", "HloModule m\nENTRY e {\n  ROOT c = f16[] constant(70000)\n}",
		"3:27: value 70000 overflows f16"},
	{"float in int constant", "HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1.5)\n}",
		`3:27: expected a s32 value, found "1.5"`},
	{"bad padding", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  z = f32[] constant(0)\n  ROOT p = f32[4] pad(x, z), padding=1-1\n}",
		`5:38: bad padding "1-1"`},
	{"bad window", "HloModule m\n" + errorCaseReducer + "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(x, z), window={size=2 stride=2x2}, to_apply=add\n}",
		"window field stride has 2 dimensions, size has 1"},
	{"bad dim_labels", "HloModule m\nENTRY e {\n  x = f32[1,4,4,1] parameter(0)\n  k = f32[1,1,1,1] parameter(1)\n  ROOT c = f32[1,4,4,1] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->bf01x\n}",
		`bad dim_labels "b01f_01io->bf01x": output labels "bf01x": unexpected 'x'`},
	{"recursion", "HloModule m\nf {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=f\n}\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=f\n}",
		"4:36: c calls f recursively"},
	{"two entries", "HloModule m\nENTRY a {\n  ROOT x = f32[] parameter(0)\n}\nENTRY b {\n  ROOT x = f32[] parameter(0)\n}",
		"5:7: more than one ENTRY computation (a and b)"},
	{"signature mismatch", "HloModule m\nENTRY e (x: f32[2]) -> f32[2] {\n  ROOT x = f32[3] parameter(0)\n}",
		"2:10: signature gives parameter 0 of e shape f32[2], the body declares f32[3]"},
	{"unterminated string", "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), backend_config=\"abc\n}",
		"3:47: unterminated string in the value of backend_config"},
	{"unterminated brace", "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), metadata={op_name={\"x\"\n}",
		"3:41: unterminated { in the value of metadata"},
	{"conditional without branches", "HloModule m\nENTRY e {\n  p = pred[] parameter(0)\n  ROOT c = f32[] conditional(p)\n}",
		"4:8: conditional c is missing attribute branch_computations"},
	{"elided constant too large", "HloModule m\nENTRY e {\n  ROOT c = f64[1000000000000] constant({...})\n}",
		"3:40: elided constant c of shape f64[1000000000000] is larger than"},
	{"module name", "HloModule {", `1:11: expected module name after 'HloModule', found "{"`},
	{"header attribute", "HloModule m, 5", `1:14: expected attribute name in module header, found "5"`},
	{"header value", "HloModule m, is_scheduled=", "1:27: expected true or false, found end of input"},
	{"unknown header attribute", "HloModule m, layout={}", "1:14: unknown attribute layout in module header"},
	{"computation name", "HloModule m\nENTRY {", `2:7: expected computation name, found "{"`},
	{"duplicate computation", "HloModule m\nf {\n  ROOT x = f32[] parameter(0)\n}\nf {\n  ROOT x = f32[] parameter(0)\n}",
		`5:1: duplicate computation name "f" (first defined at 2:1)`},
	{"no instructions", "HloModule m\nENTRY e {\n}", "2:7: computation e has no instructions"},
	{"signature separator", "HloModule m\nENTRY e (x: f32[] y: f32[]) -> f32[] {", `2:19: expected ',' or ')' after a parameter in the signature, found "y"`},
	{"signature arrow", "HloModule m\nENTRY e (x: f32[]) f32[] {", `2:20: expected '->' after the parameter list, found "f32"`},
	{"signature result", "HloModule m\nENTRY e (x: f32[]) -> f32[2] {\n  ROOT x = f32[] parameter(0)\n}",
		"2:23: signature gives e result shape f32[2], its root x has f32[]"},
	{"signature count", "HloModule m\nENTRY e () -> f32[] {\n  ROOT x = f32[] parameter(0)\n}",
		"2:7: signature of e lists 0 parameters, the body has 1"},
	{"instruction equals", "HloModule m\nENTRY e {\n  ROOT x f32[] parameter(0)\n}", `3:10: expected '=' after instruction name x, found "f32"`},
	{"shape", "HloModule m\nENTRY e {\n  ROOT x = %y parameter(0)\n}", `3:12: expected a shape such as f32[2,3], found "%y"`},
	{"tuple shape", "HloModule m\nENTRY e {\n  ROOT x = (f32[] s32[]) parameter(0)\n}", `3:19: expected ',' or ')' after a tuple element shape, found "s32"`},
	{"negative dimension", "HloModule m\nENTRY e {\n  ROOT x = f32[-1] parameter(0)\n}", "3:16: negative dimension -1"},
	{"opening parenthesis", "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter 0\n}", `3:28: expected '(' after opcode parameter, found "0"`},
	{"negative parameter", "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(-1)\n}", "3:8: parameter number -1 is negative"},
	{"duplicate parameter", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] parameter(0)\n}", "4:8: duplicate parameter(0) in computation e"},
	{"operand name", "HloModule m\nENTRY e {\n  ROOT n = f32[] negate(f32[] 1)\n}", `3:31: expected operand name, found "1"`},
	{"bad integer list", "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT t = f32[2] transpose(x), dimensions={0 1}\n}",
		`4:47: expected ',' or '}' in a list of integers, found "1"`},
	{"bad bool", "HloModule m\n" + errorCaseReducer + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT s = f32[2] sort(x), dimensions={0}, is_stable=yes, to_apply=add\n}",
		`9:54: expected true or false, found "yes"`},
	{"fusion without kind", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(x), calls=f\n}",
		"8:8: fusion r is missing attribute kind"},
	{"fusion without calls", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(x), kind=kLoop\n}",
		"8:8: fusion r is missing attribute calls"},
	{"bad fusion kind", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(x), kind=kFoo, calls=f\n}",
		`8:35: unknown fusion kind "kFoo" (want kLoop, kInput, kOutput or kCustom)`},
	{"fusion operands", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(x, x), kind=kLoop, calls=f\n}",
		`8:8: r: fusion: fused computation "f" takes 1 parameters, got 2 operands`},
	{"fusion operand shape", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[3] parameter(0)\n  ROOT r = f32[2] fusion(x), kind=kLoop, calls=f\n}",
		`8:8: r: fusion: operand 0 has shape f32[3], but parameter 0 (a) of fused computation "f" is f32[2]`},
	{"fusion attribute on call", "HloModule m\n" + errorCaseFused + "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] call(x), kind=kLoop, to_apply=f\n}",
		"8:28: attribute kind does not apply to call"},
	{"bad direction", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = pred[] compare(x, x), direction=LESS\n}",
		`4:44: unknown comparison direction "LESS"`},
	{"bad slice", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[2] slice(x), slice={[0:2:1:1]}\n}",
		`4:42: expected ']' to close a slice dimension, found ":"`},
	{"slice without limit", "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT s = f32[2] slice(x), slice={[0]}\n}",
		`4:38: expected ':' in a slice dimension [start:limit:stride], found "]"`},
	{"unknown window field", "HloModule m\n" + errorCaseReducer + "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(x, z), window={size=2 step=2}, to_apply=add\n}",
		"10:55: unknown window field step"},
	{"window without size", "HloModule m\n" + errorCaseReducer + "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(x, z), window={stride=2}, to_apply=add\n}",
		"10:47: window has no size field"},
	{"bad window pad", "HloModule m\n" + errorCaseReducer + "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[2] reduce-window(x, z), window={size=2 pad=1}, to_apply=add\n}",
		`10:47: bad window: pad "1" is not low_high`},
	{"computation list", "HloModule m\nENTRY e {\n  i = s32[] parameter(0)\n  ROOT c = f32[] conditional(i), branch_computations={a b}\n}",
		`4:57: expected ',' or '}' in a list of computations, found "b"`},
	{"mixed branch forms", "HloModule m\nENTRY e {\n  p = pred[] parameter(0)\n  ROOT c = f32[] conditional(p), branch_computations={a}, true_computation=a\n}",
		"4:8: conditional c has both branch_computations and true/false_computation"},
	{"calls entry", "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT c = f32[] call(x), to_apply=e\n}",
		"4:36: c calls the ENTRY computation e"},
	{"tuple constant", "HloModule m\nENTRY e {\n  ROOT c = (f32[], s32[]) constant((1 2))\n}",
		`3:39: expected ',' between tuple constant elements, found "2"`},
	{"pred constant", "HloModule m\nENTRY e {\n  ROOT c = pred[] constant(yes)\n}", `3:28: expected true or false, found "yes"`},
	{"constant punctuation", "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(,)\n}", `3:27: expected a f32 value, found ","`},
	{"unsigned constant", "HloModule m\nENTRY e {\n  ROOT c = u8[] constant(-1)\n}", `3:26: expected a u8 value, found "-1"`},
	{"constant elements", "HloModule m\nENTRY e {\n  ROOT c = f32[1000] constant({1})\n}",
		"3:31: constant c of shape f32[1000] has more elements than the text holds"},
	{"shape too large", "HloModule m\nENTRY e {\n  ROOT c = f32[100000000000,100000000000] parameter(0)\n}",
		"3:12: shape has more than"},
	// 1024 arrays of 2^53 bytes: each within the element limit, 2^63 bytes together.
	{"tuple byte size overflows", "HloModule m\nENTRY e {\n  ROOT p = (" +
		strings.Repeat("f64[1125899906842624], ", 1023) + "f64[1125899906842624]) parameter(0)\n}",
		"the byte size of tuple"},
}

// TestParseErrors checks that bad input fails with the position of the problem and
// a message saying what was expected.
func TestParseErrors(t *testing.T) {
	for _, c := range parseErrorCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseModule(c.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			var pe *ParseError
			assert.ErrorAs(t, err, &pe, "errors carry line:column")
		})
	}
}

func TestParseModuleFileNamesThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.hlo")
	require.NoError(t, os.WriteFile(path, []byte("HloModule m\nENTRY e {\n"), 0o644))
	_, err := ParseModuleFile(path)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), path+":3:1: "), err.Error())
}
