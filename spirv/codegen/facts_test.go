package codegen

import (
	"slices"
	"testing"
	"time"

	"github.com/vkxla/vkxla/hlo"
)

// TestFactsAgreeWithLower: the query gives what the memory model reads of the
// emitted program (inputs, outputs, scratch sizes, in-place inputs, each
// dispatch's arguments and copy mark) for every op's sample and for the cases
// each strategy takes (tree reductions of one and two passes, GEMM, sorts,
// scatters and dynamic-update-slices in place or not, empty outputs), under
// lavapipe's limits and under small ones (other workgroup sizes, so other splits).
func TestFactsAgreeWithLower(t *testing.T) {
	small := LavapipeTarget()
	small.MaxSharedMemory, small.MaxWorkgroupInvocations = 1024, 64
	cases := map[string]*hlo.Computation{}
	for _, op := range hlo.AllOpcodes() {
		if f := sampleFor(op); f != nil && !runtimeOps[op] {
			cases[op.String()] = f(t)
		}
	}
	for name, text := range factCases {
		m, err := hlo.ParseModule(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cases[name] = m.Entry
	}
	for _, target := range []Target{LavapipeTarget(), small} {
		for name, c := range cases {
			checkFacts(t, name, c, target)
		}
	}
}

// checkFacts compares Facts(c, t) with Lower(c, t).
func checkFacts(t *testing.T, name string, c *hlo.Computation, target Target) {
	t.Helper()
	want, werr := Lower(c, target)
	got, gerr := Facts(c, target)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%s: Lower error %v, Facts error %v", name, werr, gerr)
	}
	if werr != nil {
		return
	}
	if !slices.EqualFunc(got.Inputs, want.Inputs, hlo.Shape.Equal) || !slices.EqualFunc(got.Outputs, want.Outputs, hlo.Shape.Equal) ||
		!slices.Equal(got.Scratch, want.Scratch) || !slices.Equal(got.InPlace, want.InPlace) || len(got.Dispatches) != len(want.Dispatches) {
		t.Fatalf("%s: facts %+v\nprogram %+v", name, summary(got), summary(want))
	}
	for i, d := range want.Dispatches {
		g := got.Dispatches[i]
		if !slices.Equal(g.Args, d.Args) || g.CopiesInPlaceInput != d.CopiesInPlaceInput {
			t.Fatalf("%s: dispatch %d: facts args %v copy %v, program args %v copy %v", name, i, g.Args, g.CopiesInPlaceInput, d.Args, d.CopiesInPlaceInput)
		}
	}
}

func summary(p *Program) any {
	var args [][]Arg
	for _, d := range p.Dispatches {
		args = append(args, d.Args)
	}
	return struct {
		Scratch []int64
		InPlace []bool
		Args    [][]Arg
	}{p.Scratch, p.InPlace, args}
}

var factCases = map[string]string{
	"split convolution": `HloModule m
ENTRY e { x = f32[1,130,130,1] parameter(0)  k = f32[129,129,1,1] parameter(1)
  ROOT c = f32[1,2,2,1] convolution(x, k), window={size=129x129}, dim_labels=b01f_01io->b01f }`,
	"tree one pass": `HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { x = f32[8,4096] parameter(0)  z = f32[] constant(0)  ROOT r = f32[8] reduce(x, z), dimensions={1}, to_apply=add }`,
	"tree two passes": `HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { x = f32[70000] parameter(0)  z = f32[] constant(0)  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add }`,
	"tree variadic two passes": `HloModule m
r { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
    s = f32[] add(a, c)  t = s32[] maximum(b, d)  ROOT u = (f32[], s32[]) tuple(s, t) }
ENTRY e { x = f32[2,40000] parameter(0)  y = s32[2,40000] parameter(1)  z = f32[] constant(0)  w = s32[] constant(0)
  ROOT o = (f32[2], s32[2]) reduce(x, y, z, w), dimensions={1}, to_apply=r }`,
	"gemm": `HloModule m
ENTRY e { a = f32[64,64] parameter(0)  b = f32[64,64] parameter(1)
  ROOT d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }`,
	"sort": `HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e { x = f32[3,37] parameter(0)  ROOT s = f32[3,37] sort(x), dimensions={1}, to_apply=lt }`,
	"empty sort": `HloModule m
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e { x = f32[0] parameter(0)  ROOT s = f32[0] sort(x), dimensions={0}, to_apply=lt }`,
	"dus in place": `HloModule m
ENTRY e { x = f32[16] parameter(0)  u = f32[4] parameter(1)  i = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(x, u, i) }`,
	"dus not in place": `HloModule m
ENTRY e { x = f32[16] parameter(0)  i = s32[] parameter(1)  u = f32[4] slice(x), slice={[0:4]}
  ROOT d = f32[16] dynamic-update-slice(x, u, i) }`,
	"scatter in place": `HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { x = f32[8] parameter(0)  i = s32[3,1] parameter(1)  u = f32[3] parameter(2)
  ROOT s = f32[8] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add }`,
	"empty elementwise": `HloModule m
ENTRY e { x = f32[0,3] parameter(0)  ROOT n = f32[0,3] negate(x) }`,
	"elementwise in place": `HloModule m
ENTRY e { x = f32[9] parameter(0)  y = f32[9] parameter(1)  ROOT n = f32[9] add(x, y) }`,
}

// BenchmarkFactsVsLower: the query's cost against emission over every op sample
// and strategy case (lavapipe's target); metric facts/lower is the time ratio.
func BenchmarkFactsVsLower(b *testing.B) {
	var cs []*hlo.Computation
	t := &testing.T{}
	for _, op := range hlo.AllOpcodes() {
		if f := sampleFor(op); f != nil && !runtimeOps[op] {
			cs = append(cs, f(t))
		}
	}
	for _, text := range factCases {
		m, err := hlo.ParseModule(text)
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs, m.Entry)
	}
	target := LavapipeTarget()
	measure := func(f func(*hlo.Computation, Target) (*Program, error)) time.Duration {
		start := time.Now()
		for range b.N {
			for _, c := range cs {
				f(c, target) //nolint:errcheck // the cost is measured; agreement is TestFactsAgreeWithLower's
			}
		}
		return time.Since(start)
	}
	lower := measure(Lower)
	facts := measure(Facts)
	b.ReportMetric(float64(lower.Nanoseconds())/float64(b.N), "lower-ns/op-set")
	b.ReportMetric(float64(facts.Nanoseconds())/float64(b.N), "facts-ns/op-set")
	b.ReportMetric(float64(facts)/float64(lower), "facts/lower")
}
