package device_test

import (
	"bytes"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

//go:generate glslc -O --target-env=vulkan1.1 -o testdata/add.spv testdata/add.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/addr.spv testdata/addr.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/inc.spv testdata/inc.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/spin.spv testdata/spin.comp
//go:generate glslc -O --target-env=vulkan1.1 -o testdata/texel.spv testdata/texel.comp

// addSPV: c[i] = a[i]*scale + b[i] + bias (spec constants: 0 workgroup size, 1 scale;
// push constants: n uint32, bias float32).
//
//go:embed testdata/add.spv
var addSPV []byte

// addrSPV: x[i] += 1 for i < n, x reached through the device address in word 0 of
// binding 0 (a u64 table), not through a binding of its own (push constant n;
// workgroup size 64).
//
//go:embed testdata/addr.spv
var addrSPV []byte

// incSPV: x[i] += 1 for i < n (push constant n; workgroup size 64).
//
//go:embed testdata/inc.spv
var incSPV []byte

// spinSPV: x[i] = LCG^iters(x[i]) (push constant iters, below 65535: lavapipe's loop
// limit; workgroup size 64).
//
//go:embed testdata/spin.spv
var spinSPV []byte

// texelSPV: for i < n, y[8i..8i+3] are the bits of texel i of F (an rgba32ui uniform
// texel buffer, binding 1) and y[8i+4..8i+7] the values of texel i of U (rgba16ui,
// binding 2); y[8n] and y[8n+1] are textureSize(F) and textureSize(U) (binding 0 is
// y; push constant n; workgroup size 64).
//
//go:embed testdata/texel.spv
var texelSPV []byte

// Every committed .spv is what its go:generate line makes of the GLSL.
func TestTestdataSPIRVUpToDate(t *testing.T) {
	glslc, err := exec.LookPath("glslc")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("glslc is not installed: %v", err)
		}
		t.Skipf("glslc is not installed (apt-get install glslc): %v", err)
	}
	src, err := os.ReadFile("testdata_test.go")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		rest, ok := strings.CutPrefix(line, "//go:generate glslc ")
		if !ok {
			continue
		}
		args := strings.Fields(rest)
		out := filepath.Join(t.TempDir(), "out.spv")
		var committed string
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				committed, args[i+1] = args[i+1], out
			}
		}
		require.NotEmpty(t, committed, "no -o in %q", line)
		msg, err := exec.Command(glslc, args...).CombinedOutput()
		require.NoError(t, err, "%s", msg)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		want, err := os.ReadFile(committed)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(got, want), "%s is stale: run go generate ./device/", committed)
		n++
	}
	assert.GreaterOrEqual(t, n, 5, "go:generate glslc lines found")
}
