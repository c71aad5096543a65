package hlo

import (
	"strings"
	"testing"
)

// The shape rules of the expanded ops refuse what XLA refuses, with the reason.
func TestExpandedShapeErrors(t *testing.T) {
	add := "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
	for _, tc := range []struct{ name, body, want string }{
		{"bn scale", `x = f32[2,3] parameter(0)
  s = f32[2] parameter(1)
  ROOT t = (f32[2,3], f32[3], f32[3]) batch-norm-training(x, s, s), epsilon=0.1, feature_index=1`, "scale (operand 1) is f32[2], want f32[3]"},
		{"bn feature index", `x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  ROOT y = f32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=0.1, feature_index=2`, "feature_index 2 out of range"},
		{"bn integer", `x = s32[2,3] parameter(0)
  s = s32[3] parameter(1)
  ROOT y = s32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=0.1, feature_index=1`, "not floating-point"},
		{"bn negative epsilon", `x = f32[2,3] parameter(0)
  s = f32[3] parameter(1)
  ROOT y = f32[2,3] batch-norm-inference(x, s, s, s, s), epsilon=-1, feature_index=1`, "epsilon -1 is negative"},
		{"rng state", `s = u64[3] parameter(0)
  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry`, "want u64[2]"},
		{"rng bits type", `s = u64[2] parameter(0)
  ROOT r = (u64[2], f32[4]) rng-bit-generator(s), algorithm=rng_philox`, "bits f32[4]"},
		{"rng algorithm", `s = u64[2] parameter(0)
  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_mersenne`, `unknown rng algorithm "rng_mersenne"`},
		{"rng operand", `a = f32[2] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[4] rng(a, b), distribution=rng_uniform`, "operand 0 (a) is f32[2], want f32[] (a scalar of the result's type)"},
		{"rng operand type", `a = f32[] parameter(0)
  ROOT r = f64[4] rng(a, a), distribution=rng_uniform`, "operand 0 (a) is f32[], want f64[]"},
		{"rng narrow int", `a = s8[] parameter(0)
  ROOT r = s8[4] rng(a, a), distribution=rng_uniform`, "draws s8; rng draws"},
		{"rng normal int", `a = s32[] parameter(0)
  ROOT r = s32[4] rng(a, a), distribution=rng_normal`, "rng_normal draws s32; it draws floating-point types"},
		{"rng distribution", `a = f32[] parameter(0)
  ROOT r = f32[4] rng(a, a), distribution=rng_gamma`, `unknown rng distribution "rng_gamma"`},
		{"rng state delta", `ROOT s = u64[2] rng-get-and-update-state(), delta=-3`, "delta=-3 is negative"},
		{"rng state shape", `ROOT s = u64[3] rng-get-and-update-state(), delta=3`, "u64[2]"},
		{"all-gather dimension", `x = f32[4] parameter(0)
  ROOT g = f32[4] all-gather(x), replica_groups={{0}}, dimensions={1}`, "dimension 1 out of range"},
		{"reduce-scatter split", add + `ENTRY e2 {
  x = f32[3] parameter(0)
  ROOT r = f32[1] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add`, "does not split into 2 replicas"},
		{"replica groups uneven", add + `ENTRY e2 {
  x = f32[3] parameter(0)
  ROOT r = f32[6] all-gather(x), replica_groups={{0},{1,2}}, dimensions={0}`, "unequal sizes"},
		{"replica group empty", add + `ENTRY e2 {
  x = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(x), replica_groups={{0},{}}, to_apply=add`, "empty group"},
		{"iota groups", add + `ENTRY e2 {
  x = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(x), replica_groups=[2,2]<=[3], to_apply=add`, "do not split 3 devices"},
		{"permute pairs", `x = f32[3] parameter(0)
  ROOT r = f32[3] collective-permute(x), source_target_pairs={{0}}`, "want {source,target} pairs"},
		{"layout constraints", `x = f32[3] parameter(0)
  ROOT r = f32[3] custom-call(x), custom_call_target="Sharding", operand_layout_constraints={f32[4]{0}}`, "gives operand 0 shape f32[4]"},
		{"aliasing", `x = f32[3] parameter(0)
  ROOT r = f32[4] custom-call(x), custom_call_target="Sharding", output_to_operand_aliasing={{}: (0, {})}`, "whose shapes differ"},
		{"api version", `x = f32[3] parameter(0)
  ROOT r = f32[3] custom-call(x), custom_call_target="Sharding", api_version=API_VERSION_NEW`, "unknown api_version"},
		{"backend config", `x = f32[3] parameter(0)
  ROOT r = f32[3] custom-call(x), custom_call_target="Sharding", backend_config={k 4}`, "not name = value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "HloModule m\n"
			if strings.HasPrefix(tc.body, "add {") {
				text += tc.body + "\n}\n"
			} else {
				text += "ENTRY e {\n  " + tc.body + "\n}\n"
			}
			_, err := ParseModule(text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseBackendConfig(t *testing.T) {
	m, err := ParseBackendConfig(`{k = 4 : i64, largest = true, name = "a, b", f = 1.5 : f32, arr = array<i64: 1, 2>}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"k": int64(4), "largest": true, "name": "a, b", "f": 1.5, "arr": "array<i64: 1, 2>"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	j, err := ParseBackendConfig(`{"operation_queue_id":"0","k":3}`)
	if err != nil || j["k"] != 3.0 || j["operation_queue_id"] != "0" {
		t.Errorf("JSON: %v, %v", j, err)
	}
	// JSON written with spaces is JSON too (it read as a malformed MLIR dictionary).
	spaced, err := ParseBackendConfig("{ \"k\": 3,\n  \"largest\": false }")
	if err != nil || spaced["k"] != float64(3) || spaced["largest"] != false {
		t.Errorf("spaced JSON: %v, %v", spaced, err)
	}
	if _, err := ParseBackendConfig(`{"broken": }`); err == nil {
		t.Error("malformed JSON should be an error")
	}
}

// XLA's iota replica groups: device ids laid out in the dims, transposed, then
// read row-major as groups.
func TestIotaReplicaGroups(t *testing.T) {
	for text, want := range map[string]string{
		"[1,1]<=[1]":             "{{0}}",
		"[2,2]<=[4]":             "{{0,1},{2,3}}",
		"[2,2]<=[2,2]T(1,0)":     "{{0,2},{1,3}}",
		"[3,2]<=[2,3]T(1,0)":     "{{0,3},{1,4},{2,5}}",
		"[1,4]<=[2,2]T(1,0)":     "{{0,2,1,3}}",
		"[4,2]<=[2,2,2]T(2,1,0)": "{{0,4},{2,6},{1,5},{3,7}}",
	} {
		m, err := ParseModule(`HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups=` + text + `, to_apply=add
}`)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if got := replicaGroupsText(m.Entry.Root.Attrs.ReplicaGroups); got != want {
			t.Errorf("%s: groups %s, want %s", text, got, want)
		}
	}
}
