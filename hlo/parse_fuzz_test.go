package hlo

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParse feeds arbitrary text to the parser. Properties: no input panics (the
// parser's recover turns a panic into internalParserError, which fails here); and
// whatever parses prints, parses back, and prints identically. The seed corpus is
// every opcode's round-trip sample and every module in testdata/xla (committed under
// testdata/fuzz/FuzzParse, where regression inputs go too), and the inputs of the
// error table, which start the fuzzer on the error paths.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 5m -parallel 1 ./hlo/
func FuzzParse(f *testing.F) {
	// Keep elided constants small, so that a mutated shape never allocates much.
	maxElidedBytes = 1 << 16
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	for _, c := range parseErrorCases {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseModuleUnverified(text)
		if err != nil {
			require.NotContains(t, err.Error(), internalParserError)
			return
		}
		printed := Print(m)
		again, err := ParseModuleUnverified(printed)
		require.NoError(t, err, "the printed module does not parse:\n%s", printed)
		require.Equal(t, printed, Print(again))
		// The verifying parse runs shape inference on arbitrary (parseable) input.
		if _, err := ParseModule(text); err != nil {
			require.NotContains(t, err.Error(), internalParserError)
		}
	})
}

// fuzzSeeds returns the round-trip samples of every opcode and the XLA-style dumps.
func fuzzSeeds(tb testing.TB) []string {
	var seeds []string
	for _, op := range AllOpcodes() {
		if text, ok := textSampleFor(op); ok {
			seeds = append(seeds, text)
		}
	}
	files, err := filepath.Glob("testdata/xla/*.hlo")
	require.NoError(tb, err)
	for _, file := range files {
		text, err := os.ReadFile(file)
		require.NoError(tb, err)
		seeds = append(seeds, string(text))
	}
	return seeds
}

// TestFuzzCorpusIsCommitted keeps the committed seed corpus in step with the seeds:
// every seed has its file in testdata/fuzz/FuzzParse (VKXLA_WRITE_FUZZ_CORPUS=1
// writes the missing ones).
func TestFuzzCorpusIsCommitted(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzParse")
	write := os.Getenv("VKXLA_WRITE_FUZZ_CORPUS") == "1"
	for i, seed := range fuzzSeeds(t) {
		path := filepath.Join(dir, "seed-"+seedName(i, seed))
		want := "go test fuzz v1\nstring(" + strconv.Quote(seed) + ")\n"
		if write {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "missing corpus file; run with VKXLA_WRITE_FUZZ_CORPUS=1")
		require.Equal(t, want, string(got), path)
	}
}

// seedName names a seed file after its module's name (HloModule <name>).
func seedName(i int, seed string) string {
	fields := strings.FieldsFunc(seed, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' })
	name := "module"
	if len(fields) > 1 {
		name = fields[1]
	}
	return fmt.Sprintf("%03d-%s", i, strings.NewReplacer("/", "_", ".", "_").Replace(name))
}
