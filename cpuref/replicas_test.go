package cpuref

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
	"github.com/vkxla/vkxla/internal/collective/cases"
)

// The collectives on several devices, in the style of StableHLO's interpreter
// tests: one module, each device's inputs, each device's expected result worked out
// by hand from the op's definition.

// replicaCase is one module run on replicas × partitions devices.
type replicaCase struct {
	name                 string
	replicas, partitions int
	module               string           // after cases.Reducers
	inputs               [][]*hlo.Literal // by device
	want                 []*hlo.Literal   // by device
}

func (c replicaCase) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got, err := EvalReplicas(ctx, parse(t, cases.Reducers+c.module), c.replicas, c.partitions, c.inputs)
	require.NoError(t, err)
	require.Len(t, got, len(c.want))
	for d, w := range c.want {
		assertLit(t, w, got[d], "device %d", d)
	}
}

func runCases(t *testing.T, cases []replicaCase) {
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

// each gives every device one input.
func each(xs ...*hlo.Literal) [][]*hlo.Literal {
	out := make([][]*hlo.Literal, len(xs))
	for i, x := range xs {
		out[i] = []*hlo.Literal{x}
	}
	return out
}

func TestAllReduceReplicas(t *testing.T) {
	ar := func(groups string) string {
		return "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] all-reduce(x), replica_groups=" + groups + ", to_apply=add\n}"
	}
	x4 := each(vec(float32(1), 2), vec(float32(3), 4), vec(float32(5), 6), vec(float32(7), 8))
	runCases(t, []replicaCase{
		{name: "2/all", replicas: 2, partitions: 1, module: ar("{}"),
			inputs: each(vec(float32(1), 10), vec(float32(2), 20)),
			want:   []*hlo.Literal{vec(float32(3), 30), vec(float32(3), 30)}},
		{name: "4/all", replicas: 4, partitions: 1, module: ar("{{0,1,2,3}}"), inputs: x4,
			want: []*hlo.Literal{vec(float32(16), 20), vec(float32(16), 20), vec(float32(16), 20), vec(float32(16), 20)}},
		{name: "4/pairs", replicas: 4, partitions: 1, module: ar("{{0,1},{2,3}}"), inputs: x4,
			want: []*hlo.Literal{vec(float32(4), 6), vec(float32(4), 6), vec(float32(12), 14), vec(float32(12), 14)}},
		{name: "4/strided", replicas: 4, partitions: 1, module: ar("{{0,2},{1,3}}"), inputs: x4,
			want: []*hlo.Literal{vec(float32(6), 8), vec(float32(10), 12), vec(float32(6), 8), vec(float32(10), 12)}},
		{name: "4/iota", replicas: 4, partitions: 1, module: ar("[2,2]<=[2,2]T(1,0)"), inputs: x4, // {{0,2},{1,3}}
			want: []*hlo.Literal{vec(float32(6), 8), vec(float32(10), 12), vec(float32(6), 8), vec(float32(10), 12)}},
		{name: "2/async", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[2] parameter(0)\n  s = f32[2] all-reduce-start(x), replica_groups={{0,1}}, to_apply=add\n  ROOT d = f32[2] all-reduce-done(s)\n}",
			inputs: each(vec(float32(1), 10), vec(float32(2), 20)),
			want:   []*hlo.Literal{vec(float32(3), 30), vec(float32(3), 30)}},
	})
}

// All-reduce and collective-broadcast take groups of unequal sizes (their
// results' shapes do not depend on them); all-gather does not.
func TestUnequalGroups(t *testing.T) {
	x := each(vec(float32(1)), vec(float32(10)), vec(float32(100)))
	runCases(t, []replicaCase{
		{name: "all-reduce", replicas: 3, partitions: 1, inputs: x,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT r = f32[1] all-reduce(x), replica_groups={{0},{2,1}}, to_apply=add\n}",
			want:   []*hlo.Literal{vec(float32(1)), vec(float32(110)), vec(float32(110))}},
		{name: "collective-broadcast", replicas: 3, partitions: 1, inputs: x,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT b = f32[1] collective-broadcast(x), replica_groups={{0},{2,1}}\n}",
			want:   []*hlo.Literal{vec(float32(1)), vec(float32(100)), vec(float32(100))}},
	})
	_, err := hlo.ParseModule("HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  ROOT g = f32[2] all-gather(x), replica_groups={{0},{2,1}}, dimensions={0}\n}")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unequal sizes")
}

