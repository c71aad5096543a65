package hlo_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// nestedCheckpoints is f(x, w) = ((x·w)² named "sq") + x·w with x·w computed in a
// dots-saveable region inside a save-nothing one: a region in a region, a dot and a
// named value.
func nestedCheckpoints(t *testing.T) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder("nested")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 2, 2), "x")
	w := b.Parameter(hlo.MakeShape(hlo.F32, 2, 2), "w")
	y := b.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
		xw := b.Checkpoint(hlo.DotsSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
			return b.Dot(a[0], a[1])
		}, a[0], a[1])
		sq := b.CheckpointName(b.Mul(xw, xw), "sq")
		return b.Add(sq, xw)
	}, x, w)
	m, err := b.Build(y)
	require.NoError(t, err)
	return m
}

// TestCheckpointIsItsBody: outside a gradient a region is its body and a name the
// identity. x = [[1,2],[3,4]], w = I·2: x·w = [[2,4],[6,8]], f = (x·w)² + x·w =
// [[6,20],[42,72]].
func TestCheckpointIsItsBody(t *testing.T) {
	m := nestedCheckpoints(t)
	x := hlo.MustFromSlice([]int64{2, 2}, []float32{1, 2, 3, 4})
	w := hlo.MustFromSlice([]int64{2, 2}, []float32{2, 0, 0, 2})
	got, err := cpuref.Eval(m, x, w)
	require.NoError(t, err)
	require.NoError(t, hlo.LiteralsEqual(got, hlo.MustFromSlice([]int64{2, 2}, []float32{6, 20, 42, 72})))
}

// TestCheckpointPrintsAndParses: the regions, policies and names survive the text
// form.
func TestCheckpointPrintsAndParses(t *testing.T) {
	m := nestedCheckpoints(t)
	text := m.String()
	require.Contains(t, text, `custom_call_target="vkxla.checkpoint"`)
	require.Contains(t, text, `backend_config={"policy":"dots_saveable"}`)
	require.Contains(t, text, `backend_config={"name":"sq"}`)
	back, err := hlo.ParseModule(text)
	require.NoError(t, err)
	require.Equal(t, text, back.String())
	var policies []string
	for _, c := range back.Computations {
		for _, in := range c.Instructions {
			if hlo.IsCustomCallTo(in, hlo.CheckpointTarget) {
				p, err := hlo.CheckpointPolicyOf(in)
				require.NoError(t, err)
				policies = append(policies, p.String())
			}
		}
	}
	require.ElementsMatch(t, []string{"nothing_saveable", "dots_saveable"}, policies)
}

// TestCheckpointPoliciesRoundTrip: every policy survives its backend_config.
func TestCheckpointPoliciesRoundTrip(t *testing.T) {
	for _, p := range []hlo.CheckpointPolicy{
		hlo.NothingSaveable(), hlo.EverythingSaveable(), hlo.DotsSaveable(), hlo.DotsWithNoBatchDimsSaveable(),
		hlo.SaveOnlyTheseNames("a"), hlo.SaveAnyNamesButThese("a", "b"), hlo.SaveAndOffloadOnlyTheseNames([]string{"a"}, nil),
		hlo.SaveFromBothPolicies(hlo.DotsSaveable(), hlo.SaveFromBothPolicies(hlo.SaveOnlyTheseNames("a"), hlo.EverythingSaveable())),
	} {
		b := hlo.NewBuilder("p")
		m, err := b.Build(b.Checkpoint(p, func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return a[0] },
			b.Parameter(hlo.MakeShape(hlo.F32, 2), "x")))
		require.NoError(t, err, "%v", p)
		back, err := hlo.ParseModule(m.String())
		require.NoError(t, err, "%v", p)
		got, err := hlo.CheckpointPolicyOf(back.Entry.Root)
		require.NoError(t, err, "%v", p)
		require.Equal(t, p.String(), got.String())
	}
}

