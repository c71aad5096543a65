package vkxla_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
)

// Differential cases of the ops expander passes lower before code generation
// (hlo.OpInfo.ExpandedBy): TestDifferentialOps compiles each through rt.Compile,
// which runs the expanders, and compares the GPU's output with cpuref's own
// definition of the op.

func init() {
	for op, g := range map[hlo.Opcode]caseGen{
		hlo.OpBatchNormTraining:      batchNormCases(hlo.OpBatchNormTraining),
		hlo.OpBatchNormInference:     batchNormCases(hlo.OpBatchNormInference),
		hlo.OpBatchNormGrad:          batchNormCases(hlo.OpBatchNormGrad),
		hlo.OpRngBitGenerator:        rngBitGeneratorCases,
		hlo.OpCustomCall:             customCallCases,
		hlo.OpAllReduce:              collectiveCases(hlo.OpAllReduce),
		hlo.OpAllReduceStart:         collectiveCases(hlo.OpAllReduceStart),
		hlo.OpAllReduceDone:          collectiveCases(hlo.OpAllReduceDone),
		hlo.OpAllGather:              collectiveCases(hlo.OpAllGather),
		hlo.OpAllGatherStart:         collectiveCases(hlo.OpAllGatherStart),
		hlo.OpAllGatherDone:          collectiveCases(hlo.OpAllGatherDone),
		hlo.OpReduceScatter:          collectiveCases(hlo.OpReduceScatter),
		hlo.OpAllToAll:               collectiveCases(hlo.OpAllToAll),
		hlo.OpCollectivePermute:      collectiveCases(hlo.OpCollectivePermute),
		hlo.OpCollectivePermuteStart: collectiveCases(hlo.OpCollectivePermuteStart),
		hlo.OpCollectivePermuteDone:  collectiveCases(hlo.OpCollectivePermuteDone),
		hlo.OpReplicaID:              collectiveCases(hlo.OpReplicaID),
		hlo.OpPartitionID:            collectiveCases(hlo.OpPartitionID),
		hlo.OpCollectiveBroadcast:    collectiveCases(hlo.OpCollectiveBroadcast),
	} {
		opCases[op] = g
	}
}

// batchNormCases: feature dimensions first, inner and last, over the float types.
func batchNormCases(op hlo.Opcode) caseGen {
	return func(t testing.TB, g *gen) []opCase {
		var out []opCase
		for _, layout := range []struct {
			dims []int64
			fi   int64
		}{{[]int64{4, 3, 5, 2}, 1}, {[]int64{6, 8}, 1}, {[]int64{5, 33}, 0}} {
			out = append(out, forDTypes(g, hlo.DType.IsFloat, func(dt hlo.DType) opCase {
				return batchNormCase(t, g, op, dt, layout.dims, layout.fi)
			})...)
		}
		return out
	}
}

func batchNormCase(t testing.TB, g *gen, op hlo.Opcode, dt hlo.DType, dims []int64, fi int64) opCase {
	cb := newCase(g, op.String())
	x := hlo.MakeShape(dt, dims...)
	c := hlo.MakeShape(dt, dims[fi])
	positive := domain{0.5, 2}
	var root *hlo.Instruction
	switch op {
	case hlo.OpBatchNormTraining:
		root = cb.BatchNormTraining(cb.param(x, unitDomain), cb.param(c, positive), cb.param(c, unitDomain), 0.001, fi)
	case hlo.OpBatchNormInference:
		root = cb.BatchNormInference(cb.param(x, unitDomain), cb.param(c, positive), cb.param(c, unitDomain),
			cb.param(c, unitDomain), cb.param(c, positive), 0.001, fi)
	default:
		root = cb.BatchNormGrad(cb.param(x, unitDomain), cb.param(c, positive), cb.param(c, unitDomain),
			cb.param(c, positive), cb.param(x, unitDomain), 0.001, fi)
	}
	return cb.done(t, fmt.Sprintf("%v/fi=%d", x, fi), root, vkxla.Tolerance(op, dt))
}

