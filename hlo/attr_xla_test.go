package hlo

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PyTorch/XLA prints api_version=API_VERSION_UNSPECIFIED on its custom-calls;
// XLA's parser reads every CustomCallApiVersion name. vkxla refused it ("unknown
// api_version"), which stopped six of nine real dumps at the parser (issue 17).
func TestCustomCallAPIVersionUnspecified(t *testing.T) {
	text := `HloModule SyncTensorsGraph.12, entry_computation_layout={(f32[4,8]{1,0})->(f32[4,8]{1,0})}

ENTRY %SyncTensorsGraph.12 (p0.1: f32[4,8]) -> (f32[4,8]) {
  %p0.1 = f32[4,8]{1,0} parameter(0), metadata={op_type="xla__device_data" op_name="xla__device_data" source_file="/usr/lib/python3/dist-packages/torch_xla/core/xla_model.py" source_line=1093}
  %custom-call.2 = f32[4,8]{1,0} custom-call(f32[4,8]{1,0} %p0.1), custom_call_target="Sharding", api_version=API_VERSION_UNSPECIFIED, sharding={devices=[2,1]0,1}, metadata={op_type="xla__mark_sharding" op_name="xla__mark_sharding" source_file="/workspace/train.py" source_line=41}
  ROOT %tuple.3 = (f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %custom-call.2)
}
`
	m := assertTextRoundTrip(t, text)
	call := m.Entry.Root.Operands[0]
	require.Equal(t, OpCustomCall, call.Op)
	assert.Equal(t, "API_VERSION_UNSPECIFIED", call.Attrs.CustomCall.APIVersion)
	assert.Contains(t, Print(m), "api_version=API_VERSION_UNSPECIFIED", "the version prints back as written")
}

// TestXLAAttributeTable walks the table of attr_xla.go: every attribute XLA's
// parser knows, on every opcode XLA gives it to, parses as the row says (honoured:
// read by the opcode's codec; ignored: read and dropped, so the module prints as
// without it; refused: an error naming it), every enum name XLA accepts (in every
// case XLA accepts) parses, and a name XLA refuses is refused naming the attribute.
func TestXLAAttributeTable(t *testing.T) {
	for _, a := range xlaAttrs {
		a := a
		t.Run(a.name+"/"+rowPlace(a), func(t *testing.T) {
			switch a.scope {
			case onModule:
				checkHeaderRow(t, a)
			case onComputation:
				checkComputationRow(t, a)
			default:
				for _, op := range rowOpcodes(t, a) {
					t.Run(op.String(), func(t *testing.T) { checkInstructionRow(t, a, op) })
				}
			}
		})
	}
}

func rowPlace(a *xlaAttr) string {
	switch {
	case a.scope == onModule:
		return "module"
	case a.scope == onComputation:
		return "computation"
	case a.ops == nil:
		return "every"
	}
	return a.ops[0]
}

// rowOpcodes returns the vkxla opcodes of a row, checking that XLA's opcodes that
// vkxla lacks are refused at the opcode (and that a row refused for that reason
// has only such opcodes).
func rowOpcodes(t *testing.T, a *xlaAttr) []Opcode {
	if a.ops == nil { // every opcode, but where it is the opcode's own
		var ops []Opcode
		for _, op := range AllOpcodes() {
			if !slices.ContainsFunc(opAttrs[op], func(u attrUse) bool { return u.name == a.name }) {
				ops = append(ops, op)
			}
		}
		return ops
	}
	var ops []Opcode
	for _, name := range a.ops {
		op, ok := LookupOpcode(name)
		if !ok {
			text := "HloModule m\nENTRY e {\n  ROOT x = f32[] " + name + "(), " + a.name + "=0\n}"
			_, err := ParseModule(text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "not a supported HLO op", "%s is not a vkxla opcode", name)
			continue
		}
		assert.NotEqual(t, opNotSupported, a.reason, "row %s says %s is not a vkxla opcode", a.name, name)
		ops = append(ops, op)
	}
	return ops
}

