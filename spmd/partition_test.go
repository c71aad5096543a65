package spmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

const addComputation = `HloModule %s, num_partitions=%d

%%add (a: f32[], b: f32[]) -> f32[] {
  %%a = f32[] parameter(0)
  %%b = f32[] parameter(1)
  ROOT %%s = f32[] add(f32[] %%a, f32[] %%b)
}

%%max (a: f32[], b: f32[]) -> f32[] {
  %%a = f32[] parameter(0)
  %%b = f32[] parameter(1)
  ROOT %%m = f32[] maximum(f32[] %%a, f32[] %%b)
}

`

// The modules are written as XLA dumps them (JAX's sharded jit), N standing for
// the device count.
var partitionCases = []struct{ name, entry string }{
	{"data-parallel", `ENTRY %main (x: f32[8,16], w: f32[16,4], b: f32[4]) -> (f32[8,4], f32[]) {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[$N,1]<=[$N]}, metadata={op_name="x"}
  %w = f32[16,4]{1,0} parameter(1), sharding={replicated}
  %b = f32[4]{0} parameter(2), sharding={replicated}
  %dot = f32[8,4]{1,0} dot(f32[8,16]{1,0} %x, f32[16,4]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[8,4]{1,0} broadcast(f32[4]{0} %b), dimensions={1}
  %y = f32[8,4]{1,0} add(f32[8,4]{1,0} %dot, f32[8,4]{1,0} %bb)
  %zero = f32[] constant(0)
  %zeros = f32[8,4]{1,0} broadcast(f32[] %zero), dimensions={}
  %relu = f32[8,4]{1,0} maximum(f32[8,4]{1,0} %y, f32[8,4]{1,0} %zeros)
  %sum = f32[] reduce(f32[8,4]{1,0} %relu, f32[] %zero), dimensions={0,1}, to_apply=%add
  ROOT %out = (f32[8,4]{1,0}, f32[]) tuple(f32[8,4]{1,0} %relu, f32[] %sum)
}`},
	{"column-parallel", `ENTRY %main (x: f32[8,16], w: f32[16,8]) -> f32[8,8] {
  %x = f32[8,16]{1,0} parameter(0), sharding={replicated}
  %w = f32[16,8]{1,0} parameter(1), sharding={devices=[1,$N]<=[$N]}
  %dot = f32[8,8]{1,0} dot(f32[8,16]{1,0} %x, f32[16,8]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = f32[8,8]{1,0} tanh(f32[8,8]{1,0} %dot)
}`},
	{"row-parallel", `ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8,4] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[1,$N]<=[$N]}
  %w = f32[16,4]{1,0} parameter(1), sharding={devices=[$N,1]<=[$N]}
  ROOT %dot = f32[8,4]{1,0} dot(f32[8,16]{1,0} %x, f32[16,4]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`},
	{"row-parallel-sliced", `ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8,4] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[1,$N]<=[$N]}
  %w = f32[16,4]{1,0} parameter(1), sharding={replicated}
  ROOT %dot = f32[8,4]{1,0} dot(f32[8,16]{1,0} %x, f32[16,4]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`},
	{"reduce-sharded-dim", `ENTRY %main (x: f32[8,6]) -> (f32[6], f32[6], f32[8]) {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[$N,1]<=[$N]}
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  %sum = f32[6]{0} reduce(f32[8,6]{1,0} %x, f32[] %zero), dimensions={0}, to_apply=%add
  %max = f32[6]{0} reduce(f32[8,6]{1,0} %x, f32[] %ninf), dimensions={0}, to_apply=%max
  %rows = f32[8]{0} reduce(f32[8,6]{1,0} %x, f32[] %zero), dimensions={1}, to_apply=%add
  ROOT %out = (f32[6]{0}, f32[6]{0}, f32[8]{0}) tuple(%sum, %max, %rows)
}`},
	{"reduce-non-identity-init", `ENTRY %main (x: f32[8,6]) -> f32[6] {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[$N,1]<=[$N]}
  %one = f32[] constant(1)
  ROOT %sum = f32[6]{0} reduce(f32[8,6]{1,0} %x, f32[] %one), dimensions={0}, to_apply=%add
}`},
	{"movement", `ENTRY %main (x: f32[8,6], y: f32[6,8]) -> (f32[6,8], f32[48], f32[2,4,6], f32[8,6]) {
  %x = f32[8,6]{1,0} parameter(0), sharding={devices=[$N,1]<=[$N]}
  %y = f32[6,8]{1,0} parameter(1), sharding={devices=[1,$N]<=[$N]}
  %t = f32[6,8]{1,0} transpose(f32[8,6]{1,0} %x), dimensions={1,0}
  %s = f32[6,8]{1,0} subtract(f32[6,8]{1,0} %t, f32[6,8]{1,0} %y)
  %flat = f32[48]{0} reshape(f32[8,6]{1,0} %x)
  %split = f32[2,4,6]{2,1,0} reshape(f32[8,6]{1,0} %x)
  %yt = f32[8,6]{1,0} transpose(f32[6,8]{1,0} %y), dimensions={1,0}
  %mixed = f32[8,6]{1,0} multiply(f32[8,6]{1,0} %x, f32[8,6]{1,0} %yt), sharding={devices=[1,2,$M]<=[$N] last_tile_dim_replicate}
  ROOT %out = (f32[6,8]{1,0}, f32[48]{0}, f32[2,4,6]{2,1,0}, f32[8,6]{1,0}) tuple(%s, %flat, %split, %mixed)
}`},
	{"differently-tiled", `ENTRY %main (x: f32[8,8], y: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0), sharding={devices=[$N,1]<=[$N]}
  %y = f32[8,8]{1,0} parameter(1), sharding={devices=[1,$N]<=[$N]}
  %c = pred[8,8]{1,0} compare(f32[8,8]{1,0} %x, f32[8,8]{1,0} %y), direction=GT
  %s = f32[8,8]{1,0} select(pred[8,8]{1,0} %c, f32[8,8]{1,0} %x, f32[8,8]{1,0} %y)
  %i = s32[8,8]{1,0} iota(), iota_dimension=0
  %f = f32[8,8]{1,0} convert(s32[8,8]{1,0} %i)
  %sorted = f32[8,8]{1,0} sort(f32[8,8]{1,0} %s), dimensions={1}, to_apply=%lt
  ROOT %r = f32[8,8]{1,0} add(f32[8,8]{1,0} %sorted, f32[8,8]{1,0} %f), sharding={devices=[$N,1]<=[$N]}
}

%lt (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(f32[] %a, f32[] %b), direction=LT
}`},
	{"batched-dot", `ENTRY %main (x: f32[4,8,6], y: f32[4,6,2]) -> f32[4,8,2] {
  %x = f32[4,8,6]{2,1,0} parameter(0), sharding={devices=[$N,1,1]<=[$N]}
  %y = f32[4,6,2]{2,1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[4,8,2]{2,1,0} dot(%x, %y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}`},
}