// The reduction folds the members' values in group order, so a non-commutative
// to_apply gives every member ((x3 − x1) − x2) − x0 for the group {3,1,2,0}.
func TestAllReduceGroupOrder(t *testing.T) {
	module := `sub {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] subtract(a, b)
}
ENTRY e {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT r = (s32[], s32[]) all-reduce(x, y), replica_groups={{3,1,2,0}}, to_apply=sub
}`
	in := [][]*hlo.Literal{}
	for _, v := range []int32{1, 10, 100, 1000} {
		in = append(in, []*hlo.Literal{scalar(v), scalar(2 * v)})
	}
	want := hlo.TupleLiteral(scalar(int32(1000-10-100-1)), scalar(int32(2000-20-200-2)))
	runCases(t, []replicaCase{{name: "tuple", replicas: 4, partitions: 1, module: module, inputs: in,
		want: []*hlo.Literal{want, want, want, want}}})
}

func TestAllGatherReplicas(t *testing.T) {
	cols := func(r float32) *hlo.Literal { return mat(dims(2, 1), r, 10+r) }
	x4 := each(cols(0), cols(1), cols(2), cols(3))
	ag := func(groups string) string {
		return "ENTRY e {\n  x = f32[2,1] parameter(0)\n  ROOT g = f32[2,2] all-gather(x), replica_groups=" + groups + ", dimensions={1}\n}"
	}
	runCases(t, []replicaCase{
		{name: "2/dim0", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT g = f32[4] all-gather(x), replica_groups={{0,1}}, dimensions={0}\n}",
			inputs: each(vec(float32(0), 1), vec(float32(2), 3)),
			want:   []*hlo.Literal{vec(float32(0), 1, 2, 3), vec(float32(0), 1, 2, 3)}},
		{name: "4/pairs/dim1", replicas: 4, partitions: 1, module: ag("{{0,1},{2,3}}"), inputs: x4,
			want: []*hlo.Literal{mat(dims(2, 2), float32(0), 1, 10, 11), mat(dims(2, 2), float32(0), 1, 10, 11),
				mat(dims(2, 2), float32(2), 3, 12, 13), mat(dims(2, 2), float32(2), 3, 12, 13)}},
		{name: "4/reversed", replicas: 4, partitions: 1, module: ag("{{1,0},{3,2}}"), inputs: x4,
			want: []*hlo.Literal{mat(dims(2, 2), float32(1), 0, 11, 10), mat(dims(2, 2), float32(1), 0, 11, 10),
				mat(dims(2, 2), float32(3), 2, 13, 12), mat(dims(2, 2), float32(3), 2, 13, 12)}},
		{name: "2/async", replicas: 2, partitions: 1,
			module: `ENTRY e {
  x = f32[1] parameter(0)
  s = (f32[1], f32[2]) all-gather-start(x), replica_groups={{0,1}}, dimensions={0}
  ROOT d = f32[2] all-gather-done(s)
}`,
			inputs: each(vec(float32(5)), vec(float32(6))),
			want:   []*hlo.Literal{vec(float32(5), 6), vec(float32(5), 6)}},
	})
}

func TestReduceScatterReplicas(t *testing.T) {
	scaled := func(k float32) *hlo.Literal { return vec(k, 2*k, 3*k, 4*k) }
	x4 := each(scaled(1), scaled(2), scaled(3), scaled(4))
	runCases(t, []replicaCase{
		{name: "2", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[2] reduce-scatter(x), replica_groups={{0,1}}, dimensions={0}, to_apply=add\n}",
			inputs: each(vec(float32(1), 2, 3, 4), vec(float32(10), 20, 30, 40)),
			want:   []*hlo.Literal{vec(float32(11), 22), vec(float32(33), 44)}},
		{name: "4/all", replicas: 4, partitions: 1,
			module: "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[1] reduce-scatter(x), replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=add\n}",
			inputs: x4, want: []*hlo.Literal{vec(float32(10)), vec(float32(20)), vec(float32(30)), vec(float32(40))}},
		// {0,2} sums 1+3 = 4 times (1,2,3,4); {1,3} sums 2+4 = 6 times.
		{name: "4/strided", replicas: 4, partitions: 1,
			module: "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[2] reduce-scatter(x), replica_groups={{0,2},{1,3}}, dimensions={0}, to_apply=add\n}",
			inputs: x4, want: []*hlo.Literal{vec(float32(4), 8), vec(float32(6), 12), vec(float32(12), 16), vec(float32(18), 24)}},
	})
}