// rngBitGeneratorCases: every algorithm, state shape and output type the device
// has, over shapes that exercise Threefry's split rule and partly used Philox
// blocks, and shapes whose minor extent is a multiple of 4 (kernels of four
// elements per invocation, where one Philox block serves a group: 4, 8 and 12
// per row); the bits must be equal.
func rngBitGeneratorCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	if !slices.Contains(g.dtypes, hlo.U64) {
		t.Fatal("rng-bit-generator's state is u64; the device lacks 64-bit integers")
	}
	for _, alg := range []hlo.RngAlgorithm{hlo.RngDefault, hlo.RngPhilox, hlo.RngThreeFry} {
		for _, n := range []int64{2, 3} {
			if n == 3 && alg == hlo.RngThreeFry {
				continue
			}
			for _, dt := range hlo.RngOutputTypes {
				for _, dims := range [][]int64{{}, {7}, {3, 5}, {2, 3, 129}, {5, 4}, {3, 8}, {2, 12}} {
					cb := newCase(g, "rng")
					state := make([]uint64, n)
					for i := range state {
						state[i] = g.rng.Uint64()
					}
					st := cb.paramValue(hlo.MustFromSlice([]int64{n}, state))
					bits := hlo.MakeShape(dt, dims...)
					out = append(out, cb.done(t, fmt.Sprintf("%v/u64[%d]/%v", alg, n, bits),
						cb.RngBitGenerator(st, alg, bits), exact()))
				}
			}
		}
	}
	return append(out, rngLoopCase(t, g))
}

// rngLoopCase threads the state through a while loop, as a training loop does:
// each iteration draws fresh bits from the state the last one left.
func rngLoopCase(t testing.TB, g *gen) opCase {
	m, err := hlo.ParseModule(`HloModule rng_loop
cond {
  p = (s32[], u64[2], u32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], u64[2], u32[4,3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  st = u64[2] get-tuple-element(p), index=1
  acc = u32[4,3] get-tuple-element(p), index=2
  r = (u64[2], u32[4,3]) rng-bit-generator(st), algorithm=rng_three_fry
  st2 = u64[2] get-tuple-element(r), index=0
  bits = u32[4,3] get-tuple-element(r), index=1
  acc2 = u32[4,3] xor(acc, bits)
  ROOT t = (s32[], u64[2], u32[4,3]) tuple(next, st2, acc2)
}
ENTRY e {
  s = u64[2] parameter(0)
  zero = s32[] constant(0)
  z = u32[] constant(0)
  acc = u32[4,3] broadcast(z), dimensions={}
  init = (s32[], u64[2], u32[4,3]) tuple(zero, s, acc)
  ROOT w = (s32[], u64[2], u32[4,3]) while(init), condition=cond, body=body
}`)
	if err != nil {
		t.Fatal(err)
	}
	state := hlo.MustFromSlice([]int64{2}, []uint64{g.rng.Uint64(), g.rng.Uint64()})
	return opCase{name: "in a while loop", module: m, inputs: []*hlo.Literal{state}, spec: exact()}
}

// customCallCases: the built-in targets.
func customCallCases(t testing.TB, g *gen) []opCase {
	var out []opCase
	for _, target := range []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
		"MoveToHost", "MoveToDevice", "annotate_device_placement"} {
		cb := newCase(g, "identity")
		x := cb.param(f32(3, 4), unitDomain)
		out = append(out, cb.done(t, target, cb.Exp(cb.CustomCall(target, []*hlo.Instruction{x}, x.Shape, nil)),
			vkxla.Tolerance(hlo.OpExp, hlo.F32)))
	}
	for _, largest := range []bool{true, false} {
		cb := newCase(g, "topk")
		x := cb.param(f32(5, 130), unitDomain)
		result := hlo.MakeTuple(f32(5, 7), hlo.MakeShape(hlo.S32, 5, 7))
		cfg := &hlo.CustomCallAttrs{BackendConfig: fmt.Sprintf("{k = 7 : i64, largest = %v}", largest), Braced: true}
		out = append(out, cb.done(t, fmt.Sprintf("TopK/largest=%v", largest),
			cb.CustomCall("TopK", []*hlo.Instruction{x}, result, cfg), exact()))
	}
	cb := newCase(g, "threefry2x32")
	u := hlo.MakeShape(hlo.U32, 3, 67)
	ops := []*hlo.Instruction{cb.param(u, unitDomain), cb.param(u, unitDomain), cb.param(u, unitDomain), cb.param(u, unitDomain)}
	out = append(out, cb.done(t, "cu_threefry2x32", cb.CustomCall("cu_threefry2x32", ops, hlo.MakeTuple(u, u), nil), exact()))
	return out
}

