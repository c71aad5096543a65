package vkxla

import (
	"testing"

	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/targets"
)

// TestDeviceMatchesBuiltinProfile: on lavapipe, what the running device reports
// (deviceTarget of its caps) is the built-in lavapipe profile (vulkaninfo --json of
// the same driver), so `vkxla compile -target lavapipe` plans what Compile plans.
func TestDeviceMatchesBuiltinProfile(t *testing.T) {
	d := devicetest.Open(t)
	got := deviceTarget(d.Caps())
	if got.Driver != "llvmpipe" {
		t.Skipf("not lavapipe (%q): the built-in profile describes lavapipe", got.Driver)
	}
	want, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	if got.Plan() != want.Plan() {
		t.Errorf("device plan target\n got %+v\nwant %+v", got.Plan(), want.Plan())
	}
	if got.MinSubgroupSize != want.MinSubgroupSize || got.MaxSubgroupSize != want.MaxSubgroupSize {
		t.Errorf("subgroup sizes %d..%d, profile %d..%d", got.MinSubgroupSize, got.MaxSubgroupSize, want.MinSubgroupSize, want.MaxSubgroupSize)
	}
}
