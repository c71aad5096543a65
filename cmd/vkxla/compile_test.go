package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/targets"
)

// TestCompileWithoutDevice: `vkxla compile` plans checkpoint.hlo for the built-in
// lavapipe profile and for a vulkaninfo --json file without opening a device: the
// module after passes, the kernel count, every buffer with its lifetime, the
// statistics (64 KiB: v and three products at the peak, as TestMemoryBudget on the
// device), a plot and a dump.
func TestCompileWithoutDevice(t *testing.T) {
	t.Setenv("VK_ICD_FILENAMES", "/nonexistent.json") // no Vulkan driver could be found
	if rt, err := vkxla.NewRuntime(); err == nil {
		rt.Close()
		t.Fatal("a Vulkan device opened with VK_ICD_FILENAMES pointing nowhere: the test would not show that compile needs none")
	}
	dir := t.TempDir()
	plot := filepath.Join(dir, "m.svg")
	for _, target := range []string{"lavapipe", "../../targets/lavapipe.json"} {
		var out bytes.Buffer
		require.NoError(t, run([]string{"compile", "-target", target, "-plot", plot, "-dump", dir, "../../testdata/programs/checkpoint.hlo"}, &out))
		text := out.String()
		assert.Contains(t, text, "target: llvmpipe")
		assert.Contains(t, text, "HloModule checkpoint")
		assert.Contains(t, text, "kernels: 3 distinct, 4 dispatches") // the add is the last dot's epilogue
		assert.Contains(t, text, `3 temporary  "a" block 0 [16384, +16384) live [0, 4]`)
		assert.Contains(t, text, "peak 65536 B, lower bound 65536 B")
		svg, err := os.ReadFile(plot)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(svg), "<svg "), "plot:\n%s", svg)
		for _, f := range []string{"00-input.hlo", "05-kernels.hlo", "10-plan.txt", "11-memory.svg"} {
			_, err := os.Stat(filepath.Join(dir, "checkpoint", f))
			assert.NoError(t, err, "dump file %s", f)
		}
	}
	// A budget remat meets: a is recomputed (52 KiB); one it cannot: ErrOverBudget.
	var out bytes.Buffer
	require.NoError(t, run([]string{"compile", "-budget", "57344", "../../testdata/programs/checkpoint.hlo"}, &out))
	assert.Contains(t, out.String(), "a.remat")
	assert.Contains(t, out.String(), "peak 53248 B")
	err := run([]string{"compile", "-budget", "40960", "../../testdata/programs/checkpoint.hlo"}, &out)
	require.ErrorIs(t, err, vkxla.ErrOverBudget)
	// remat and host-offload (the parameters and an output to host memory) reach
	// 48 KiB, no lower
	assert.Contains(t, err.Error(), "needs 49152 bytes of device memory, over the budget of 40960 bytes")
}

// TestCompileTargetList: `-target list` names every built-in profile with its
// subgroup-size range, and each plans checkpoint.hlo with no device.
func TestCompileTargetList(t *testing.T) {
	t.Setenv("VK_ICD_FILENAMES", "/nonexistent.json")
	var out bytes.Buffer
	require.NoError(t, run([]string{"compile", "-target", "list"}, &out))
	for _, line := range []string{"amd-rx5700xt     AMD Radeon RX 5700 XT (RADV NAVI10) (driver radv): subgroup 64 (32..64)",
		"intel-arc-a770   Intel(R) Arc(tm) A770 Graphics (DG2) (driver Intel open-source Mesa driver): subgroup 32 (8..32)",
		"nvidia-rtx2070   NVIDIA GeForce RTX 2070 (driver NVIDIA): subgroup 32 (32..32)", "lavapipe         llvmpipe"} {
		assert.Contains(t, out.String(), line)
	}
	for _, name := range targets.Builtins() {
		out.Reset()
		require.NoError(t, run([]string{"compile", "-target", name, "../../testdata/programs/checkpoint.hlo"}, &out), name)
		assert.Contains(t, out.String(), "peak 65536 B", name)
	}
}