// collectiveCases: each collective on one replica, with the replica-group
// spellings XLA prints, and collective-permute with and without the self pair.
func collectiveCases(op hlo.Opcode) caseGen {
	return func(t testing.TB, g *gen) []opCase {
		var out []opCase
		for _, groups := range [][][]int64{nil, {{0}}} {
			cb := newCase(g, op.String())
			x := cb.param(f32(3, 5), unitDomain)
			y := cb.param(hlo.MakeShape(hlo.S32, 4), unitDomain)
			add := cb.Reducer(hlo.OpAdd, hlo.F32)
			var root *hlo.Instruction
			switch op {
			case hlo.OpAllReduce, hlo.OpAllReduceStart:
				root = cb.Collective(op, []*hlo.Instruction{x}, groups, nil, add)
			case hlo.OpAllReduceDone:
				root = cb.AsyncDone(op, cb.Collective(hlo.OpAllReduceStart, []*hlo.Instruction{x}, groups, nil, add))
			case hlo.OpAllGather, hlo.OpAllGatherStart:
				root = cb.Collective(op, []*hlo.Instruction{x, y}, groups, []int64{0}, nil)
			case hlo.OpAllGatherDone:
				root = cb.AsyncDone(op, cb.Collective(hlo.OpAllGatherStart, []*hlo.Instruction{x}, groups, []int64{1}, nil))
			case hlo.OpReduceScatter:
				root = cb.Collective(op, []*hlo.Instruction{x}, groups, []int64{1}, add)
			case hlo.OpAllToAll, hlo.OpCollectiveBroadcast:
				root = cb.Collective(op, []*hlo.Instruction{x, y}, groups, nil, nil)
			case hlo.OpCollectivePermute, hlo.OpCollectivePermuteStart:
				var pairs [][]int64 // no pair targets the replica: zeros
				if groups != nil {
					pairs = [][]int64{{0, 0}} // the replica sends to itself: the identity
				}
				root = cb.CollectivePermute(op, x, pairs)
			case hlo.OpCollectivePermuteDone:
				root = cb.AsyncDone(op, cb.CollectivePermute(hlo.OpCollectivePermuteStart, x, nil))
			case hlo.OpReplicaID:
				root = cb.Add(cb.ReplicaID(), cb.Convert(cb.Parameter(hlo.Scalar(hlo.F32), "unused"), hlo.U32))
				cb.inputs = append(cb.inputs, hlo.ScalarLiteral(float32(5)))
			case hlo.OpPartitionID:
				root = cb.PartitionID()
			}
			out = append(out, cb.done(t, fmt.Sprintf("groups=%v", groups), root, exact()))
		}
		return out
	}
}

// TestSeveralReplicasAreUnsupported: a collective over two replicas is valid HLO
// that one device cannot run: Compile says so with vkxla.ErrUnsupported, naming
// the instruction.
func TestSeveralReplicasAreUnsupported(t *testing.T) {
	rt := newRuntime(t)
	m, err := hlo.ParseModule(`HloModule two_replicas
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
`)
	require.NoError(t, err)
	_, err = rt.Compile(context.Background(), m)
	require.ErrorIs(t, err, vkxla.ErrUnsupported)
	assert.Contains(t, err.Error(), "all-reduce r")
}
