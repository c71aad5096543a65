package devicetest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/device/devicetest"
)

func TestOpen(t *testing.T) {
	d := devicetest.Open(t)
	assert.NotEmpty(t, d.Caps().Name)
	if devicetest.Validation() {
		assert.NotEmpty(t, os.Getenv("VK_LAYER_SETTINGS_PATH"), "the layer settings file is found")
	}
}

// TestOpenWithoutDevice is run by TestNoDevice in a child process whose Vulkan
// loader finds no driver.
func TestOpenWithoutDevice(t *testing.T) {
	if os.Getenv("VKXLA_TEST_NO_DEVICE") != "1" {
		t.Skip("run by TestNoDevice")
	}
	_, err := device.Open(device.Options{})
	assert.ErrorIs(t, err, device.ErrNoDevice)
	devicetest.Open(t)
	t.Error("devicetest.Open returned without a device")
}

// TestNoDevice: without a Vulkan driver, Open fails with ErrNoDevice and devicetest
// skips the test, except under CI=true where it fails it.
func TestNoDevice(t *testing.T) {
	run := func(ci string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenWithoutDevice$", "-test.v")
		cmd.Env = append(os.Environ(), "VKXLA_TEST_NO_DEVICE=1", "VK_ICD_FILENAMES=/nonexistent/icd.json",
			"VK_DRIVER_FILES=/nonexistent/icd.json", "CI="+ci)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	out := run("")
	require.Contains(t, out, "--- SKIP: TestOpenWithoutDevice", out)
	assert.Contains(t, out, "no Vulkan device")
	out = run("true")
	require.Contains(t, out, "--- FAIL: TestOpenWithoutDevice", out)
	assert.True(t, strings.Contains(out, "CI=true"), out)
}