func checkInstructionRow(t *testing.T, a *xlaAttr, op Opcode) {
	sample, ok := textSampleFor(op)
	require.True(t, ok)
	switch a.treatment {
	case attrHonoured:
		if a.keep != nil {
			checkKeptRow(t, a, sample, op)
			return
		}
		assert.True(t, slices.ContainsFunc(opAttrs[op], func(u attrUse) bool { return u.name == a.name }),
			"the table honours %s on %v but opAttrs has no such attribute", a.name, op)
		for _, v := range enumSpellings(a) {
			text, inst := withAttr(t, sample, op, a.name, v)
			m, err := ParseModuleUnverified(text)
			require.NoError(t, err, "%s=%s", a.name, v)
			printed := Print(m)
			again, err := ParseModuleUnverified(printed)
			require.NoError(t, err, printed)
			assert.Equal(t, printed, Print(again))
			// Printed (a default is not), the name is the one XLA prints.
			line := regexp.MustCompile(`(?m)^.*%` + regexp.QuoteMeta(inst) + ` = .*$`).FindString(printed)
			require.NotEmpty(t, line, inst)
			if strings.Contains(line, ", "+a.name+"=") {
				assert.Contains(t, line+",", ", "+a.name+"="+canonicalName(a, v)+",", "%s=%s prints as XLA names it", a.name, v)
			}
		}
		checkRefusedValues(t, a, sample, op)
	case attrIgnored:
		base, err := ParseModule(sample)
		require.NoError(t, err)
		for _, v := range ignoredValues(a) {
			text, _ := withAttr(t, sample, op, a.name, v)
			m, err := ParseModule(text)
			require.NoError(t, err, "%s=%s on %v", a.name, v, op)
			assert.Equal(t, Print(base), Print(m), "%s=%s is dropped", a.name, v)
		}
		checkRefusedValues(t, a, sample, op)
	case attrRefused:
		text, _ := withAttr(t, sample, op, a.name, "0")
		_, err := ParseModule(text)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "attribute "+a.name+" of "+op.String()+" is not supported: "+a.reason)
	}
}

// enumSpellings are the names of an enum row in every case XLA accepts them.
func enumSpellings(a *xlaAttr) []string {
	var out []string
	for _, v := range a.values {
		out = append(out, v)
		if a.fold {
			out = append(out, strings.ToUpper(v), strings.ToLower(v))
		}
	}
	return out
}

// canonicalName is the name the printer writes for spelling v.
func canonicalName(a *xlaAttr, v string) string {
	if i := matchEnum(a.values, v, a.fold); i >= 0 {
		return a.values[i]
	}
	return ""
}

// ignoredValues are the values an ignored row is tried with: its sample, or each
// enum name (in a list where the sample is one: {%s,%s}).
func ignoredValues(a *xlaAttr) []string {
	if a.values == nil {
		return []string{a.sample}
	}
	var out []string
	for _, v := range enumSpellings(a) {
		if a.sample != "" {
			v = strings.ReplaceAll(a.sample, "%s", v)
		}
		out = append(out, v)
	}
	return out
}

// checkRefusedValues checks that a name outside the enum (and each name XLA reads
// but vkxla refuses), and a value of the wrong form, are errors naming the
// attribute.
func checkRefusedValues(t *testing.T, a *xlaAttr, sample string, op Opcode) {
	bad := []string{")"}
	if a.values != nil {
		bad = append(bad, "NOT_AN_XLA_NAME")
		for v := range a.refusedValues {
			bad = append(bad, v, strings.ToUpper(v))
		}
	} else if a.treatment == attrHonoured {
		return // the codecs' own tests cover malformed values
	}
	if a.name == "operand_precision" {
		bad = append(bad, "{highest,NOT_AN_XLA_NAME}")
	}
	for _, v := range bad {
		text, _ := withAttr(t, sample, op, a.name, v)
		_, err := ParseModuleUnverified(text)
		require.Error(t, err, "%s=%s", a.name, v)
		assert.Contains(t, err.Error(), a.name, "the error names the attribute")
		var pe *ParseError
		assert.ErrorAs(t, err, &pe)
	}
}

