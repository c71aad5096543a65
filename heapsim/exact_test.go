package heapsim_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/randgraph"
	"github.com/vkxla/vkxla/passes"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// lavapipe is the model with lavapipe's kernels (memoised code generation) and
// limits.
func lavapipe() heapsim.Config {
	return heapsim.Config{Kernels: codegen.NewMemo(codegen.LavapipeTarget()).Lower, Limits: heapsim.DefaultLimits}
}

// graphParams are the random graphs of the measurement (docs/results.md).
func graphParams(seed uint64) randgraph.Params {
	return randgraph.Params{Nodes: 16 + int(seed%15), Width: 4, FanIn: 2, Params: 3, Rows: []int64{16, 64, 256, 1024}, Seed: seed}
}

// fused is a random module after the pipeline up to fusion (schedule and remat
// off): the kernels the exact scheduler and the heuristic order. ok is false for a
// graph the exact scheduler does not take (too many kernels, a multi-dispatch one).
func fused(t testing.TB, p randgraph.Params, cfg heapsim.Config) (*hlo.Module, bool) {
	m, err := hlo.ParseModule(randgraph.Module(p))
	if err != nil {
		t.Fatalf("%v: %v\n%s", p, err, randgraph.Module(p))
	}
	if err := passes.Run(m, passes.Config{Disabled: []string{"schedule", "remat"}, Memory: cfg}); err != nil {
		t.Fatalf("%v: %v", p, err)
	}
	if _, _, err := heapsim.ExactSchedule(m, cfg); errors.Is(err, heapsim.ErrNotExact) {
		return m, false
	} else if err != nil {
		t.Fatal(err)
	}
	return m, true
}

func lowerBound(t testing.TB, m *hlo.Module, cfg heapsim.Config) heapsim.MemoryStats {
	model, err := heapsim.Simulate(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return model.Stats
}

// topoOrders lists every order of the kernels of c consistent with its edges
// (parameters first, the root last), up to limit orders.
func topoOrders(c *hlo.Computation, limit int) [][]*hlo.Instruction {
	var fixed, kernels []*hlo.Instruction
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter || in.Op == hlo.OpConstant {
			fixed = append(fixed, in)
		} else if in != c.Root {
			kernels = append(kernels, in)
		}
	}
	var out [][]*hlo.Instruction
	done := map[*hlo.Instruction]bool{}
	for _, in := range fixed {
		done[in] = true
	}
	var order []*hlo.Instruction
	var rec func()
	rec = func() {
		if len(out) == limit {
			return
		}
		if len(order) == len(kernels) {
			out = append(out, slices.Concat(fixed, order, []*hlo.Instruction{c.Root}))
			return
		}
		for _, k := range kernels {
			if done[k] || slices.ContainsFunc(k.Operands, func(op *hlo.Instruction) bool { return !done[op] }) {
				continue
			}
			done[k] = true
			order = append(order, k)
			rec()
			order = order[:len(order)-1]
			done[k] = false
		}
	}
	rec()
	return out
}

// TestExactMatchesModel: on small random graphs, the exact scheduler's cost of
// every order (all of them, up to 2000) is Simulate's LowerBoundBytes for that
// order, and its optimum is the least of them, reached by the order it returns.
func TestExactMatchesModel(t *testing.T) {
	cfg := lavapipe()
	checked := 0
	for seed := uint64(1); checked < 25 && seed < 200; seed++ {
		p := graphParams(seed)
		p.Nodes = 6 + int(seed%5)
		m, ok := fused(t, p, cfg)
		if !ok {
			continue
		}
		checked++
		order, opt, err := heapsim.ExactSchedule(m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c := m.Entry
		orig := c.Instructions
		least := int64(-1)
		for _, o := range topoOrders(c, 2000) {
			c.Instructions = o
			want := lowerBound(t, m, cfg).LowerBoundBytes
			got, err := heapsim.ExactCost(m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%v: exact cost %d, model lower bound %d for\n%s", p, got, want, hlo.Print(m))
			}
			if least < 0 || want < least {
				least = want
			}
		}
		c.Instructions = order
		if got := lowerBound(t, m, cfg).LowerBoundBytes; got != opt || opt != least {
			t.Errorf("%v: exact optimum %d, its order's lower bound %d, least over all orders %d", p, opt, got, least)
		}
		// A beam wide enough to keep every down-set is exact.
		wide, err := heapsim.BeamSchedule(c, cfg, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		c.Instructions = wide
		if got := lowerBound(t, m, cfg).LowerBoundBytes; got != opt {
			t.Errorf("%v: unbounded beam reaches %d, the optimum is %d", p, got, opt)
		}
		c.Instructions = orig
	}
	if checked < 20 {
		t.Fatalf("only %d graphs fit the exact scheduler", checked)
	}
}

// heuristicRatios measures the schedule pass against the exact optimum on n random
// graphs: lower bound of the pass's order / optimum, and the plan's bytes /
// optimum; kernels counts the kernels after fusion.
func heuristicRatios(t testing.TB, n int) (ratios, packing []float64, kernels []int, worst randgraph.Params) {
	cfg := lavapipe()
	worstRatio := 0.0
	for seed := uint64(1); len(ratios) < n; seed++ {
		p := graphParams(seed)
		m, ok := fused(t, p, cfg)
		if !ok {
			continue
		}
		_, opt, err := heapsim.ExactSchedule(m, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := passes.Schedule(m, passes.Config{Memory: cfg}); err != nil {
			t.Fatal(err)
		}
		st := lowerBound(t, m, cfg)
		r := float64(st.LowerBoundBytes) / float64(opt)
		if r > worstRatio {
			worstRatio, worst = r, p
		}
		ratios = append(ratios, r)
		packing = append(packing, float64(st.PeakBytes)/float64(opt))
		k := 0
		for _, in := range m.Entry.Instructions {
			if in.Op != hlo.OpParameter && in.Op != hlo.OpConstant && in != m.Entry.Root {
				k++
			}
		}
		kernels = append(kernels, k)
	}
	return ratios, packing, kernels, worst
}

func summary(xs []float64) (worst, mean float64) {
	for _, x := range xs {
		worst = max(worst, x)
		mean += x
	}
	return worst, mean / float64(len(xs))
}

// TestHeuristicNearExact: over 100 random graphs the schedule pass's order needs at
// most 1.10 times the least peak any order reaches (the exact scheduler's).
func TestHeuristicNearExact(t *testing.T) {
	ratios, _, _, worstGraph := heuristicRatios(t, 100)
	if worst, mean := summary(ratios); worst > 1.10 {
		t.Errorf("heuristic / optimum: worst %.3f (%v), mean %.3f; want worst ≤ 1.10", worst, worstGraph, mean)
	}
}

// BenchmarkExactVsHeuristic reports the measurement of docs/results.md over 300
// graphs: the worst and mean ratio of the heuristic's lower bound to the optimum,
// and of the packed plan to the optimum.
func BenchmarkExactVsHeuristic(b *testing.B) {
	for range b.N {
		ratios, packing, kernels, worst := heuristicRatios(b, 300)
		w, m := summary(ratios)
		pw, pm := summary(packing)
		b.ReportMetric(w, "worst-ratio")
		b.ReportMetric(m, "mean-ratio")
		b.ReportMetric(pw, "worst-packing")
		b.ReportMetric(pm, "mean-packing")
		b.ReportMetric(float64(slices.Min(kernels)), "min-kernels")
		b.ReportMetric(float64(slices.Max(kernels)), "max-kernels")
		if b.N == 1 {
			b.Log(fmt.Sprintf("worst graph: %v", worst))
		}
	}
}
