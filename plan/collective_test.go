package plan_test

import (
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

const twoReplicaModule = `HloModule dp
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256] parameter(0)
  y = f32[256] multiply(x, x)
  g = f32[256] all-reduce(y), replica_groups={{0,1}}, to_apply=add
  ROOT z = f32[256] add(g, x)
}`

// On several devices a collective is a host step between the kernels around it,
// its operand and result planned like any other buffers; on one device the
// passes expand it away.
func TestCollectiveIsAHostStep(t *testing.T) {
	m, err := hlo.ParseModule(twoReplicaModule)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(m, testTarget(t), plan.Options{Devices: 2})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, st := range p.Main.Steps {
		kinds = append(kinds, st.Kind.String())
	}
	if got := strings.Join(kinds, ","); got != "dispatch,collective,dispatch" {
		t.Fatalf("steps %s, want dispatch,collective,dispatch\n%s", got, p)
	}
	st := p.Main.Steps[1]
	if st.Instr.Op != hlo.OpAllReduce || len(st.Args) != 1 || len(st.Outs) != 1 {
		t.Fatalf("collective step %+v", st)
	}
	if !strings.Contains(p.String(), "collective g host all-reduce") {
		t.Fatalf("plan text lacks the host step:\n%s", p)
	}
	// x and y (1 KiB each) are live at the host step, which writes g over y (y
	// dies there), and z is written over g: two buffers in all.
	if p.Stats.PeakBytes != 2*1024 {
		t.Fatalf("peak %d bytes, want 2 KiB\n%s", p.Stats.PeakBytes, p)
	}

	one, err := plan.Build(m, testTarget(t), plan.Options{})
	if err == nil {
		t.Fatalf("one device planned a two-replica all-reduce:\n%s", one)
	}
}