func partitionText(name, entry string, n int) string {
	m := 1
	if n > 2 {
		m = n / 2
	}
	entry = strings.NewReplacer("$N", fmt.Sprint(n), "$M", fmt.Sprint(m)).Replace(entry)
	if n == 1 {
		entry = strings.ReplaceAll(entry, "[1,2,1]<=[1]", "[1,1,1]<=[1]")
	}
	return fmt.Sprintf(addComputation, strings.ReplaceAll(name, "-", "_"), n) + entry
}

func uniformInputs(m *hlo.Module) []*hlo.Literal {
	var in []*hlo.Literal
	for i, p := range m.Entry.Params {
		if !p.Shape.DType.IsFloat() {
			in = append(in, hlo.NewLiteral(p.Shape)) // the callers fill integer inputs
			continue
		}
		in = append(in, train.Uniform(uint64(10+i), p.Shape))
	}
	return in
}

// checkPartitioned partitions m for n devices, runs it on cpuref.EvalReplicas
// (1 replica × n partitions) over the whole inputs' tiles, and compares every
// device's result with cpuref.Eval of m.
func checkPartitioned(t *testing.T, m *hlo.Module, n int, inputs []*hlo.Literal, atol float64) *hlo.Module {
	t.Helper()
	want, err := cpuref.Eval(m, inputs...)
	require.NoError(t, err)
	pm, err := Partition(m, n)
	require.NoError(t, err)
	per, err := ShardInputs(m, n, inputs)
	require.NoError(t, err)
	got, err := cpuref.EvalReplicas(context.Background(), pm, 1, n, per)
	require.NoError(t, err, hlo.Print(pm))
	wants := shardResult(t, want, m.Entry.Root.Sharding, n)
	for d, g := range got {
		require.NoError(t, hlo.LiteralsClose(g, wants[d], atol, atol), "device %d of %d\n%s", d, n, hlo.Print(pm))
	}
	return pm
}

// shardResult is each device's part of the whole result: its tile where the
// root is annotated tiled.
func shardResult(t *testing.T, want *hlo.Literal, s *hlo.Sharding, n int) []*hlo.Literal {
	if s == nil || !want.Shape().IsTuple() {
		tiles, err := Shard(want, s, n)
		require.NoError(t, err)
		return tiles
	}
	out := make([]*hlo.Literal, n)
	elems := make([][]*hlo.Literal, n)
	for i, e := range want.Elems() {
		for d, tile := range shardResult(t, e, s.Elems[i], n) {
			elems[d] = append(elems[d], tile)
		}
	}
	for d := range out {
		out[d] = hlo.TupleLiteral(elems[d]...)
	}
	return out
}