func TestAllToAllReplicas(t *testing.T) {
	row := func(r float32) *hlo.Literal { return vec(10*r, 10*r+1, 10*r+2, 10*r+3) }
	runCases(t, []replicaCase{
		{name: "2/dim0", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[4] all-to-all(x), replica_groups={{0,1}}, dimensions={0}\n}",
			inputs: each(vec(float32(0), 1, 2, 3), vec(float32(10), 11, 12, 13)),
			want:   []*hlo.Literal{vec(float32(0), 1, 10, 11), vec(float32(2), 3, 12, 13)}},
		{name: "2/dim1", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[2,2] parameter(0)\n  ROOT a = f32[2,2] all-to-all(x), replica_groups={{0,1}}, dimensions={1}\n}",
			inputs: each(mat(dims(2, 2), float32(1), 2, 3, 4), mat(dims(2, 2), float32(5), 6, 7, 8)),
			want:   []*hlo.Literal{mat(dims(2, 2), float32(1), 5, 3, 7), mat(dims(2, 2), float32(2), 6, 4, 8)}},
		{name: "4/all", replicas: 4, partitions: 1,
			module: "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT a = f32[4] all-to-all(x), replica_groups={}, dimensions={0}\n}",
			inputs: each(row(0), row(1), row(2), row(3)),
			want: []*hlo.Literal{vec(float32(0), 10, 20, 30), vec(float32(1), 11, 21, 31),
				vec(float32(2), 12, 22, 32), vec(float32(3), 13, 23, 33)}},
		// The tuple form: member k's result j is member j's operand k.
		{name: "2/tuple", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n  ROOT t = (f32[1], f32[1]) all-to-all(a, b), replica_groups={{0,1}}\n}",
			inputs: [][]*hlo.Literal{{vec(float32(1)), vec(float32(2))}, {vec(float32(3)), vec(float32(4))}},
			want: []*hlo.Literal{hlo.TupleLiteral(vec(float32(1)), vec(float32(3))),
				hlo.TupleLiteral(vec(float32(2)), vec(float32(4)))}},
	})
}

func TestCollectivePermuteReplicas(t *testing.T) {
	x4 := each(vec(float32(0)), vec(float32(1)), vec(float32(2)), vec(float32(3)))
	runCases(t, []replicaCase{
		{name: "4/ring", replicas: 4, partitions: 1,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT p = f32[1] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}\n}",
			inputs: x4, want: []*hlo.Literal{vec(float32(3)), vec(float32(0)), vec(float32(1)), vec(float32(2))}},
		{name: "2/one-pair", replicas: 2, partitions: 1,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT p = f32[1] collective-permute(x), source_target_pairs={{0,1}}\n}",
			inputs: each(vec(float32(7)), vec(float32(8))), want: []*hlo.Literal{vec(float32(0)), vec(float32(7))}},
		{name: "4/async-swap", replicas: 4, partitions: 1,
			module: `ENTRY e {
  x = f32[1] parameter(0)
  s = (f32[1], f32[1]) collective-permute-start(x), source_target_pairs={{0,1},{1,0},{2,3},{3,2}}
  ROOT d = f32[1] collective-permute-done(s)
}`,
			inputs: x4, want: []*hlo.Literal{vec(float32(1)), vec(float32(0)), vec(float32(3)), vec(float32(2))}},
		// XLA's older -start form carries two u32[] contexts, zeros here.
		{name: "2/async-contexts", replicas: 2, partitions: 1,
			module: `ENTRY e {
  x = f32[1] parameter(0)
  ROOT s = (f32[1], f32[1], u32[], u32[]) collective-permute-start(x), source_target_pairs={{1,0}}
}`,
			inputs: each(vec(float32(7)), vec(float32(8))),
			want: []*hlo.Literal{hlo.TupleLiteral(vec(float32(7)), vec(float32(8)), scalar(uint32(0)), scalar(uint32(0))),
				hlo.TupleLiteral(vec(float32(8)), vec(float32(0)), scalar(uint32(0)), scalar(uint32(0)))}},
	})
}