// withAttr writes name=value on the first instruction of op in sample that lacks
// the attribute, or replaces the (one-word) value where every one has it; it
// returns the text and the instruction's name, which %SELF in value stands for (a
// control-predecessors sample names an instruction that exists).
func withAttr(t *testing.T, sample string, op Opcode, name, value string) (string, string) {
	lines := strings.Split(sample, "\n")
	call := regexp.MustCompile(`^\s*(?:ROOT )?%?([^ ]+) = .*[ =]` + regexp.QuoteMeta(op.String()) + `\(`)
	has := ", " + name + "="
	word := regexp.MustCompile(`, ` + regexp.QuoteMeta(name) + `=[^,\s{}]+`)
	first := -1
	for i, line := range lines {
		if !call.MatchString(line) {
			continue
		}
		if !strings.Contains(line, has) {
			inst := call.FindStringSubmatch(line)[1]
			lines[i] += has + strings.ReplaceAll(value, "%SELF", "%"+inst)
			return strings.Join(lines, "\n"), inst
		}
		if first < 0 {
			first = i
		}
	}
	require.GreaterOrEqual(t, first, 0, "the sample of %v has no %v instruction:\n%s", op, op, sample)
	require.Regexp(t, word, lines[first], "the sample's %s is not one word", name)
	inst := call.FindStringSubmatch(lines[first])[1]
	lines[first] = word.ReplaceAllLiteralString(lines[first], has+value)
	return strings.Join(lines, "\n"), inst
}

const headerBase = "\nENTRY e {\n  ROOT x = f32[2,3] parameter(0)\n}\n"

func checkHeaderRow(t *testing.T, a *xlaAttr) {
	if a.treatment == attrHonoured {
		return // input_output_alias: alias_test.go
	}
	base, err := ParseModule("HloModule m" + headerBase)
	require.NoError(t, err)
	m, err := ParseModule("HloModule m, " + a.name + "=" + a.sample + headerBase)
	require.NoError(t, err)
	assert.Equal(t, Print(base), Print(m))
	_, err = ParseModule("HloModule m, " + a.name + "=)" + headerBase)
	require.Error(t, err)
	assert.Contains(t, err.Error(), a.name)
}

func checkComputationRow(t *testing.T, a *xlaAttr) {
	base := "HloModule m" + headerBase
	m, err := ParseModule(strings.TrimRight(base, "\n") + ", " + a.name + "=" + a.sample + "\n")
	require.NoError(t, err)
	want, err := ParseModule(base)
	require.NoError(t, err)
	assert.Equal(t, Print(want), Print(m))
}

// Every attribute an opcode prints and parses is one XLA gives that opcode, and
// honoured in the table (so that the table is the whole list).
func TestOpAttributesAreInTheXLATable(t *testing.T) {
	for op, uses := range opAttrs {
		for _, u := range uses {
			a, ok := lookupXLAAttr(u.name, onInstruction, op.String())
			if assert.True(t, ok, "%v's attribute %s is not in the XLA table", op, u.name) {
				assert.Equal(t, attrHonoured, a.treatment, "%v's attribute %s", op, u.name)
			}
		}
	}
}

func TestAttributeErrors(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"ROOT y = f32[2,3] negate(x), frobnicate=1", "unknown attribute frobnicate on negate"},
		{"ROOT y = f32[2,3] negate(x), channel_id=1", "attribute channel_id does not apply to negate (XLA gives it to all-reduce"},
		{"ROOT y = f32[2,3] negate(x), sharding=replicated", "expected '{' to open the value of sharding"},
		{"ROOT y = f32[2,3] negate(x), metadata={op_name=\"a\"}, metadata={}", "duplicate attribute metadata"},
		{"ROOT y = f32[2,3] reshape(x), inferred_dimension=x", "expected an integer, found \"x\" (in attribute inferred_dimension)"},
		{"ROOT y = f32[2,3] exponential(x), result_accuracy=highest", "expected '{' to open the value of result_accuracy"},
		{"ROOT y = f32[2,3] negate(x), control-predecessors={%x, %nope}", `unknown instruction "nope" in control-predecessors`},
		{"ROOT y = f32[2,3] negate(x), operand_precision={highest}", "attribute operand_precision does not apply to negate"},
	} {
		_, err := ParseModule("HloModule m\nENTRY e {\n  x = f32[2,3] parameter(0)\n  " + c.line + "\n}")
		require.Error(t, err, c.line)
		assert.Contains(t, err.Error(), c.want)
	}
}