func TestCompileErrors(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"compile", "-target", "nonesuch", "../../testdata/programs/checkpoint.hlo"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a built-in profile (amd-rx5700xt, intel-arc-a770, lavapipe, nvidia-rtx2070)")
	bad := filepath.Join(t.TempDir(), "caps.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"capabilities": {}}`), 0o644))
	err = run([]string{"compile", "-target", bad, "../../testdata/programs/checkpoint.hlo"}, &out)
	require.ErrorIs(t, err, targets.ErrProfile)
	err = run([]string{"compile"}, &out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "compile takes one file.hlo")
}

// TestCompileRefusesLimitsBelowVulkan: a caps.json stating limits no Vulkan device
// has used to be planned (maxComputeWorkGroupInvocations 1 gave kernels of 128
// invocations), and a negative maxStorageBufferRange was "missing or zero"; each is
// refused naming the field, its value and Vulkan's minimum.
func TestCompileRefusesLimitsBelowVulkan(t *testing.T) {
	profile, err := os.ReadFile("../../targets/lavapipe.json")
	require.NoError(t, err)
	for _, tc := range []struct{ from, to, want string }{
		{`"maxComputeWorkGroupInvocations": 1024`, `"maxComputeWorkGroupInvocations": 1`, "maxComputeWorkGroupInvocations is 1, below Vulkan's required minimum of 128"},
		{`"maxStorageBufferRange": 134217728`, `"maxStorageBufferRange": -1`, "maxStorageBufferRange is -1, below Vulkan's required minimum of 134217728"},
		{`"maxMemoryAllocationSize": 2147483648`, `"maxMemoryAllocationSize": -1`, "maxMemoryAllocationSize is -1, below Vulkan's required minimum of 1073741824"},
	} {
		bad := strings.Replace(string(profile), tc.from, tc.to, 1)
		require.NotEqual(t, string(profile), bad, tc.from)
		caps := filepath.Join(t.TempDir(), "caps.json")
		require.NoError(t, os.WriteFile(caps, []byte(bad), 0o644))
		err := run([]string{"compile", "-target", caps, "../../testdata/programs/checkpoint.hlo"}, io.Discard)
		require.ErrorIs(t, err, targets.ErrProfile, tc.from)
		assert.Contains(t, err.Error(), "-target "+caps+": ")
		assert.Contains(t, err.Error(), tc.want)
	}
}

// TestCompileFromVulkaninfoOutput: the whole file `vulkaninfo --json` writes for
// this machine's device (not the cut profile targets/lavapipe.json) is a -target;
// on lavapipe it plans exactly what the built-in lavapipe profile plans.
func TestCompileFromVulkaninfoOutput(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("vulkaninfo", "--json")
	cmd.Dir = dir // it writes VP_VULKANINFO_<device>_<driver>.json here
	out, err := cmd.CombinedOutput()
	files, _ := filepath.Glob(filepath.Join(dir, "VP_VULKANINFO_*.json"))
	if err != nil || len(files) != 1 {
		msg := fmt.Sprintf("vulkaninfo --json wrote %d profiles (%v): %s", len(files), err, out)
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Vulkan device or vulkan-tools (CI=true makes this a failure): %s", msg)
		}
		t.Skipf("no Vulkan device or vulkan-tools (install vulkan-tools and mesa-vulkan-drivers): %s", msg)
	}
	t.Setenv("VK_ICD_FILENAMES", "/nonexistent.json")
	const program = "../../testdata/programs/attention.hlo"
	var fromFile, builtin bytes.Buffer
	require.NoError(t, run([]string{"compile", "-target", files[0], program}, &fromFile))
	assert.Contains(t, fromFile.String(), "kernels: ")
	if !strings.Contains(fromFile.String(), "(driver llvmpipe,") {
		return // another device: it plans, but not as the lavapipe profile
	}
	require.NoError(t, run([]string{"compile", "-target", "lavapipe", program}, &builtin))
	assert.Equal(t, builtin.String(), fromFile.String())
}

// TestCompileForDevices: `-devices 2` plans one device's part of a two-device run
// without a device: the all-reduce is a host step, and each device's peak is the
// two 1 KiB buffers live at it (its result written over y, which dies there).
func TestCompileForDevices(t *testing.T) {
	file := filepath.Join(t.TempDir(), "dp.hlo")
	require.NoError(t, os.WriteFile(file, []byte(`HloModule dp
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256] parameter(0)
  y = f32[256] multiply(x, x)
  g = f32[256] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[256] add(g, x)
}
`), 0o644))
	var out bytes.Buffer
	require.NoError(t, run([]string{"compile", "-devices", "2", file}, &out))
	assert.Contains(t, out.String(), "collective g host all-reduce")
	assert.Contains(t, out.String(), "peak 2048 B")
	// On one device the two-replica group is refused.
	err := run([]string{"compile", file}, &out)
	require.ErrorIs(t, err, vkxla.ErrUnsupported)
}
