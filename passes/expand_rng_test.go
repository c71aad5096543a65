package passes

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// Draws of every type and distribution, several per module, scalar and odd-sized
// (normal's pairing slices), with a state whose low word carries.
const rngModule = `HloModule draws
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  u = f32[7,3] rng(a, b), distribution=rng_uniform
  n = f32[3,5] rng(a, b), distribution=rng_normal
  ia = s32[] constant(-5)
  ib = s32[] constant(1000)
  i = s32[9] rng(ia, ib), distribution=rng_uniform
  ua = u64[] constant(3)
  ub = u64[] constant(18446744073709551000)
  w = u64[4] rng(ua, ub), distribution=rng_uniform
  da = f64[] constant(-1)
  db = f64[] constant(0.5)
  d = f64[5] rng(da, db), distribution=rng_normal
  s = f64[] rng(da, db), distribution=rng_normal
  ha = f16[] constant(0.5)
  hb = f16[] constant(2)
  h = f16[2,3] rng(ha, hb), distribution=rng_uniform
  ba = bf16[] constant(0.5)
  bb = bf16[] constant(2)
  hn = bf16[3] rng(ba, bb), distribution=rng_normal
  ROOT t = (f32[7,3], f32[3,5], s32[9], u64[4], f64[5], f64[], f16[2,3], bf16[3]) tuple(u, n, i, w, d, s, h, hn)
}`

// The pipeline's expansion (rng → state + Philox bits + values, the state an
// entry parameter) evaluates, bit for bit, to what cpuref's definition draws from
// the same state.
func TestExpandRngMatchesCPURef(t *testing.T) {
	m, err := hlo.ParseModule(rngModule)
	if err != nil {
		t.Fatal(err)
	}
	state := [2]uint64{^uint64(0) - 20, 5}
	inputs := []*hlo.Literal{hlo.ScalarLiteral(float32(-2)), hlo.ScalarLiteral(float32(3))}
	want, next, err := cpuref.Limits{}.EvalWithRngState(context.Background(), m, state, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if d := hlo.EntryRngStateDelta(m); next != hlo.AdvanceRngState(state, d) {
		t.Errorf("cpuref left the state at %v, want %v advanced by %d", next, state, d)
	}
	if err := Run(m, Config{}); err != nil {
		t.Fatal(err)
	}
	params := m.Entry.Params
	if last := params[len(params)-1]; len(params) != 3 || !last.Shape.Equal(hlo.RngStateShape) {
		t.Fatalf("want the state as a third, u64[2] parameter; entry params %v", m.Entry.ParamShapes())
	}
	got, err := cpuref.Eval(m, append(inputs, hlo.MustFromSlice([]int64{2}, state[:]))...)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got.Leaves() {
		if err := hlo.LiteralsEqual(g, want.Leaves()[i]); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

// Each rng-get-and-update-state becomes the state parameter advanced by the deltas
// before it.
func TestThreadRngStateOffsets(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule s
ENTRY e {
  x = u64[2] rng-get-and-update-state(), delta=5
  y = u64[2] rng-get-and-update-state(), delta=7
  z = u64[2] rng-get-and-update-state(), delta=1
  ROOT t = (u64[2], u64[2], u64[2]) tuple(x, y, z)
}`)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := ThreadRngState(m, Config{}); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	out, err := cpuref.Eval(m, hlo.MustFromSlice([]int64{2}, []uint64{^uint64(0) - 6, 1}))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]uint64{{^uint64(0) - 6, 1}, {^uint64(0) - 1, 1}, {5, 2}}
	for i, l := range out.Elems() {
		got, _ := hlo.Values[uint64](l)
		if got[0] != want[i][0] || got[1] != want[i][1] {
			t.Errorf("state %d = %v, want %v", i, got, want[i])
		}
	}
}

// The state is threaded through the entry only: rng in a while body is
// ErrUnsupported, naming the instruction and its computation.
func TestThreadRngStateRefusesLoops(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule loop
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[] constant(0)
  b = f32[] constant(1)
  draw = f32[4] rng(a, b), distribution=rng_uniform
  ROOT t = (s32[], f32[4]) tuple(j, draw)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT w = (s32[], f32[4]) while(t), condition=cond, body=body
}`)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(m, Config{})
	if !errors.Is(err, hlo.ErrUnsupported) {
		t.Fatalf("got %v, want ErrUnsupported", err)
	}
	for _, s := range []string{"draw", "body", "entry computation only"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}