// TestXLATableDocumented checks that docs/limits.md holds the table as
// xlaAttrMarkdown writes it (VKXLA_WRITE_DOCS=1 rewrites that part of the page).
func TestXLATableDocumented(t *testing.T) {
	path := filepath.Join("..", "docs", "limits.md")
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	const begin, end = "<!-- begin: xla attribute table (hlo/attr_xla.go) -->\n", "<!-- end: xla attribute table -->"
	doc := string(text)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	require.True(t, i >= 0 && j > i, "docs/limits.md lacks the markers %q and %q", begin, end)
	want := xlaAttrMarkdown()
	if os.Getenv("VKXLA_WRITE_DOCS") == "1" {
		doc = doc[:i+len(begin)] + want + doc[j:]
		require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
		j = i + len(begin) + len(want) // the end marker moved with the new table
	}
	assert.True(t, doc[i+len(begin):j] == want, "docs/limits.md's attribute table is stale; run with VKXLA_WRITE_DOCS=1")
}

// xlaAttrMarkdown renders the table for docs/limits.md.
func xlaAttrMarkdown() string {
	var sb strings.Builder
	sb.WriteString("| attribute | where XLA takes it | vkxla | why, and the names XLA accepts |\n|---|---|---|---|\n")
	for _, a := range xlaAttrs {
		where := strings.Join(a.ops, ", ")
		switch {
		case a.scope == onModule:
			where = "module header"
		case a.scope == onComputation:
			where = "after a computation"
		case a.ops == nil:
			where = "every instruction"
		}
		why := a.reason
		if why == "" {
			why = "read into the IR (docs/ir.md, \"Attributes\")"
		}
		if a.values != nil {
			names := "`" + strings.Join(a.values, "`, `") + "`"
			if a.fold {
				names += " (any case)"
			}
			why = strings.TrimPrefix(why+"; names: "+names, "; ")
		}
		for _, v := range slices.Sorted(maps.Keys(a.refusedValues)) {
			why += fmt.Sprintf("; `%s` refused: %s", v, a.refusedValues[v])
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", a.name, where, a.treatment, why)
	}
	return sb.String()
}

// checkKeptRow checks an honoured row that is kept outside Attributes: its
// sample is printed back as written and round-trips.
func checkKeptRow(t *testing.T, a *xlaAttr, sample string, op Opcode) {
	text, inst := withAttr(t, sample, op, a.name, a.sample)
	m, err := ParseModuleUnverified(text)
	require.NoError(t, err, "%s=%s on %v", a.name, a.sample, op)
	printed := Print(m)
	line := regexp.MustCompile(`(?m)^.*%` + regexp.QuoteMeta(inst) + ` = .*$`).FindString(printed)
	assert.Contains(t, line, ", "+a.name+"="+a.sample, "%s is printed back", a.name)
	again, err := ParseModuleUnverified(printed)
	require.NoError(t, err, printed)
	assert.Equal(t, printed, Print(again))
}

// Every form of XLA's sharding grammar (ParseSingleSharding and tuple shardings)
// is accepted; the forms vkxla keeps print back in XLA's syntax (the list and
// iota forms as written, metadata dropped), the others are dropped.
func TestShardingForms(t *testing.T) {
	for _, c := range []struct{ sharding, printed string }{
		{"{replicated}", "{replicated}"},
		{"{maximal device=1}", "{maximal device=1}"},
		{"{manual}", ""},
		{"{unknown}", ""},
		{"{unreduced}", ""},
		{"{devices=[2,2]0,1,2,3}", "{devices=[2,2]0,1,2,3}"},
		{"{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"},
		{"{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}", ""},
		{"{devices=[4,1]<=[4]}", "{devices=[4,1]<=[4]}"},
		{"{devices=[2,2]<=[2,2]T(1,0)}", "{devices=[2,2]<=[2,2]T(1,0)}"},
		{"{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate metadata={op_name=\"a\"}}", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}"},
		{"{devices=[2,1]0,1 metadata={{op_name=\"a\"}, {op_name=\"b\" source_line=3}}}", "{devices=[2,1]0,1}"},
		{"{replicated shard_as 1}", ""},
		{"{devices=[2,1]<=[2] shard_like 0}", ""},
		{"{mesh[x=2,y=2], [{x}, {}], replicated={y}}", ""},
		{"{maximal_mesh[device_id=0]}", ""},
	} {
		text := "HloModule m\nENTRY e {\n  x = f32[4,2] parameter(0), sharding=" + c.sharding +
			"\n  ROOT n = f32[4,2] negate(x), sharding=" + c.sharding + "\n}"
		m, err := ParseModule(text)
		require.NoError(t, err, c.sharding)
		printed := Print(m)
		if c.printed == "" {
			assert.NotContains(t, printed, "sharding", c.sharding)
			continue
		}
		assert.Contains(t, printed, "parameter(0), sharding="+c.printed+"\n", c.sharding)
		assert.Contains(t, printed, "%x), sharding="+c.printed+"\n", c.sharding)
		again, err := ParseModule(printed)
		require.NoError(t, err, printed)
		assert.Equal(t, printed, Print(again))
		assert.True(t, m.Entry.Root.Sharding.Equal(again.Entry.Root.Sharding))
	}
	// Tuple shardings on tuples; a tuple with a dropped element is dropped.
	for _, c := range []struct{ sharding, printed string }{
		{"{{replicated}, {maximal device=0}}", "{{replicated}, {maximal device=0}}"},
		{"{{devices=[2,1]<=[2]}, {replicated}}", "{{devices=[2,1]<=[2]}, {replicated}}"},
		{"{{devices=[2,1]<=[2]}, {manual}}", ""},
	} {
		text := "HloModule m\nENTRY e {\n  x = f32[4,2] parameter(0)\n  ROOT t = (f32[4,2], f32[4,2]) tuple(x, x), sharding=" + c.sharding + "\n}"
		m, err := ParseModule(text)
		require.NoError(t, err, c.sharding)
		if c.printed == "" {
			assert.Nil(t, m.Entry.Root.Sharding, c.sharding)
			continue
		}
		assert.Contains(t, Print(m), "sharding="+c.printed+"\n", c.sharding)
	}
	// The empty tuple sharding annotates an empty tuple.
	m, err := ParseModule("HloModule m\nENTRY e {\n  ROOT t = () tuple(), sharding={}\n}")
	require.NoError(t, err)
	assert.Equal(t, ShardTuple, m.Entry.Root.Sharding.Kind)
}

// The iota form expands to the device order XLA's IotaTileAssignment gives, and
// SetSharding annotates from Go.
func TestShardingIotaAndBuilder(t *testing.T) {
	m, err := ParseModule("HloModule m\nENTRY e {\n  ROOT x = f32[4,2] parameter(0), sharding={devices=[2,2]<=[2,2]T(1,0)}\n}")
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 2, 1, 3}, m.Entry.Root.Sharding.Devices)

	b := NewBuilder("e")
	x := b.SetSharding(b.Parameter(MakeShape(F32, 4, 2), "x"), Tiled([]int64{2, 1}, nil))
	y := b.SetSharding(b.Negate(x), PartiallyTiled([]int64{2, 1, 2}, []int64{0, 2, 1, 3}))
	mod, err := b.Build(y)
	require.NoError(t, err)
	printed := Print(mod)
	assert.Contains(t, printed, "parameter(0), sharding={devices=[2,1]<=[2]}")
	assert.Contains(t, printed, "sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}")
	assert.True(t, mod.Clone().Entry.Root.Sharding.Equal(y.Sharding))

	b = NewBuilder("e")
	b.SetSharding(b.Parameter(MakeShape(F32, 4, 2), "x"), Tiled([]int64{2}, nil))
	require.Error(t, b.Err())
	assert.Contains(t, b.Err().Error(), "tiles 1 dimensions of the rank-2")
}