func TestCollectiveBroadcastReplicas(t *testing.T) {
	cb := func(attrs string) string {
		return "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT b = f32[1] collective-broadcast(x), " + attrs + "\n}"
	}
	x4 := each(vec(float32(0)), vec(float32(1)), vec(float32(2)), vec(float32(3)))
	runCases(t, []replicaCase{
		{name: "2", replicas: 2, partitions: 1, module: cb("replica_groups={{0,1}}"),
			inputs: each(vec(float32(1)), vec(float32(2))), want: []*hlo.Literal{vec(float32(1)), vec(float32(1))}},
		{name: "4/first-member", replicas: 4, partitions: 1, module: cb("replica_groups={{2,0},{3,1}}"), inputs: x4,
			want: []*hlo.Literal{vec(float32(2)), vec(float32(3)), vec(float32(2)), vec(float32(3))}},
		// With a channel_id the partitions of each replica meet: partition 0 sends.
		{name: "2x2/cross-partition", replicas: 2, partitions: 2, module: cb("channel_id=1, replica_groups={}"), inputs: x4,
			want: []*hlo.Literal{vec(float32(0)), vec(float32(0)), vec(float32(2)), vec(float32(2))}},
	})
}

// On 2 replicas × 2 partitions, devices 0…3 are (r0,p0), (r0,p1), (r1,p0),
// (r1,p1); device d holds 10^d, so each sum shows which devices met.
func TestCollectiveGroupModes(t *testing.T) {
	x := each(vec(float32(1)), vec(float32(10)), vec(float32(100)), vec(float32(1000)))
	ar := func(attrs string) string {
		return "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT r = f32[1] all-reduce(x), " + attrs + ", to_apply=add\n}"
	}
	v := func(f float32) *hlo.Literal { return vec(f) }
	runCases(t, []replicaCase{
		{name: "cross-replica", replicas: 2, partitions: 2, module: ar("replica_groups={}"), inputs: x,
			want: []*hlo.Literal{v(101), v(1010), v(101), v(1010)}},
		{name: "cross-replica-and-partition/each", replicas: 2, partitions: 2,
			module: ar("channel_id=1, replica_groups={{0},{1}}"), inputs: x,
			want: []*hlo.Literal{v(11), v(11), v(1100), v(1100)}},
		{name: "cross-replica-and-partition/all", replicas: 2, partitions: 2,
			module: ar("channel_id=1, replica_groups={{0,1}}"), inputs: x,
			want: []*hlo.Literal{v(1111), v(1111), v(1111), v(1111)}},
		{name: "flattened-id", replicas: 2, partitions: 2,
			module: ar("channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true"), inputs: x,
			want: []*hlo.Literal{v(1001), v(110), v(110), v(1001)}},
		// all-to-all with a channel_id is cross-partition: the partitions of each
		// replica exchange.
		{name: "cross-partition/all-to-all", replicas: 2, partitions: 2,
			module: "ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] all-to-all(x), channel_id=1, replica_groups={}, dimensions={0}\n}",
			inputs: each(vec(float32(0), 1), vec(float32(10), 11), vec(float32(20), 21), vec(float32(30), 31)),
			want:   []*hlo.Literal{vec(float32(0), 10), vec(float32(1), 11), vec(float32(20), 30), vec(float32(21), 31)}},
		{name: "cross-partition/permute", replicas: 2, partitions: 2,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT p = f32[1] collective-permute(x), channel_id=1, source_target_pairs={{0,1}}\n}",
			inputs: x, want: []*hlo.Literal{v(0), v(1), v(0), v(100)}},
		{name: "cross-replica/permute", replicas: 2, partitions: 2,
			module: "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT p = f32[1] collective-permute(x), source_target_pairs={{0,1}}\n}",
			inputs: x, want: []*hlo.Literal{v(0), v(0), v(1), v(10)}},
		{name: "ids", replicas: 2, partitions: 2, module: cases.IDs,
			inputs: each(vec(float32(0), 0), vec(float32(0), 0), vec(float32(0), 0), vec(float32(0), 0)), want: []*hlo.Literal{ids(0, 0), ids(0, 1), ids(1, 0), ids(1, 1)}},
	})
}

func ids(r, p uint32) *hlo.Literal { return hlo.TupleLiteral(scalar(r), scalar(p)) }

// A collective inside a while loop meets once per iteration: three all-reduces
// over 2 replicas of (1, 2) and (1, -1) make (2, 1), then (4, 2), then (8, 4).
func TestCollectiveInLoop(t *testing.T) {
	want := vec(cases.InLoopWant([]float32{1, 2}, []float32{1, -1})...)
	runCases(t, []replicaCase{{name: "3-iterations", replicas: 2, partitions: 1, module: cases.InLoop(2),
		inputs: each(vec(float32(1), 2), vec(float32(1), -1)), want: []*hlo.Literal{want, want}}})
}

