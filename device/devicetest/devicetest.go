// Package devicetest opens a Vulkan device for tests with the validation layer on and
// turns every validation warning or error into a test failure.
package devicetest

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vkxla/vkxla/device"
)

// Open opens the default device for a test. Validation (core and synchronisation) is
// on unless VKXLA_VALIDATION=0. At cleanup the device is closed (which frees whatever
// the test left open) and the test fails if the layer reported anything, leaks at
// device destruction included. Without a Vulkan device the test is skipped, or fails
// when CI=true.
func Open(t testing.TB) *device.Device {
	t.Helper()
	validation := Validation()
	d, err := device.Open(device.Options{Validation: validation})
	if errors.Is(err, device.ErrNoDevice) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no Vulkan device (CI=true makes this a failure): %v", err)
		}
		t.Skipf("no Vulkan device (install mesa-vulkan-drivers for lavapipe): %v", err)
	}
	if err != nil {
		t.Fatalf("devicetest: opening the device: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("devicetest: closing the device: %v", err)
		}
		if msgs := d.ValidationErrors(); len(msgs) > 0 {
			t.Errorf("validation layer reported %d message(s):\n%s", len(msgs), strings.Join(msgs, "\n"))
		}
	})
	return d
}

// Validation reports whether tests run with the validation layer (VKXLA_VALIDATION
// is not "0").
func Validation() bool { return os.Getenv("VKXLA_VALIDATION") != "0" }

var settingsOnce sync.Once

// The settings path is set before any test runs: setenv while another goroutine's C
// code (the Vulkan loader) reads the environment is not safe.
func init() {
	if Validation() {
		UseLayerSettings()
	}
}

// UseLayerSettings points VK_LAYER_SETTINGS_PATH at the repository's
// testdata/vk_layer_settings.txt unless it is set already: the 1.3.239 layer takes
// its settings (synchronisation validation, report flags, callback action) only from
// that file.
func UseLayerSettings() {
	settingsOnce.Do(func() {
		if os.Getenv("VK_LAYER_SETTINGS_PATH") != "" {
			return
		}
		if path := settingsFile(); path != "" {
			os.Setenv("VK_LAYER_SETTINGS_PATH", path)
		}
	})
}

// settingsFile finds testdata/vk_layer_settings.txt next to go.mod, walking up from
// the working directory (a test's package directory) or else from this source file.
func settingsFile() string {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for ; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				path := filepath.Join(dir, "testdata", "vk_layer_settings.txt")
				if _, err := os.Stat(path); err == nil {
					return path
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return ""
}

// U32Bytes and F32Bytes give words as buffer bytes (little-endian, as Buffer.Write
// takes them); BytesU32 and BytesF32 read them back.
func U32Bytes(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func BytesU32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func F32Bytes(v ...float32) []byte {
	w := make([]uint32, len(v))
	for i, x := range v {
		w[i] = math.Float32bits(x)
	}
	return U32Bytes(w...)
}

func BytesF32(b []byte) []float32 {
	w := BytesU32(b)
	v := make([]float32, len(w))
	for i, x := range w {
		v[i] = math.Float32frombits(x)
	}
	return v
}