// Text that is not XLA's sharding grammar is refused, naming the attribute.
func TestShardingErrors(t *testing.T) {
	for _, c := range []struct{ sharding, want string }{
		{"{replicatd}", `unknown sharding keyword "replicatd"`},
		{"{devices=[2,2]}", `expected an integer, found "}"`},
		{"{devices=[2,2]<[4]}", "expected '=' in '<=' of an iota tile assignment"},
		{"{maximal device=x}", `expected an integer, found "x"`},
		{"{devices=[2,1,2]<=[4] last_tile_dims={bogus}}", `unknown last_tile_dims "bogus"`},
		{"{{replicated}, replicated}", `expected '{' to open a sharding`},
		{"{devices=[2,2]<=[2,2]T(1,0}", `expected ',' or ')' in a list of integers`},
		{"{devices=[2,2]0,1,2}", "lists 3 devices, not 4"},
		{"{devices=[2,2]<=[3]}", "iota tile assignment"},
	} {
		text := "HloModule m\nENTRY e {\n  ROOT x = f32[4,2] parameter(0), sharding=" + c.sharding + "\n}"
		_, err := ParseModule(text)
		require.Error(t, err, c.sharding)
		assert.Contains(t, err.Error(), c.want, c.sharding)
		assert.Contains(t, err.Error(), "sharding", c.sharding)
	}
}