func TestPartitionMatchesOneDevice(t *testing.T) {
	for _, c := range partitionCases {
		for _, n := range []int{2, 4} {
			t.Run(fmt.Sprintf("%s/%d", c.name, n), func(t *testing.T) {
				m, err := hlo.ParseModule(partitionText(c.name, c.entry, n))
				require.NoError(t, err)
				checkPartitioned(t, m, n, uniformInputs(m), 1e-5)
			})
		}
	}
}

// The partitioned programs of the main rules, printed: the golden files in
// testdata/ (SPMD_WRITE=1 rewrites them) are read as the rules' before/after.
func TestPartitionText(t *testing.T) {
	for _, name := range []string{"data-parallel", "column-parallel", "row-parallel", "reduce-sharded-dim"} {
		t.Run(name, func(t *testing.T) {
			var entry string
			for _, c := range partitionCases {
				if c.name == name {
					entry = c.entry
				}
			}
			m, err := hlo.ParseModule(partitionText(name, entry, 2))
			require.NoError(t, err)
			pm, err := Partition(m, 2)
			require.NoError(t, err)
			text := "// before\n" + hlo.Print(m) + "\n// after: spmd.Partition(m, 2)\n" + hlo.Print(pm)
			path := filepath.Join("testdata", name+".txt")
			if os.Getenv("SPMD_WRITE") == "1" {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			}
			golden, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(golden), text)
		})
	}
}

// Collectives the rules add: data-parallel needs only the final sum's
// all-reduce and the result's all-gather; row-parallel one all-reduce.
func TestPartitionCollectives(t *testing.T) {
	count := func(pm *hlo.Module) map[hlo.Opcode]int {
		c := map[hlo.Opcode]int{}
		for _, in := range pm.Entry.Instructions {
			c[in.Op]++
		}
		return c
	}
	for _, c := range []struct {
		name             string
		gathers, reduces int
	}{
		{"data-parallel", 1, 1},
		{"column-parallel", 1, 0},
		{"row-parallel", 0, 1},
		{"row-parallel-sliced", 0, 1},
		{"reduce-sharded-dim", 1, 2},
		{"reduce-non-identity-init", 1, 0},
		{"batched-dot", 1, 0},
	} {
		var entry string
		for _, pc := range partitionCases {
			if pc.name == c.name {
				entry = pc.entry
			}
		}
		m, err := hlo.ParseModule(partitionText(c.name, entry, 4))
		require.NoError(t, err)
		pm, err := Partition(m, 4)
		require.NoError(t, err)
		got := count(pm)
		assert.Equal(t, c.gathers, got[hlo.OpAllGather], "%s all-gathers\n%s", c.name, hlo.Print(pm))
		assert.Equal(t, c.reduces, got[hlo.OpAllReduce], "%s all-reduces\n%s", c.name, hlo.Print(pm))
	}
}

// A sharded dimension its tile count does not divide, a sharding over other
// devices than the program's and a tiled sharding of the wrong rank are
// refused, naming the instruction.
func TestPartitionRefuses(t *testing.T) {
	for _, c := range []struct{ entry, want string }{
		{`ENTRY %e (x: f32[6,4]) -> f32[6,4] {
  ROOT %x = f32[6,4] parameter(0), sharding={devices=[4,1]<=[4]}
}`, "parameter x: dimension 0 of f32[6,4] (size 6) is not divisible into 4 tiles"},
		{`ENTRY %e (x: f32[8,4]) -> f32[8,4] {
  ROOT %x = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
}`, "does not place its tiles on the 4 devices"},
		{`ENTRY %e (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4] parameter(0)
  ROOT %n = f32[8,4] negate(%x), sharding={devices=[4]<=[4]}
}`, "n: sharding {devices=[4]<=[4]} tiles 1 dimensions of the rank-2"},
	} {
		m, err := hlo.ParseModule("HloModule m\n" + c.entry)
		require.NoError(t, err)
		_, err = Partition(m, 4)
		require.Error(t, err)
		assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := Partition(&hlo.Module{}, 0)
	assert.ErrorIs(t, err, vkxla.ErrInvalidArgument)
}

// JAX's dump of a sharded training step (batch on 2 devices, weights
// replicated; every instruction annotated) partitions to the step on one device.
func TestPartitionJAXDump(t *testing.T) {
	m, err := hlo.ParseModuleFile("../hlo/testdata/xla/jax_sharded_step.hlo")
	require.NoError(t, err)
	inputs := uniformInputs(m)
	labels := hlo.NewLiteral(m.Entry.Params[3].Shape)
	for i := range labels.NumElements() {
		labels.SetInt64(i, int64(i%4))
	}
	inputs[3] = labels
	checkPartitioned(t, m, 2, inputs, 1e-5)
}
