package cpuref

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
)

// Batch norm by its formula, with values worked by hand.
func TestBatchNormTraining(t *testing.T) {
	// feature 0 holds {0, 0, 3}: mean 1, variance (1+1+4)/3 = 2; with ε = 2 the
	// inverse deviation is 1/2, so y = (x-1)·½·2 + 0 = x - 1.
	out := evalText(t, `HloModule bn
ENTRY e {
  x = f32[3,1] parameter(0)
  s = f32[1] parameter(1)
  o = f32[1] parameter(2)
  ROOT t = (f32[3,1], f32[1], f32[1]) batch-norm-training(x, s, o), epsilon=2, feature_index=1
}`, mat(dims(3, 1), float32(0), 0, 3), vec(float32(2)), vec(float32(0)))
	assertLit(t, mat(dims(3, 1), float32(-1), -1, 2), out.Elems()[0])
	assertLit(t, vec(float32(1)), out.Elems()[1])
	assertLit(t, vec(float32(2)), out.Elems()[2])
}

func TestBatchNormInference(t *testing.T) {
	// feature_index 0: row 0 uses mean 1, variance 4 (deviation 2), scale 1, offset
	// 0; row 1 mean 3, variance 1, scale 2, offset 10.
	out := evalText(t, `HloModule bn
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0, feature_index=0
}`, mat(dims(2, 2), float32(1), 2, 3, 4), vec(float32(1), 2), vec(float32(0), 10), vec(float32(1), 3), vec(float32(4), 1))
	assertLit(t, mat(dims(2, 2), float32(0), 0.5, 10, 12), out)
}

func TestBatchNormGrad(t *testing.T) {
	// x = {0, 0, 3}, mean 1, variance 2, ε 2: rstd ½, x̂ = {-½, -½, 1}; scale 2,
	// dy = {1, 0, 0}: grad_offset = Σdy = 1, grad_scale = Σdy·x̂ = -½,
	// grad_x = 2·½/3 · (3dy − 1 + ½x̂) = {7/12, -5/12, -1/6}.
	out := evalText(t, `HloModule bn
ENTRY e {
  x = f32[3,1] parameter(0)
  s = f32[1] parameter(1)
  m = f32[1] parameter(2)
  v = f32[1] parameter(3)
  dy = f32[3,1] parameter(4)
  ROOT g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=2, feature_index=1
}`, mat(dims(3, 1), float32(0), 0, 3), vec(float32(2)), vec(float32(1)), vec(float32(2)), mat(dims(3, 1), float32(1), 0, 0))
	assertLit(t, mat(dims(3, 1), float32(7.0/12), float32(-5.0/12), float32(-1.0/6)), out.Elems()[0])
	assertLit(t, vec(float32(-0.5)), out.Elems()[1])
	assertLit(t, vec(float32(1)), out.Elems()[2])
}

// The collectives on one replica, by definition.
func TestCollectivesOnOneReplica(t *testing.T) {
	x := vec(float32(1), -2, 3)
	out := evalText(t, `HloModule c
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  ar = f32[3] all-reduce(x), replica_groups={{0}}, to_apply=add
  ag = f32[3] all-gather(x), replica_groups=[1,1]<=[1], dimensions={0}
  rs = f32[3] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add
  a2a = f32[3] all-to-all(x), replica_groups={{0}}, dimensions={0}
  keep = f32[3] collective-permute(x), source_target_pairs={{0,0}}
  none = f32[3] collective-permute(x), source_target_pairs={}
  cps = (f32[3], f32[3], u32[], u32[]) collective-permute-start(x), source_target_pairs={}
  cpd = f32[3] collective-permute-done(cps)
  ags = (f32[3], f32[3]) all-gather-start(x), replica_groups={}, dimensions={0}
  agd = f32[3] all-gather-done(ags)
  ars = f32[3] all-reduce-start(x), replica_groups={}, to_apply=add
  ard = f32[3] all-reduce-done(ars)
  rid = u32[] replica-id()
  pid = u32[] partition-id()
  ROOT t = (f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], f32[3], u32[], u32[]) tuple(ar, ag, rs, a2a, keep, none, cpd, agd, ard, rid, pid)
}`, x)
	zeros := vec(float32(0), 0, 0)
	for i, want := range []*hlo.Literal{x, x, x, x, x, zeros, zeros, x, x, scalar(uint32(0)), scalar(uint32(0))} {
		assertLit(t, want, out.Elems()[i], "output %d", i)
	}
}

func TestCollectivesRefuseReplicas(t *testing.T) {
	m := parse(t, `HloModule c
ENTRY e {
  x = f32[3] parameter(0)
  ROOT g = f32[6] all-gather(x), replica_groups={{0,1}}, dimensions={0}
}`)
	_, err := Eval(m, vec(float32(1), 2, 3))
	require.Error(t, err)
	assert.True(t, errors.Is(err, hlo.ErrUnsupported), "%v", err)
	assert.Contains(t, err.Error(), "g")
}

// TopK by definition: the k greatest per row, descending, ties in index order.
func TestCustomCallTopK(t *testing.T) {
	x := mat(dims(2, 5), float32(3), 1, 4, 1, 5, -1, -1, 0, 7, -1)
	out := evalText(t, `HloModule topk
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT tk = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", to_apply=cmp
}`, x)
	assertLit(t, mat(dims(2, 3), float32(5), 4, 3, 7, 0, -1), out.Elems()[0])
	assertLit(t, mat(dims(2, 3), int32(4), 2, 0, 3, 2, 0), out.Elems()[1])

	// The typed-FFI form: k and largest in an MLIR dictionary, no comparator.
	out = evalText(t, `HloModule topk
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT tk = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK", api_version=API_VERSION_TYPED_FFI, backend_config={k = 2 : i64, largest = false}
}`, x)
	assertLit(t, mat(dims(2, 2), float32(1), 1, -1, -1), out.Elems()[0])
	assertLit(t, mat(dims(2, 2), int32(1), 3, 0, 1), out.Elems()[1])
}

func TestCustomCallIdentityTargets(t *testing.T) {
	x := vec(int32(4), -5)
	for _, target := range []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
		"MoveToHost", "MoveToDevice", "annotate_device_placement"} {
		out := evalText(t, `HloModule id
ENTRY e {
  x = s32[2] parameter(0)
  ROOT y = s32[2] custom-call(x), custom_call_target="`+target+`", custom_call_has_side_effect=true
}`, x)
		assertLit(t, x, out, target)
	}
}
