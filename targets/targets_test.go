package targets

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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

// lavapipeWith is the built-in lavapipe profile with the properties structure
// named by path changed: set[key] replaces a field (nil deletes it).
func lavapipeWith(t *testing.T, structure string, set map[string]any) []byte {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal(lavapipeProfile, &p); err != nil {
		t.Fatal(err)
	}
	props := p["capabilities"].(map[string]any)["device"].(map[string]any)["properties"].(map[string]any)
	s := props[structure].(map[string]any)
	if structure == "VkPhysicalDeviceProperties" {
		s = s["limits"].(map[string]any)
	}
	for k, v := range set {
		if v == nil {
			delete(s, k)
		} else {
			s[k] = v
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestProfileBelowVulkanMinimums: a limit below the least every Vulkan device
// supports (the spec's Required Limits table) is refused, naming the field, its
// value and the minimum. maxComputeWorkGroupInvocations: 1 used to be accepted
// and planned into kernels of 128 invocations; negative sizes used to be called
// "missing or zero".
func TestProfileBelowVulkanMinimums(t *testing.T) {
	const limits = "VkPhysicalDeviceProperties"
	for _, tc := range []struct {
		structure string
		set       map[string]any
		want      string
	}{
		{limits, map[string]any{"maxComputeWorkGroupInvocations": 1}, "limits.maxComputeWorkGroupInvocations is 1, below Vulkan's required minimum of 128"},
		{limits, map[string]any{"maxComputeWorkGroupInvocations": 127}, "maxComputeWorkGroupInvocations is 127, below Vulkan's required minimum of 128"},
		{limits, map[string]any{"maxComputeWorkGroupSize": []int{1024, 1024, 63}}, "maxComputeWorkGroupSize[2] is 63, below Vulkan's required minimum of 64"},
		{limits, map[string]any{"maxComputeWorkGroupSize": []int{127, 1024, 1024}}, "maxComputeWorkGroupSize[0] is 127, below Vulkan's required minimum of 128"},
		{limits, map[string]any{"maxComputeWorkGroupSize": nil}, "maxComputeWorkGroupSize[0] is missing or zero"},
		{limits, map[string]any{"maxComputeWorkGroupCount": []int{65535, 1000, 65535}}, "maxComputeWorkGroupCount[1] is 1000, below Vulkan's required minimum of 65535"},
		{limits, map[string]any{"maxComputeSharedMemorySize": 16383}, "maxComputeSharedMemorySize is 16383, below Vulkan's required minimum of 16384"},
		{limits, map[string]any{"maxStorageBufferRange": -1}, "maxStorageBufferRange is -1, below Vulkan's required minimum of 134217728"},
		{limits, map[string]any{"maxStorageBufferRange": 1 << 20}, "maxStorageBufferRange is 1048576, below Vulkan's required minimum of 134217728"},
		{limits, map[string]any{"maxStorageBufferRange": nil}, "maxStorageBufferRange is missing or zero"},
		{"VkPhysicalDeviceMaintenance3Properties", map[string]any{"maxMemoryAllocationSize": -5}, "VkPhysicalDeviceMaintenance3Properties.maxMemoryAllocationSize is -5, below Vulkan's required minimum of 1073741824"},
		{"VkPhysicalDeviceMaintenance3Properties", map[string]any{"maxMemoryAllocationSize": 1<<30 - 1}, "maxMemoryAllocationSize is 1073741823, below"},
		{limits, map[string]any{"maxTexelBufferElements": 65535}, "maxTexelBufferElements is 65535, below Vulkan's required minimum of 65536"},
		{limits, map[string]any{"maxPerStageDescriptorSampledImages": 15}, "maxPerStageDescriptorSampledImages is 15, below Vulkan's required minimum of 16"},
		{limits, map[string]any{"maxPerStageDescriptorStorageBuffers": 3}, "maxPerStageDescriptorStorageBuffers is 3, below Vulkan's required minimum of 4"},
		{limits, map[string]any{"maxPerStageDescriptorStorageBuffers": 4}, "maxPerStageDescriptorStorageBuffers is 4; vkxla needs more than 4"},
		{limits, map[string]any{"minStorageBufferOffsetAlignment": 512}, "minStorageBufferOffsetAlignment is 512; Vulkan requires a power of two of at most 256"},
		{limits, map[string]any{"minStorageBufferOffsetAlignment": 24}, "minStorageBufferOffsetAlignment is 24; Vulkan requires a power of two"},
		{limits, map[string]any{"minTexelBufferOffsetAlignment": -16}, "minTexelBufferOffsetAlignment is -16; Vulkan requires a power of two"},
	} {
		_, err := FromVulkaninfo(lavapipeWith(t, tc.structure, tc.set))
		if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want ErrProfile saying %q", tc.set, err, tc.want)
		}
	}
}

// TestProfileAtVulkanMinimums: a device with exactly the required limits (and
// no texel limits: kernels then read no texel buffers) is a valid target, and the
// kernels planned for it keep within those limits (workgroups of at most 128
// invocations and (128, 128, 64), push constants within 128 bytes), so accepting
// the minimums is honouring them.
func TestProfileAtVulkanMinimums(t *testing.T) {
	d, err := FromVulkaninfo(lavapipeWith(t, "VkPhysicalDeviceProperties", map[string]any{
		"maxComputeWorkGroupInvocations": 128, "maxComputeWorkGroupSize": []int{128, 128, 64},
		"maxComputeWorkGroupCount": []int{65535, 65535, 65535}, "maxComputeSharedMemorySize": 16384,
		"maxStorageBufferRange": 1 << 27, "minStorageBufferOffsetAlignment": 256, "maxPerStageDescriptorStorageBuffers": 5,
		"maxTexelBufferElements": nil, "minTexelBufferOffsetAlignment": nil, "maxPerStageDescriptorSampledImages": nil,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if d.MaxWorkgroupInvocations != 128 || d.MaxFusionParams() != 1 || d.Codegen().MaxTexelBufferElements != 0 {
		t.Errorf("invocations %d, fusion params %d, texel elements %d; want 128, 1, 0",
			d.MaxWorkgroupInvocations, d.MaxFusionParams(), d.Codegen().MaxTexelBufferElements)
	}
	programs, err := filepath.Glob("../testdata/programs/*.hlo")
	if err != nil || len(programs) < 10 {
		t.Fatalf("%d programs (%v)", len(programs), err)
	}
	kernels := 0
	for _, f := range append(programs, "../hlo/testdata/xla/conv_net.hlo", "../hlo/testdata/xla/gather_scatter.hlo") {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := hlo.ParseModule(string(text))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		p, err := plan.Build(m, d.Plan(), plan.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, k := range p.Kernels() {
			kernels++
			ls := k.Kernel.LocalSize
			if ls[0]*ls[1]*ls[2] > 128 || ls[0] > 128 || ls[1] > 128 || ls[2] > 64 || k.Kernel.PushConstantSize > 128 {
				t.Errorf("%s: kernel %s has local size %v and %d bytes of push constants", f, k.Kernel.Name, ls, k.Kernel.PushConstantSize)
			}
		}
	}
	if kernels < 20 {
		t.Errorf("%d kernels planned; the test needs more to mean something", kernels)
	}
}
