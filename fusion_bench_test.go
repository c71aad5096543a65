package vkxla_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// BenchmarkRowFusion: softmax and layernorm over the last dim of f32[4096,1024],
// fused (one row kernel each) and unfused (WithoutPasses("fusion")), against an
// elementwise copy (negate: one load, one store) of the same tensor, all in one
// process with their runs interleaved round by round. x-copy is a variant's GPU
// time ÷ the copy's in the same round, the median over the rounds (bench.RoundRatio);
// the target for the fused variants is ≤ 3 (issue 12). Each variant's outputs are
// checked against cpuref on its first run.
//
//	VKXLA_VALIDATION=0 go test -run '^$' -bench RowFusion -benchtime 10x .
func BenchmarkRowFusion(b *testing.B) {
	const rows, cols = 4096, 1024
	rt := newRuntime(b)
	ctx := context.Background()
	x := bench.F32Literal(1, rows, cols)
	gamma, beta := bench.F32Literal(2, cols), bench.F32Literal(3, cols)
	noFusion := func(*vkxla.Runtime, *hlo.Module) ([]vkxla.CompileOption, error) {
		return []vkxla.CompileOption{vkxla.WithoutPasses("fusion")}, nil
	}
	variant := func(name string, unfused bool, build func(b *hlo.Builder) *hlo.Instruction, inputs ...*hlo.Literal) bench.Variant {
		var opts func(*vkxla.Runtime, *hlo.Module) ([]vkxla.CompileOption, error)
		if unfused {
			opts = noFusion
		}
		return bench.ExecutableWith(name, opts, func() (*hlo.Module, error) {
			hb := hlo.NewBuilder(name)
			return hb.Build(build(hb))
		}, func() []*hlo.Literal { return inputs }, func(in, out []*hlo.Literal) error {
			hb := hlo.NewBuilder(name)
			m, err := hb.Build(build(hb))
			if err != nil {
				return err
			}
			return outputsMatchCPU(m, in, out)
		})
	}
	softmax := func(hb *hlo.Builder) *hlo.Instruction { return bench.Softmax(hb, rows, cols) }
	layernorm := func(hb *hlo.Builder) *hlo.Instruction { return bench.LayerNorm(hb, rows, cols) }
	variants := []bench.Variant{
		variant("copy", false, func(hb *hlo.Builder) *hlo.Instruction {
			return hb.Negate(hb.Parameter(x.Shape(), "x"))
		}, x),
		variant("softmax", false, softmax, x),
		variant("softmax-unfused", true, softmax, x),
		variant("layernorm", false, layernorm, x, gamma, beta),
		variant("layernorm-unfused", true, layernorm, x, gamma, beta),
	}
	runners := make([]bench.Runner, len(variants))
	for i, v := range variants {
		r, err := v.New(ctx, rt)
		require.NoError(b, err)
		defer func() { require.NoError(b, r.Close()) }()
		runners[i] = r
	}
	var stats []bench.Stats
	for b.Loop() {
		round, err := bench.Measure(ctx, runners, 1)
		require.NoError(b, err)
		if stats == nil {
			stats = make([]bench.Stats, len(runners))
		}
		for i, s := range round {
			for _, t := range s.Times {
				stats[i].Add(bench.Sample{GPU: t, Dispatches: s.Dispatches})
			}
		}
	}
	for i, v := range variants[1:] {
		st := stats[i+1]
		b.ReportMetric(1/bench.RoundRatio(st, stats[0]), v.Name+"-x-copy")
		b.ReportMetric(float64(st.Dispatches), v.Name+"-kernels")
		b.Logf("%s: best GPU %v (copy %v)", runners[i+1].Name(), st.BestGPU, stats[0].BestGPU)
	}
}

// outputsMatchCPU compares outputs with cpuref's within the program's tolerance.
func outputsMatchCPU(m *hlo.Module, in, out []*hlo.Literal) error {
	want, err := cpuref.Eval(m, in...)
	if err != nil {
		return err
	}
	spec := vkxla.ProgramTolerance(m, hlo.F32)
	for i, w := range want.Leaves() {
		if err := spec.Check(out[i], w); err != nil {
			return fmt.Errorf("output %d: %w", i, err)
		}
	}
	return nil
}