// A loop whose condition all-reduces: every device sees the same sum, so they
// agree on the trip count. 1 and 2 grow by one until their sum reaches 10: 5, 6.
func TestCollectiveInLoopCondition(t *testing.T) {
	a, b := cases.LoopConditionWant(1, 2)
	runCases(t, []replicaCase{{name: "sum-below-10", replicas: 2, partitions: 1, module: cases.LoopCondition,
		inputs: each(scalar(float32(1)), scalar(float32(2))), want: []*hlo.Literal{scalar(a), scalar(b)}}})
}

// evalReplicasErr runs a module that must fail, within a deadline that a hang
// would reach.
func evalReplicasErr(t *testing.T, module string, replicas, partitions int, inputs [][]*hlo.Literal) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := EvalReplicas(ctx, parse(t, cases.Reducers+module), replicas, partitions, inputs)
	require.Error(t, err)
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	t.Log(err)
	return err
}

// A data-dependent trip count (replica-id + 1) runs the loop's all-reduce once on
// replica 0 and twice on replica 1: replica 1's second execution can never meet.
func TestCollectiveMismatchedLoop(t *testing.T) {
	err := evalReplicasErr(t, cases.MismatchedLoop, 2, 1, each(vec(float32(1), 2), vec(float32(1), 2)))
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "all-reduce %y (execution 2)")
	assert.Contains(t, err.Error(), "device 0 (replica 0, partition 0) finished without reaching it")
}

// Replica 0 runs all-reduce a, replica 1 all-reduce b (a conditional on
// replica-id): each waits at a collective the other never reaches.
func TestCollectiveMismatchedOrder(t *testing.T) {
	module := `ab {
  x = f32[1] parameter(0)
  ROOT a = f32[1] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
ba {
  y = f32[1] parameter(0)
  ROOT b = f32[1] all-reduce(y), replica_groups={{0,1}}, to_apply=add
}
ENTRY e {
  x = f32[1] parameter(0)
  r = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(r, zero), direction=EQ
  ROOT c = f32[1] conditional(first, x, x), true_computation=ab, false_computation=ba
}`
	err := evalReplicasErr(t, module, 2, 1, each(vec(float32(1)), vec(float32(1))))
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "waits at")
}

func TestCollectiveInvalidGroups(t *testing.T) {
	ar := func(attrs string) string {
		return "ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT bad = f32[1] all-reduce(x), " + attrs + ", to_apply=add\n}"
	}
	x := each(vec(float32(1)), vec(float32(2)))
	for _, c := range []struct{ module, want string }{
		{ar("replica_groups={{0,0}}"), "id 0 appears twice"},
		{ar("replica_groups={{0,2}}"), "id 2 is not below 2"},
		{ar("replica_groups={{1}}"), "id 0 is in no group"},
		{ar("replica_groups={}, use_global_device_ids=true"), "needs a channel_id"},
		{"ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT bad = f32[1] collective-permute(x), source_target_pairs={{0,1},{1,1}}\n}", "target 1 appears twice"},
		{"ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT bad = f32[1] collective-permute(x), source_target_pairs={{0,5}}\n}", "not below 2"},
		{"ENTRY e {\n  x = f32[1] parameter(0)\n  ROOT bad = f32[1] all-gather(x), replica_groups={}, dimensions={0}\n}", "name the groups"},
	} {
		err := evalReplicasErr(t, c.module, 2, 1, x)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "%bad")
		if c.want != "name the groups" {
			assert.ErrorIs(t, err, ErrInvalidInput, c.want)
		}
	}
}

func TestEvalReplicasInvalidInput(t *testing.T) {
	m := parse(t, "HloModule m\nENTRY e {\n  ROOT x = f32[1] parameter(0)\n}")
	ctx := context.Background()
	_, err := EvalReplicas(ctx, m, 2, 1, each(vec(float32(1))))
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = EvalReplicas(ctx, m, 0, 1, nil)
	assert.ErrorIs(t, err, ErrInvalidInput)
	_, err = EvalReplicas(ctx, m, 2, 1, [][]*hlo.Literal{{vec(float32(1))}, {vec(float32(1), 2)}})
	assert.ErrorIs(t, err, ErrInvalidInput)
	assert.Contains(t, err.Error(), "device 1")
	//nolint:staticcheck // a nil context is the invalid input under test
	_, err = EvalReplicas(nil, m, 1, 1, each(vec(float32(1))))
	assert.ErrorIs(t, err, ErrInvalidInput)
}