// TestCheckpointPolicySaveable: each policy keeps what its name says.
func TestCheckpointPolicySaveable(t *testing.T) {
	b := hlo.NewBuilder("p")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 1, 2, 2, 1), "x")
	k := b.Parameter(hlo.MakeShape(hlo.F32, 1, 1, 1, 1), "k")
	m := b.Parameter(hlo.MakeShape(hlo.F32, 2, 2), "m")
	dot := b.Dot(m, m)
	batched := b.DotGeneral(m, m, hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{1}, RhsContracting: []int64{1}})
	conv := b.Conv(x, k, hlo.MakeWindow([]int64{1, 1}, nil), hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2},
		KernelInput: 2, KernelOutput: 3, KernelSpatial: []int64{0, 1},
		OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}, 1, 1)
	named := b.CheckpointName(m, "a")
	other := b.CheckpointName(m, "b")
	sum := b.Add(m, m)
	require.NoError(t, b.Err())
	cases := []struct {
		p    hlo.CheckpointPolicy
		save []*hlo.Instruction
	}{
		{hlo.CheckpointPolicy{}, nil},
		{hlo.NothingSaveable(), nil},
		{hlo.DotsSaveable(), []*hlo.Instruction{dot, batched, conv}},
		{hlo.SaveOnlyTheseNames("a", "c"), []*hlo.Instruction{named}},
		{hlo.EverythingSaveable(), []*hlo.Instruction{dot, batched, conv, named, other, sum}},
		{hlo.DotsWithNoBatchDimsSaveable(), []*hlo.Instruction{dot}},
		{hlo.SaveAnyNamesButThese("a"), []*hlo.Instruction{other}},
		{hlo.SaveFromBothPolicies(hlo.DotsSaveable(), hlo.SaveOnlyTheseNames("b")), []*hlo.Instruction{dot, batched, conv, other}},
		{hlo.SaveAndOffloadOnlyTheseNames([]string{"a"}, nil), []*hlo.Instruction{named}},
	}
	for _, c := range cases {
		for _, in := range []*hlo.Instruction{dot, batched, conv, named, other, sum, m} {
			want := false
			for _, s := range c.save {
				want = want || s == in
			}
			require.Equal(t, want, c.p.Saveable(in), "%v saves %s", c.p, in.Name)
		}
	}
	name, ok := hlo.CheckpointNameOf(named)
	require.True(t, ok)
	require.Equal(t, "a", name)
	_, ok = hlo.CheckpointNameOf(sum)
	require.False(t, ok)
}

// TestCheckpointErrors: bad regions and names are builder errors, bad
// configurations expansion errors, each saying what was wrong.
func TestCheckpointErrors(t *testing.T) {
	s := hlo.MakeShape(hlo.F32, 2)
	fails := map[string]func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction{
		"nil body function": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Checkpoint(hlo.NothingSaveable(), nil, x)
		},
		"checkpoint body": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction {
				return b.Add(a[0], b.Parameter(hlo.MakeShape(hlo.F32, 3), "wrong")) // shapes differ
			}, x)
		},
		"operand 0 is nil": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction {
			return b.Checkpoint(hlo.NothingSaveable(), func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return a[0] }, nil)
		},
		"empty name": func(b *hlo.Builder, x *hlo.Instruction) *hlo.Instruction { return b.CheckpointName(x, "") },
	}
	for want, f := range fails {
		b := hlo.NewBuilder("bad")
		require.Nil(t, f(b, b.Parameter(s, "x")), want)
		require.ErrorContains(t, b.Err(), want)
	}
	for _, c := range []struct{ text, want string }{
		{`custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r}, backend_config={"policy":"all"}`, "unknown policy all"},
		{`custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r}, backend_config={"policy":"save_only_these_names"}`, `needs "names"`},
		{`custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r, %r}, backend_config={"policy":"nothing_saveable"}`, "calls one computation"},
		{`custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r}, backend_config={"policy":"save_from_both_policies","policies":[{"policy":"dots_saveable"}]}`, "two policies, got 1"},
		{`custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r}, backend_config={"policy":"save_from_both_policies","policies":[{"policy":"dots_saveable"},{"policy":"x"}]}`, "policy 1: unknown policy x"},
		{`custom-call(x), custom_call_target="vkxla.checkpoint_name"`, `needs {"name"`},
	} {
		m, err := hlo.ParseModule("HloModule bad\n%r (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2] parameter(0)\n}\n" +
			"ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] " + c.text + "\n}")
		require.NoError(t, err, c.text)
		_, err = cpuref.Eval(m, hlo.MustFromSlice([]int64{2}, []float32{1, 2}))
		require.ErrorContains(t, err, c.want, c.text)
	}
}

