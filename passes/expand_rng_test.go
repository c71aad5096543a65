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
	// 21+15+9+8+10+2+6+3 units of 32 bits.
	checkThreadedMatchesCPURef(t, m, state, 74, inputs...)
}

// checkThreadedMatchesCPURef runs the pipeline on m and checks that cpuref gives
// the same outputs, bit for bit, and the same final state (delta units past
// state) when the state is the threaded module's last input and last output.
func checkThreadedMatchesCPURef(t *testing.T, m *hlo.Module, state [2]uint64, delta uint64, inputs ...*hlo.Literal) {
	t.Helper()
	want, next, err := cpuref.Limits{}.EvalWithRngState(context.Background(), m, state, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if next != hlo.AdvanceRngState(state, delta) {
		t.Errorf("cpuref left the state at %v, want %v advanced by %d", next, state, delta)
	}
	if err := Run(m, Config{}); err != nil {
		t.Fatal(err)
	}
	params := m.Entry.Params
	if last := params[len(params)-1]; len(params) != len(inputs)+1 || !last.Shape.Equal(hlo.RngStateShape) {
		t.Fatalf("want the state as a last, u64[2] parameter; entry params %v", m.Entry.ParamShapes())
	}
	got, err := cpuref.Eval(m, append(inputs, hlo.MustFromSlice([]int64{2}, state[:]))...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Elems()) != 2 {
		t.Fatalf("root %v: want (outputs, state)", got.Shape())
	}
	for i, g := range got.Elems()[0].Leaves() {
		if err := hlo.LiteralsEqual(g, want.Leaves()[i]); err != nil {
			t.Errorf("output %d: %v\n%s", i, err, hlo.Print(m))
		}
	}
	if end, _ := hlo.Values[uint64](got.Elems()[1]); end[0] != next[0] || end[1] != next[1] {
		t.Errorf("the threaded module ends at state %v, cpuref at %v", end, next)
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
	want := [][]uint64{{^uint64(0) - 6, 1}, {^uint64(0) - 1, 1}, {5, 2}, {6, 2}}
	for i, l := range append(out.Elems()[0].Elems(), out.Elems()[1]) {
		got, _ := hlo.Values[uint64](l)
		if got[0] != want[i][0] || got[1] != want[i][1] {
			t.Errorf("state %d = %v, want %v", i, got, want[i])
		}
	}
}

// The root becomes (outputs, state): input_output_alias entries follow the outputs
// into element 0 (they named the wrong leaf, or none, before).
func TestThreadRngStateMovesAliases(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule s, input_output_alias={ {1}: (0, {}, must-alias) }
ENTRY e {
  p = f32[4] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  a = f32[4] add(p, r)
  ROOT t = (f32[4], f32[4]) tuple(r, a)
}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExpandRng(m, Config{}); err != nil {
		t.Fatal(err)
	}
	if changed, err := ThreadRngState(m, Config{}); err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if err := hlo.Verify(m); err != nil {
		t.Fatal(err)
	}
	if got := hlo.Print(m); !strings.Contains(got, "input_output_alias={ {0,1}: (0, {}, must-alias) }") {
		t.Errorf("the alias does not follow the outputs into element 0:\n%s", got)
	}
}

// A loop whose body draws carries the state: every iteration draws afresh (nested
// loops too), as cpuref's iterations do, and the run ends past all of them.
func TestThreadRngStateThroughLoops(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule loops
inner_cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
inner_body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  acc = f32[2] get-tuple-element(p), index=1
  a = f32[] constant(0)
  b = f32[] constant(1)
  u = f32[2] rng(a, b), distribution=rng_normal
  s = f32[2] add(acc, u)
  ROOT t = (s32[], f32[2]) tuple(j, s)
}
cond {
  p = (s32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
  a = f32[] constant(-1)
  b = f32[] constant(1)
  noise = f32[4] rng(a, b), distribution=rng_uniform
  y = f32[4] add(x, noise)
  z = s32[] constant(0)
  acc = f32[2] get-tuple-element(p), index=2
  it = (s32[], f32[2]) tuple(z, acc)
  inner = (s32[], f32[2]) while(it), condition=inner_cond, body=inner_body
  acc2 = f32[2] get-tuple-element(inner), index=1
  ROOT t = (s32[], f32[4], f32[2]) tuple(j, y, acc2)
}
ENTRY e {
  a = f32[] constant(0)
  b = f32[] constant(10)
  before = f32[3] rng(a, b), distribution=rng_uniform
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  acc = f32[2] parameter(1)
  t = (s32[], f32[4], f32[2]) tuple(z, x, acc)
  w = (s32[], f32[4], f32[2]) while(t), condition=cond, body=body
  after = f32[3] rng(a, b), distribution=rng_uniform
  ROOT r = (f32[3], (s32[], f32[4], f32[2]), f32[3]) tuple(before, w, after)
}`)
	if err != nil {
		t.Fatal(err)
	}
	x := hlo.MustFromSlice([]int64{4}, []float32{1, 2, 3, 4})
	acc := hlo.MustFromSlice([]int64{2}, []float32{0, 0})
	// 3 before, 3 iterations of (4 + 2 inner iterations of 2), 3 after.
	checkThreadedMatchesCPURef(t, m, [2]uint64{^uint64(0) - 1, 7}, 3+3*(4+2*2)+3, x, acc)
}

// The state reaches the entry and while bodies only: a draw in a called computation
// or a loop condition is ErrUnsupported, naming the draw and the caller.
func TestThreadRngStateRefusesCalls(t *testing.T) {
	for name, text := range map[string]string{
		"call": `HloModule c
draws {
  p = f32[4] parameter(0)
  a = f32[] constant(0)
  b = f32[] constant(1)
  draw = f32[4] rng(a, b), distribution=rng_uniform
  ROOT s = f32[4] add(p, draw)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=draws
}`,
		"condition": `HloModule w
cond {
  p = (s32[], f32[4]) parameter(0)
  a = f32[] constant(0)
  b = f32[] constant(1)
  draw = f32[] rng(a, b), distribution=rng_uniform
  half = f32[] constant(0.5)
  ROOT lt = pred[] compare(draw, half), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[4] get-tuple-element(p), index=1
  ROOT q = (s32[], f32[4]) tuple(j, x)
}
ENTRY e {
  z = s32[] constant(0)
  x = f32[4] parameter(0)
  t = (s32[], f32[4]) tuple(z, x)
  ROOT c = (s32[], f32[4]) while(t), condition=cond, body=body
}`,
	} {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatal(err)
		}
		err = Run(m, Config{})
		if !errors.Is(err, hlo.ErrUnsupported) {
			t.Fatalf("%s: got %v, want ErrUnsupported", name, err)
		}
		for _, s := range []string{"draw", "c (", "entry computation and while bodies only"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q does not mention %q", name, err, s)
			}
		}
	}
}
