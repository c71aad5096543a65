package cases

import "fmt"

// Collectives are every collective, its -start/-done form, its group modes and
// its tuple form, on 2 devices (2×1 and 1×2) and on 4 (4×1 and 2×2).
var Collectives = []Case{
	{"all-reduce/add", 2, 1, `ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}`, true},
	{"all-reduce/max/tuple", 2, 1, `ENTRY e {
  x = f32[5] parameter(0)
  y = f32[2,3] parameter(1)
  ROOT r = (f32[5], f32[2,3]) all-reduce(x, y), replica_groups={}, to_apply=max
}`, true},
	{"all-reduce/and", 2, 1, `ENTRY e {
  x = pred[16] parameter(0)
  ROOT r = pred[16] all-reduce(x), replica_groups={{1,0}}, to_apply=and
}`, true},
	// Each device is a group of its own: still one round per execution.
	{"all-reduce/groups-of-one", 2, 1, `ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={{1},{0}}, to_apply=add
}`, true},
	{"all-reduce/between-kernels", 2, 1, `ENTRY e {
  x = f32[64] parameter(0)
  y = f32[64] exponential(x)
  r = f32[64] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[64] tanh(r)
}`, false},
	{"all-reduce/4/pairs/tuple", 4, 1, `ENTRY e {
  x = f32[8] parameter(0)
  y = f32[3,2] parameter(1)
  ROOT r = (f32[8], f32[3,2]) all-reduce(x, y), replica_groups={{0,2},{1,3}}, to_apply=add
}`, true},
	{"all-reduce-start-done", 2, 1, `ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] all-reduce-start(x), replica_groups={{1,0}}, to_apply=add
  ROOT d = f32[8] all-reduce-done(s)
}`, true},
	{"all-reduce-start-done/4", 4, 1, `ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] all-reduce-start(x), replica_groups={{3,2,1,0}}, to_apply=add
  ROOT d = f32[8] all-reduce-done(s)
}`, true},
	{"all-gather", 2, 1, `ENTRY e {
  x = f32[3,2] parameter(0)
  ROOT g = f32[3,4] all-gather(x), replica_groups={{0,1}}, dimensions={1}
}`, true},
	{"all-gather-start-done", 2, 1, `ENTRY e {
  x = f32[2,3] parameter(0)
  s = (f32[2,3], f32[4,3]) all-gather-start(x), replica_groups={{1,0}}, dimensions={0}
  ROOT d = f32[4,3] all-gather-done(s)
}`, true},
	{"all-gather-start-done/4", 4, 1, `ENTRY e {
  x = f32[2,3] parameter(0)
  s = (f32[2,3], f32[4,3]) all-gather-start(x), replica_groups={{1,0},{3,2}}, dimensions={0}
  ROOT d = f32[4,3] all-gather-done(s)
}`, true},
	{"reduce-scatter", 2, 1, `ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT r = f32[2,6] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add
}`, true},
	{"reduce-scatter/tuple", 2, 1, `ENTRY e {
  x = f32[2,6] parameter(0)
  y = f32[1,4] parameter(1)
  ROOT r = (f32[2,3], f32[1,2]) reduce-scatter(x, y), replica_groups={{1,0}}, dimensions={1}, to_apply=add
}`, true},
	{"reduce-scatter/4", 4, 1, `ENTRY e {
  x = f32[8,2] parameter(0)
  ROOT r = f32[2,2] reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add
}`, true},
	{"all-to-all", 2, 1, `ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT a = f32[2,4] all-to-all(x), replica_groups={{0,1}}, dimensions={1}
}`, true},
	{"all-to-all/tuple", 2, 1, `ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT t = (f32[3], f32[3]) all-to-all(a, b), replica_groups={{1,0}}
}`, true},
	{"all-to-all/4/tuple", 4, 1, `ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  c = f32[2] parameter(2)
  d = f32[2] parameter(3)
  ROOT t = (f32[2], f32[2], f32[2], f32[2]) all-to-all(a, b, c, d), replica_groups={}
}`, true},
	{"collective-permute/swap", 2, 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), source_target_pairs={{0,1},{1,0}}
}`, true},
	// Device 0 is no pair's target: zeros.
	{"collective-permute/one-way", 2, 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), source_target_pairs={{0,1}}
}`, true},
	{"collective-permute/4", 4, 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT p = f32[5] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3}}
}`, true},
	{"collective-permute-start-done", 2, 1, `ENTRY e {
  x = f32[5] parameter(0)
  s = (f32[5], f32[5]) collective-permute-start(x), source_target_pairs={{1,0}}
  ROOT d = f32[5] collective-permute-done(s)
}`, true},
	{"collective-broadcast", 2, 1, `ENTRY e {
  x = f32[3] parameter(0)
  ROOT b = f32[3] collective-broadcast(x), replica_groups={{1,0}}
}`, true},
	{"collective-broadcast/4", 4, 1, `ENTRY e {
  x = f32[5] parameter(0)
  ROOT b = f32[5] collective-broadcast(x), replica_groups={{1,0},{2,3}}
}`, true},
	{"ids/2x1", 2, 1, IDs, true},
	{"ids/1x2", 1, 2, IDs, true},
	{"ids/2x2", 2, 2, IDs, true},
	{"flattened-id/2x2", 2, 2, `ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=add
}`, true},
	{"cross-partition/1x2", 1, 2, crossPartition, true},
	{"cross-partition/2x2", 2, 2, crossPartition, true},
	{"in-a-loop", 2, 1, InLoop(4), true},
	{"in-a-loop-condition", 2, 1, LoopCondition, true},
}

// IDs returns each device's (replica-id, partition-id).
const IDs = `ENTRY e {
  x = f32[2] parameter(0)
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
}`

// crossPartition is an all-to-all with a channel_id: the partitions of each
// replica exchange.
const crossPartition = `ENTRY e {
  x = f32[4] parameter(0)
  ROOT a = f32[4] all-to-all(x), channel_id=1, replica_groups={}, dimensions={0}
}`

// InLoop is a while loop of three iterations whose body all-reduces an f32[n]
// over replicas {0,1}: the collective meets once per iteration, so each device
// ends with the sum of both inputs doubled twice (InLoopWant).
func InLoop(n int) string {
	return fmt.Sprintf(`cond {
  s = (s32[], f32[%[1]d]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[%[1]d]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[%[1]d] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[%[1]d] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT t = (s32[], f32[%[1]d]) tuple(j, y)
}
ENTRY e {
  x = f32[%[1]d] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[%[1]d]) tuple(zero, x)
  w = (s32[], f32[%[1]d]) while(s), condition=cond, body=body
  ROOT y = f32[%[1]d] get-tuple-element(w), index=1
}`, n)
}

// InLoopWant is InLoop's result on both devices for inputs x0 and x1: after the
// first all-reduce both hold x0 + x1, and each further one doubles it.
func InLoopWant(x0, x1 []float32) []float32 {
	out := make([]float32, len(x0))
	for i := range out {
		out[i] = 4 * (x0[i] + x1[i])
	}
	return out
}

// LoopCondition is a while loop whose condition all-reduces: every device sees
// the same sum, so they agree on the trip count. Each device adds 1 to its
// scalar while the sum of both stays below 10 (LoopConditionWant).
const LoopCondition = `cond {
  x = f32[] parameter(0)
  s = f32[] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ten = f32[] constant(10)
  ROOT lt = pred[] compare(s, ten), direction=LT
}
body {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  ROOT y = f32[] add(x, one)
}
ENTRY e {
  x = f32[] parameter(0)
  ROOT w = f32[] while(x), condition=cond, body=body
}`

// LoopConditionWant is LoopCondition's result on the two devices for inputs a
// and b: each step adds 2 to the sum, so the loop runs k times, the least k
// with a + b + 2k ≥ 10.
func LoopConditionWant(a, b float32) (float32, float32) {
	for a+b < 10 {
		a, b = a+1, b+1
	}
	return a, b
}

// MismatchedLoop has a device-dependent trip count (replica-id + 1): its
// loop's all-reduce runs once on replica 0 and twice on replica 1, whose second
// execution can never meet. A runtime must fail, on every device, with an
// error naming the all-reduce %y (execution 2), instead of waiting.
const MismatchedLoop = `cond {
  s = (u32[], f32[2]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  r = u32[] replica-id()
  one = u32[] constant(1)
  n = u32[] add(r, one)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (u32[], f32[2]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = u32[] constant(1)
  j = u32[] add(i, one)
  y = f32[2] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT t = (u32[], f32[2]) tuple(j, y)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = u32[] constant(0)
  s = (u32[], f32[2]) tuple(zero, x)
  w = (u32[], f32[2]) while(s), condition=cond, body=body
  ROOT y = f32[2] get-tuple-element(w), index=1
}`