// TestCheckpointOffloadPolicy: save_and_offload_only_these_names saves its save
// names on the device and its offload names in host memory (Saveable both,
// Offloads the latter only; a name in both lists stays on the device); under
// save_from_both_policies a value goes to the host only when no policy keeps it
// on the device. The policy round-trips through its backend_config, built or
// parsed, with names or offload alone.
func TestCheckpointOffloadPolicy(t *testing.T) {
	b := hlo.NewBuilder("offload")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 2, 2), "x")
	a, h, both := b.CheckpointName(x, "a"), b.CheckpointName(x, "h"), b.CheckpointName(x, "ah")
	dot := b.Dot(x, x)
	require.NoError(t, b.Err())
	p := hlo.SaveAndOffloadOnlyTheseNames([]string{"a", "ah"}, []string{"h", "ah"})
	for _, c := range []struct {
		in             *hlo.Instruction
		save, offloads bool
	}{{a, true, false}, {h, true, true}, {both, true, false}, {dot, false, false}, {x, false, false}} {
		require.Equal(t, c.save, p.Saveable(c.in), "%v saves %s", p, c.in.Name)
		require.Equal(t, c.offloads, p.Offloads(c.in), "%v offloads %s", p, c.in.Name)
	}
	either := hlo.SaveFromBothPolicies(hlo.SaveOnlyTheseNames("a"), hlo.SaveAndOffloadOnlyTheseNames(nil, []string{"a", "h"}))
	require.False(t, either.Offloads(a), "a is saved on the device by the first policy")
	require.True(t, either.Offloads(h))
	require.True(t, either.Saveable(h))

	dots := hlo.OffloadDotWithNoBatchDims()
	batched := b.DotGeneral(b.Reshape(x, 1, 2, 2), b.Reshape(x, 1, 2, 2), hlo.DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}})
	require.NoError(t, b.Err())
	for _, c := range []struct {
		in    *hlo.Instruction
		keeps bool
	}{{dot, true}, {batched, false}, {a, false}, {x, false}} {
		require.Equal(t, c.keeps, dots.Saveable(c.in), "%v saves %s", dots, c.in.Name)
		require.Equal(t, c.keeps, dots.Offloads(c.in), "%v offloads %s", dots, c.in.Name)
	}

	id := func(b *hlo.Builder, a []*hlo.Instruction) *hlo.Instruction { return a[0] }
	for _, p := range []hlo.CheckpointPolicy{p, hlo.SaveAndOffloadOnlyTheseNames(nil, []string{"h"}), either, dots} {
		b := hlo.NewBuilder("offload")
		call := b.Checkpoint(p, id, b.Parameter(hlo.MakeShape(hlo.F32, 2), "x"))
		require.NoError(t, b.Err(), "%v", p)
		got, err := hlo.CheckpointPolicyOf(call)
		require.NoError(t, err)
		require.Equal(t, p.String(), got.String())
	}
	m, err := hlo.ParseModule("HloModule offload\n%r (p: f32[2]) -> f32[2] {\n  ROOT %p = f32[2] parameter(0)\n}\n" +
		"ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] custom-call(x), custom_call_target=\"vkxla.checkpoint\", " +
		"called_computations={%r}, backend_config={\"policy\":\"save_and_offload_only_these_names\",\"offload\":[\"h\"]}\n}")
	require.NoError(t, err)
	got, err := hlo.CheckpointPolicyOf(m.Entry.Root)
	require.NoError(t, err)
	require.True(t, got.Offloads(h))
}

// TestCheckpointRegionOperandShapes: a region whose parameter does not match its
// operand (possible in text) is refused, not evaluated over the wrong shape.
func TestCheckpointRegionOperandShapes(t *testing.T) {
	m, err := hlo.ParseModule(`HloModule bad
%r (p: f32[2]) -> f32[2] {
  ROOT %p = f32[2] parameter(0)
}
ENTRY e {
  x = f32[3] parameter(0)
  ROOT y = f32[2] custom-call(x), custom_call_target="vkxla.checkpoint", called_computations={%r}, backend_config={"policy":"nothing_saveable"}
}`)
	require.NoError(t, err)
	_, err = cpuref.Eval(m, hlo.MustFromSlice([]int64{3}, []float32{1, 2, 3}))
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "parameter 0 is f32[2], operand 0 is f32[3]"), err.Error())
}
