package passes

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

func orderNames(order []*hlo.Instruction) string {
	var ns []string
	for _, in := range order {
		ns = append(ns, in.Name)
	}
	return strings.Join(ns, " ")
}

// TestPostOrder: parameters first; each value right before the user the walk
// reaches it from, the operand with the most bytes behind it first (the chain
// b1→b2→b3 before the lone negate); an instruction the root does not reach (a
// side-effecting call) after, in its original place among those.
func TestPostOrder(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  x = f32[64] parameter(0)
  small = f32[64] negate(x)
  b1 = f32[64] exponential(x)
  io = f32[64] custom-call(x), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  b2 = f32[64] sine(b1)
  b3 = f32[64] cosine(b2)
  ROOT r = f32[64] add(small, b3)
}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := orderNames(postOrder(m.Entry)), "x b1 b2 b3 small r io"; got != want {
		t.Fatalf("post-order %q, want %q", got, want)
	}
}

// TestPostOrderListScheduleSinksMovesBack: a forward pass that offloads three
// values and a backward pass that moves them back (each move only allocates)
// and reads them in reverse. The
// list schedule with ties in the original order moves all three back first; with
// ties in the post-order, each right before the step that reads it, so at most
// two are on the device at once.
func TestPostOrderListScheduleSinksMovesBack(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule m
ENTRY e {
  p1 = f32[1024] parameter(0)
  p2 = f32[1024] parameter(1)
  p3 = f32[1024] parameter(2)
  c = f32[] parameter(3)
  h1 = f32[1024] custom-call(p1), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  h2 = f32[1024] custom-call(p2), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  h3 = f32[1024] custom-call(p3), custom_call_target="MoveToHost", custom_call_has_side_effect=true
  d1 = f32[1024] custom-call(h1), custom_call_target="MoveToDevice"
  d2 = f32[1024] custom-call(h2), custom_call_target="MoveToDevice"
  d3 = f32[1024] custom-call(h3), custom_call_target="MoveToDevice"
  g3 = f32[1024] multiply(d3, d3)
  s3 = f32[] reduce(g3, c), dimensions={0}, to_apply=%add
  b3 = f32[1024] broadcast(s3), dimensions={}
  g2 = f32[1024] multiply(d2, b3)
  s2 = f32[] reduce(g2, c), dimensions={0}, to_apply=%add
  b2 = f32[1024] broadcast(s2), dimensions={}
  g1 = f32[1024] multiply(d1, b2)
  ROOT s1 = f32[] reduce(g1, c), dimensions={0}, to_apply=%add
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}`)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Entry
	if got := orderNames(newMemoryModel(c).listSchedule()); !strings.Contains(got, "h3 d1 d2 d3") {
		t.Fatalf("the original-order list schedule %q no longer moves every value back first: the case tests nothing", got)
	}
	got := orderNames(postOrderListSchedule(c))
	if want := "p1 p2 p3 c h3 h2 h1 d3 g3 s3 b3 d2 g2 s2 b2 d1 g1 s1"; got != want {
		t.Fatalf("post-order list schedule %q, want %q", got, want)
	}
}