// The shapes of XLA dumps: tiled layouts, memory spaces, element sizes, scalar
// layouts, layouts in operand annotations and the entry layout; the header's
// attributes. Layouts are dropped (vkxla's arrays are row-major), so each module
// prints as its plain twin.
func TestXLAShapeAndHeaderForms(t *testing.T) {
	tiled := `HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8,128]{1,0:T(8,128)}, s32[]{:T(128)})->f32[8,128]{1,0:T(8,128)S(1)}}, replica_count=1, num_partitions=1, alias_passthrough_params=true, buffer_donor={(0, {})}, allow_spmd_sharding_propagation_to_output={true}

ENTRY %main.4 (Arg_0.1: f32[8,128], Arg_1.2: s32[]) -> f32[8,128] {
  %Arg_0.1 = f32[8,128]{1,0:T(8,128)} parameter(0)
  %Arg_1.2 = s32[]{:T(128)} parameter(1)
  %convert.3 = bf16[8,128]{1,0:T(8,128)(2,1)E(16)} convert(f32[8,128]{1,0:T(8,128)} %Arg_0.1)
  %convert.4 = f32[]{:T(128)S(1)} convert(s32[]{:T(128)} %Arg_1.2)
  %broadcast.5 = f32[8,128]{0,1:T(8,128)L(1024)} broadcast(f32[]{:T(128)S(1)} %convert.4), dimensions={}
  %convert.6 = f32[8,128]{1,0:T(8,128)} convert(bf16[8,128]{1,0:T(8,128)(2,1)E(16)} %convert.3)
  ROOT %add.7 = f32[8,128]{1,0:T(8,128)S(1)} add(f32[8,128]{1,0:T(8,128)} %convert.6, f32[8,128]{0,1:T(8,128)L(1024)} %broadcast.5)
}
`
	plain := `HloModule jit_f

ENTRY %main.4 (Arg_0.1: f32[8,128], Arg_1.2: s32[]) -> f32[8,128] {
  %Arg_0.1 = f32[8,128] parameter(0)
  %Arg_1.2 = s32[] parameter(1)
  %convert.3 = bf16[8,128] convert(%Arg_0.1)
  %convert.4 = f32[] convert(%Arg_1.2)
  %broadcast.5 = f32[8,128] broadcast(%convert.4), dimensions={}
  %convert.6 = f32[8,128] convert(%convert.3)
  ROOT %add.7 = f32[8,128] add(%convert.6, %broadcast.5)
}
`
	m, err := ParseModule(tiled)
	require.NoError(t, err)
	want, err := ParseModule(plain)
	require.NoError(t, err)
	assert.Equal(t, Print(want), Print(m))
}

// A broadcast of a scalar may leave dimensions out, as XLA's parser allows; of any
// other operand it may not.
func TestBroadcastScalarWithoutDimensions(t *testing.T) {
	m, err := ParseModule("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT b = f32[2,3] broadcast(x)\n}")
	require.NoError(t, err)
	assert.Contains(t, Print(m), "broadcast(f32[] %x), dimensions={}")
	_, err = ParseModule("HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  ROOT b = f32[2,3] broadcast(x)\n}")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "broadcast")
}
