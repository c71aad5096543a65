package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// committed is the generated file this generator writes through go generate.
const committed = "../../opcodes_gen.go"

// TestGeneratedFileIsUpToDate regenerates into a temporary directory (through
// run, as go generate would) and requires the committed file to match byte
// for byte. On failure, run `go generate ./spirv`.
func TestGeneratedFileIsUpToDate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opcodes_gen.go")
	require.NoError(t, run(defaultCore, defaultGLSL, out))
	fresh, err := os.ReadFile(out)
	require.NoError(t, err)
	have, err := os.ReadFile(committed)
	require.NoError(t, err)
	assert.True(t, string(fresh) == string(have), "spirv/opcodes_gen.go is stale: run `go generate ./spirv`")
}

func TestGenerateReportsBadInput(t *testing.T) {
	dir := t.TempDir()
	_, err := Generate(filepath.Join(dir, "missing.json"), defaultGLSL)
	assert.Error(t, err)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"instructions": [`), 0o644))
	_, err = Generate(bad, defaultGLSL)
	assert.ErrorContains(t, err, "bad.json")

	hexBad := filepath.Join(dir, "hex.json")
	require.NoError(t, os.WriteFile(hexBad, []byte(`{"operand_kinds": [{"category": "BitEnum", "kind": "K", "enumerants": [{"enumerant": "A", "value": "0xZZ"}]}]}`), 0o644))
	_, err = Generate(hexBad, defaultGLSL)
	assert.ErrorContains(t, err, "0xZZ")
}

// TestGenerateRejectsNameClash feeds a grammar where two enumerants map to one
// Go identifier; the generator must say so rather than emit code that does
// not compile.
func TestGenerateRejectsNameClash(t *testing.T) {
	clash := filepath.Join(t.TempDir(), "clash.json")
	grammar := `{"major_version": 1, "minor_version": 6, "revision": 1, "instructions": [],
		"operand_kinds": [
			{"category": "ValueEnum", "kind": "Foo", "enumerants": [{"enumerant": "BarBaz", "value": 1}]},
			{"category": "ValueEnum", "kind": "FooBar", "enumerants": [{"enumerant": "Baz", "value": 2}]}]}`
	require.NoError(t, os.WriteFile(clash, []byte(grammar), 0o644))
	_, err := Generate(clash, defaultGLSL)
	assert.ErrorContains(t, err, "FooBarBaz")
}
