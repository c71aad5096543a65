package targets

import (
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// TestLavapipeBuiltin: the built-in lavapipe profile (vulkaninfo --json of the CI
// device) gives the facts codegen's device-free tests assume (LavapipeTarget), the
// loop limiter from the lavapipe family, 16-byte alignment, 128 MiB bindings,
// 2 GiB blocks, 32 − 4 fused parameters and a fixed subgroup size of 8.
func TestLavapipeBuiltin(t *testing.T) {
	d, err := Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Codegen(), codegen.LavapipeTarget(); got != want {
		t.Errorf("codegen target\n got %+v\nwant %+v", got, want)
	}
	if got, want := d.Limits(), (alloc.Limits{Alignment: 16, MaxBindingRange: 128 << 20, MaxBlockSize: 2 << 30}); got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
	if d.MaxFusionParams() != 28 || d.MinSubgroupSize != 8 || d.MaxSubgroupSize != 8 {
		t.Errorf("fusion params %d, subgroup sizes %d..%d; want 28, 8..8", d.MaxFusionParams(), d.MinSubgroupSize, d.MaxSubgroupSize)
	}
}

// TestNonLavapipeHasNoLoopLimit: the loop limit is lavapipe's alone.
func TestNonLavapipeHasNoLoopLimit(t *testing.T) {
	d, err := Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	d.Name, d.Driver = "Some GPU", "Some driver"
	if got := d.Codegen().MaxLoopIterations; got != 0 {
		t.Errorf("MaxLoopIterations %d on a non-lavapipe device, want 0", got)
	}
}

func TestFromVulkaninfoErrors(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"not JSON", "{", "bad device profile"},
		{"no device block", `{"capabilities": {"device": {"properties": {}}}}`, "no capabilities block"},
		{"missing limit", `{"capabilities": {"device": {"properties": {"VkPhysicalDeviceProperties": {"deviceName": "x", "limits": {}}}}}}`,
			"maxStorageBufferRange is missing"},
	} {
		_, err := FromVulkaninfo([]byte(tc.json))
		if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrProfile saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := Builtin("nonesuch"); !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), "lavapipe") {
		t.Errorf("unknown built-in: %v, want ErrProfile listing the built-ins", err)
	}
}
