package targets

import (
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/alloc"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
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

// TestPublishedProfiles: each vendor profile gives the facts its source states
// (the values below are read from the gpuinfo reports in KhronosGroup/Vulkan-Profiles
// named in nvidia.go, amd.go and intel.go), read through the Vulkan 1.1–1.3
// structures those reports use.
func TestPublishedProfiles(t *testing.T) {
	for _, tc := range []struct {
		name                string
		sg, sgMin, sgMax    uint32
		shared              uint32
		wgSize              [3]uint32
		block, align        int64
		float64, arithmetic bool
		driver              string
	}{
		{"nvidia-rtx2070", 32, 32, 32, 48 << 10, [3]uint32{1024, 1024, 64}, 1<<63 - 1, 16, true, true, "NVIDIA"},
		{"amd-rx5700xt", 64, 32, 64, 64 << 10, [3]uint32{1024, 1024, 1024}, 4294967292, 16, true, true, "radv"},
		{"intel-arc-a770", 32, 8, 32, 48 << 10, [3]uint32{1024, 1024, 1024}, 37801967616, 16, false, true, "Intel open-source Mesa driver"},
	} {
		d, err := Builtin(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := [...]any{d.SubgroupSize, d.MinSubgroupSize, d.MaxSubgroupSize, d.MaxSharedMemory, d.MaxWorkgroupSize,
			d.Limits().MaxBlockSize, d.Limits().Alignment, d.Float64, d.SubgroupArithmetic, d.Driver,
			d.MaxWorkgroupInvocations, d.MaxStorageBufferRange, d.Float16 && d.Int8 && d.Int16 && d.Int64 && d.StorageBuffer8Bit && d.StorageBuffer16Bit,
			d.BufferDeviceAddress}
		want := [...]any{tc.sg, tc.sgMin, tc.sgMax, tc.shared, tc.wgSize, tc.block, tc.align, tc.float64, tc.arithmetic, tc.driver,
			uint32(1024), int64(1<<32 - 1), true, true}
		if got != want {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, want)
		}
		if d.Codegen().MaxLoopIterations != 0 || d.MaxFusionParams() != 64 {
			t.Errorf("%s: loop limit %d, fusion params %d; want none, 64", tc.name, d.Codegen().MaxLoopIterations, d.MaxFusionParams())
		}
	}
}

// TestVendorProfilesAddressBigTensors: the vendor profiles state
// bufferDeviceAddress, so a plan for them reaches a 5 GiB tensor (beyond their
// 4 GiB − 1 bindings) by address, never split. The RX 5700 XT's blocks of 4 GiB − 4
// hold no tensor beyond one binding, so it has no such plan.
func TestVendorProfilesAddressBigTensors(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule big
ENTRY e {
  x = f32[5,268435456] parameter(0)
  ROOT y = f32[5,268435456] negate(x)
}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"nvidia-rtx2070", "intel-arc-a770"} {
		d, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Build(m, d.Plan(), plan.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		big := 0
		for _, r := range p.Arena().Ranges {
			if r.Size > d.MaxStorageBufferRange {
				big++
				if !r.Addressed || r.Split {
					t.Errorf("%s: %v is not reached by address", name, r)
				}
			}
		}
		if big != 2 {
			t.Errorf("%s: %d buffers beyond one binding, want 2 (x and y)", name, big)
		}
	}
}

// TestTexelFacts: kernels may read texel buffers where the profile states them and
// every arena offset (a multiple of Limits' alignment) may start a view: lavapipe
// and the NVIDIA and AMD reports (16-byte arena offsets; views at 16 and 4), not a
// device asking 64-byte view offsets, and not the Intel profile, which leaves the
// texel limits out.
func TestTexelFacts(t *testing.T) {
	for name, want := range map[string]int64{"lavapipe": 1 << 27, "nvidia-rtx2070": 1 << 27, "amd-rx5700xt": 1<<32 - 1, "intel-arc-a770": 0} {
		d, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Codegen().MaxTexelBufferElements; got != want {
			t.Errorf("%s: MaxTexelBufferElements %d, want %d", name, got, want)
		}
		if want > 0 && d.Codegen().MaxTexelBuffers < 16 {
			t.Errorf("%s: %d texel buffers per kernel", name, d.Codegen().MaxTexelBuffers)
		}
	}
	d, err := Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	d.MinTexelBufferOffsetAlignment = 64
	if got := d.Codegen().MaxTexelBufferElements; got != 0 {
		t.Errorf("views need 64-byte offsets, the arena gives 16: MaxTexelBufferElements %d, want 0", got)
	}
}
