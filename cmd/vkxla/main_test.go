package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// TestRunExample is the README's main job: the example MLP on the default device,
// printed next to cpuref, agreeing within tolerance.
func TestRunExample(t *testing.T) {
	devicetest.Open(t) // fails in CI when there is no Vulkan device
	var out bytes.Buffer
	require.NoError(t, run([]string{"run"}, &out), out.String())
	text := out.String()
	assert.Contains(t, text, "module mlp_forward")
	assert.Contains(t, text, "gpu:")
	assert.Contains(t, text, "cpuref:")
	assert.Contains(t, text, "agree within")
	assert.NotContains(t, text, "MISMATCH")
	assert.Contains(t, text, "peak ")
	assert.Contains(t, text, "live at the peak (")
}

func TestRunFileAndPrint(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-seed", "3", "../../testdata/programs/softmax.hlo"}, &out), out.String())
	assert.Contains(t, out.String(), "agree within")

	out.Reset()
	require.NoError(t, run([]string{"print", "examples/mlp.hlo"}, &out))
	assert.True(t, strings.HasPrefix(out.String(), "HloModule mlp_forward"), out.String())
}

// TestRunOptions: passes switched off and a memory budget reach Compile; a budget
// no plan can meet is an error saying what the plan needs.
func TestRunOptions(t *testing.T) {
	devicetest.Open(t)
	var out bytes.Buffer
	require.NoError(t, run([]string{"run", "-without", "fusion,schedule", "-budget", "100000", "../../testdata/programs/softmax.hlo"}, &out), out.String())
	assert.Contains(t, out.String(), "agree within")

	err := run([]string{"run", "-budget", "100", "../../testdata/programs/softmax.hlo"}, &out)
	require.ErrorIs(t, err, vkxla.ErrOverBudget)
	assert.Contains(t, err.Error(), "over the budget of 100 bytes")

	err = run([]string{"run", "-without", "fusoin"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown pass "fusoin"`)
}

func TestCommandErrors(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"frobnicate"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown command "frobnicate"`)

	err = run([]string{"run", "no/such/file.hlo"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no/such/file.hlo")

	err = runModule(&out, "bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n", runFlags{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.hlo:")
	assert.Contains(t, err.Error(), "3:")
}

// runMain runs the command as main does and returns its exit status, its stdout and
// everything written to stderr, by it or by anything else (the flag package used to
// print flag errors there itself, before main printed them again).
func runMain(t *testing.T, args ...string) (status int, stdout, stderr string) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = w
	var out, errOut bytes.Buffer
	status = mainWithIO(args, &out, io.MultiWriter(&errOut, w))
	os.Stderr = saved
	require.NoError(t, w.Close())
	all, err := io.ReadAll(r)
	require.NoError(t, err)
	return status, out.String(), string(all)
}

// TestFlagErrorPrintedOnce: a bad flag is one error, printed once with the flags'
// usage and the program's name once.
func TestFlagErrorPrintedOnce(t *testing.T) {
	status, stdout, stderr := runMain(t, "run", "-bogus")
	assert.Equal(t, 1, status)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "flag provided but not defined: -bogus"), stderr)
	assert.True(t, strings.HasPrefix(stderr, "vkxla: run: flag provided but not defined: -bogus\nflags of run:\n"), stderr)
	assert.Contains(t, stderr, "-timeout duration")

	status, stdout, stderr = runMain(t, "print", "-h")
	assert.Equal(t, 0, status)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "flags of print:\n  -identity-target NAME")
	assert.Contains(t, stdout, "\n  -max-file-bytes int")
}

func TestErrorTextHasOnePrefix(t *testing.T) {
	assert.Equal(t, "vkxla: Compile m: boom", errorText(errors.New("vkxla: Compile m: boom")))
	assert.Equal(t, "vkxla: cpuref: boom", errorText(errors.New("cpuref: boom")))
	assert.Equal(t, "vkxla: run takes at most one file", errorText(errors.New("run takes at most one file")))
}

// endlessLoop is a while whose condition is always true (shared with cpuref's tests).
const endlessLoop = "../../cpuref/testdata/endless_while.hlo"

// TestRunTimeout: an endless while used to hang the CLI in cpuref forever; -timeout
// ends the run with an error saying so, printed with one prefix each.
func TestRunTimeout(t *testing.T) {
	status, _, stderr := runMain(t, "run", "-timeout", "50ms", endlessLoop)
	assert.Equal(t, 1, status)
	assert.True(t, strings.HasPrefix(stderr, "vkxla: cpuref: computation \"e\": %l = while:"), stderr)
	assert.Contains(t, stderr, "context deadline exceeded (the run's -timeout of 50ms; -timeout 0 for none)")
	assert.NotContains(t, stderr, "cpuref: cpuref:")

	err := run([]string{"run", "-timeout", "-1s", endlessLoop}, io.Discard)
	assert.ErrorContains(t, err, "must not be negative")
}

// TestInputFileCap: /dev/zero used to be read without end; files over the cap are
// an error naming the cap and the flag.
func TestInputFileCap(t *testing.T) {
	for _, cmd := range []string{"run", "print"} {
		err := run([]string{cmd, "-max-file-bytes", "1000", "/dev/zero"}, io.Discard)
		require.Error(t, err, cmd)
		assert.Contains(t, err.Error(), "/dev/zero: larger than 1000 bytes (-max-file-bytes raises the cap)")
	}
	info, err := os.Stat(endlessLoop)
	require.NoError(t, err)
	err = run([]string{"print", "-max-file-bytes", fmt.Sprint(info.Size() - 1), endlessLoop}, io.Discard)
	assert.ErrorContains(t, err, "larger than")
	var out bytes.Buffer
	require.NoError(t, run([]string{"print", "-max-file-bytes", fmt.Sprint(info.Size()), endlessLoop}, &out))
	assert.Contains(t, out.String(), "HloModule forever")
}

// TestRunRefusesHugeInputs: a parameter of f32[1e12] used to be allocated (and kill
// the process); it is refused against cpuref's limits, which a flag raises.
func TestRunRefusesHugeInputs(t *testing.T) {
	text := "HloModule big\nENTRY e {\n  ROOT p = f32[1000000000000] parameter(0)\n}\n"
	err := runModule(io.Discard, "big.hlo", text, runFlags{})
	require.ErrorIs(t, err, cpuref.ErrTooLarge)
	assert.Contains(t, err.Error(), "f32[1000000000000] is 4000000000000 bytes, over the limit of 2147483648 bytes per value")
	assert.Contains(t, err.Error(), "(-cpuref-max-bytes raises cpuref's limits)")

	err = runModule(io.Discard, "big.hlo", text, runFlags{limits: cpuref.Limits{MaxValueBytes: 3}})
	assert.ErrorContains(t, err, "over the limit of 3 bytes per value")
}

// TestCompileErrorHasOnePrefix: the vkxla package's errors begin "vkxla: "; the CLI
// used to print "vkxla: vkxla: Compile …".
func TestCompileErrorHasOnePrefix(t *testing.T) {
	devicetest.Open(t)
	status, _, stderr := runMain(t, "run", "-budget", "100", "../../testdata/programs/softmax.hlo")
	assert.Equal(t, 1, status)
	assert.True(t, strings.HasPrefix(stderr, "vkxla: Compile "), stderr)
	assert.Equal(t, 1, strings.Count(stderr, "vkxla:"), stderr)
}

// identityTargetRuns makes each run of TestIdentityTarget use a fresh target name:
// registrations are process-wide and go test -count=N reruns the test.
var identityTargetRuns int

// TestIdentityTarget: a vendor's pass-through custom-call target is an error
// naming it, the instruction and the line, until -identity-target names it.
func TestIdentityTarget(t *testing.T) {
	devicetest.Open(t)
	identityTargetRuns++
	target := fmt.Sprintf("acme.placement_hint.%d", identityTargetRuns)
	path := filepath.Join(t.TempDir(), "vendor.hlo")
	require.NoError(t, os.WriteFile(path, []byte(`HloModule vendor
ENTRY e {
  x = f32[5] parameter(0)
  tag = f32[5] custom-call(x), custom_call_target="`+target+`", backend_config="{\"tier\": 2}"
  ROOT y = f32[5] exponential(tag)
}
`), 0o644))
	var out bytes.Buffer
	err := run([]string{"run", path}, &out)
	require.ErrorIs(t, err, hlo.ErrUnknownCustomCall)
	for _, want := range []string{"4:", `"` + target + `"`, "custom-call tag", "-identity-target " + target} {
		assert.Contains(t, err.Error(), want)
	}
	require.NoError(t, run([]string{"run", "-identity-target", target, "-identity-target", "acme.other", path}, &out), out.String())
	assert.Contains(t, out.String(), "agree within")

	err = run([]string{"run", "-identity-target", "TopK", path}, &out)
	require.Error(t, err, "TopK is not an identity target")
	assert.Contains(t, err.Error(), "-identity-target TopK")
}
