package passes

import (
	"math"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/scanprog"
)

// TestRematRecomputesLoops: four differentiated scans under a budget of half
// their plain peak (5.0 stacks with CoarseKernels, which write nothing in place,
// so a stacking loop holds two stacks while it runs; plan/scan_test.go meets 25 %
// with the CI device's kernels). The pass recomputes forward loops just before the
// backward loops that read their stacks; the model meets the budget, and cpuref
// gives the rewritten module's value and gradient bit for bit (the loops
// recomputed are the same loops on the same state).
func TestRematRecomputesLoops(t *testing.T) {
	p := scanprog.Program{Steps: 100, Rows: 30, Cols: 100, Scans: 4} // stacks of 1.2 MB: over constant folding's bound
	m, err := p.Module()
	if err != nil {
		t.Fatal(err)
	}
	plain := m.Clone()
	if err := Run(plain, Config{}); err != nil {
		t.Fatal(err)
	}
	peak := modelBytes(t, plain)
	budget := peak / 2
	got := m.Clone()
	if err := Run(got, Config{MemoryBudget: budget}); err != nil {
		t.Fatal(err)
	}
	if b := modelBytes(t, got); b > budget {
		t.Fatalf("plan bytes %d (%.2f stacks) over the budget %d (plain %d, %.2f stacks)", b, p.Stacks(b), budget, peak, p.Stacks(peak))
	}
	if n := recomputedLoops(got.Entry); n == 0 {
		t.Fatalf("no loop was recomputed:\n%s", hlo.Print(got))
	}
	x := hlo.NewLiteral(p.State())
	for i := range x.Shape().NumElements() {
		x.SetFloat64(int(i), math.Sin(float64(i)*0.37))
	}
	want, err := cpuref.Eval(m, x)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cpuref.Eval(got, x)
	if err != nil {
		t.Fatal(err)
	}
	if err := hlo.LiteralsEqual(out, want); err != nil {
		t.Fatalf("the rewritten module's value and gradient differ: %v", err)
	}
}

func modelBytes(t *testing.T, m *hlo.Module) int64 {
	t.Helper()
	model, err := heapsim.Simulate(m, heapsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return model.Stats.PeakBytes
}

func recomputedLoops(c *hlo.Computation) int {
	n := 0
	for _, in := range c.Instructions {
		if in.Op == hlo.OpWhile && strings.Contains(in.Name, ".remat") {
			n++
		}
	}
	return n
}