// One device's EvalReplicas is Eval.
func TestEvalReplicasOneDevice(t *testing.T) {
	m := parse(t, cases.Reducers+"ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add\n}")
	got, err := EvalReplicas(context.Background(), m, 1, 1, each(vec(float32(1), 2)))
	require.NoError(t, err)
	assertLit(t, vec(float32(1), 2), got[0])
}

// A device's own failure is reported before the mismatch errors it causes in the
// devices that waited for it.
func TestFirstErrorPrefersOwnFailure(t *testing.T) {
	topo := collective.Topology{Replicas: 3, Partitions: 1}
	own := errors.New("kernel failed")
	waited := fmt.Errorf("waited: %w", ErrMismatch)
	err := firstError(topo, []error{waited, nil, own})
	assert.ErrorIs(t, err, own)
	assert.Contains(t, err.Error(), "device 2 (replica 2, partition 0)")
	err = firstError(topo, []error{nil, waited, waited})
	assert.ErrorIs(t, err, ErrMismatch)
	assert.Contains(t, err.Error(), "device 1")
	assert.NoError(t, firstError(topo, []error{nil, nil, nil}))
}

// Identities of the collectives on random group layouts (2 to 6 replicas, groups
// of every size that divides them, members in random order): all-to-all twice is
// the identity, all-gather of a reduce-scatter is the all-reduce, and a permute
// followed by its inverse gives every device its own value back.
func TestCollectiveIdentities(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 3, 4, 6} {
		for g := 1; g <= n; g++ {
			if n%g != 0 {
				continue
			}
			groups, pairs, inverse := randomLayout(rng, n, g)
			text := fmt.Sprintf(`HloModule ids
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[%[1]d,2] parameter(0)
  a = s32[%[1]d,2] all-to-all(x), replica_groups=%[2]s, dimensions={0}
  aa = s32[%[1]d,2] all-to-all(a), replica_groups=%[2]s, dimensions={0}
  rs = s32[%[3]d,2] reduce-scatter(x), replica_groups=%[2]s, dimensions={0}, to_apply=add
  ag = s32[%[1]d,2] all-gather(rs), replica_groups=%[2]s, dimensions={0}
  ar = s32[%[1]d,2] all-reduce(x), replica_groups=%[2]s, to_apply=add
  p = s32[%[1]d,2] collective-permute(x), source_target_pairs=%[4]s
  pp = s32[%[1]d,2] collective-permute(p), source_target_pairs=%[5]s
  ROOT t = (s32[%[1]d,2], s32[%[1]d,2], s32[%[1]d,2], s32[%[1]d,2]) tuple(aa, ag, ar, pp)
}`, 2*g, groups, 2, pairs, inverse)
			inputs := make([][]*hlo.Literal, n)
			for d := range inputs {
				vals := make([]int32, 4*g)
				for i := range vals {
					vals[i] = rng.Int32N(1000)
				}
				inputs[d] = []*hlo.Literal{mat(dims(int64(2*g), 2), vals...)}
			}
			out, err := EvalReplicas(context.Background(), parse(t, text), n, 1, inputs)
			require.NoError(t, err, "%d replicas, groups %s", n, groups)
			for d, o := range out {
				e := o.Elems()
				assertLit(t, inputs[d][0], e[0], "all-to-all twice, device %d, groups %s", d, groups)
				assertLit(t, e[2], e[1], "all-gather(reduce-scatter), device %d, groups %s", d, groups)
				assertLit(t, inputs[d][0], e[3], "permute and back, device %d, pairs %s", d, pairs)
			}
		}
	}
}

// randomLayout splits replicas 0…n-1, shuffled, into groups of g, and draws a
// permutation of them as source_target_pairs with its inverse.
func randomLayout(rng *rand.Rand, n, g int) (groups, pairs, inverse string) {
	perm := rng.Perm(n)
	var gs []string
	for i := 0; i < n; i += g {
		gs = append(gs, strings.Trim(strings.ReplaceAll(fmt.Sprint(perm[i:i+g]), " ", ","), "[]"))
	}
	sigma := rng.Perm(n)
	var ps, inv []string
	for i, s := range sigma {
		ps = append(ps, fmt.Sprintf("{%d,%d}", i, s))
		inv = append(inv, fmt.Sprintf("{%d,%d}", s, i))
	}
	return "{{" + strings.Join(gs, "},{") + "}}", "{" + strings.Join(ps, ",") + "}", "{" + strings.Join(inv, ",") + "}"
}
