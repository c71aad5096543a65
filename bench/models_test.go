package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device/devicetest"
	"github.com/vkxla/vkxla/hlo"
)

// TestModelProgramsMatchCPU: every model program's small variant runs on the
// device within the tolerance table of cpuref (what the suite checks before it
// times a program).
func TestModelProgramsMatchCPU(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	for _, p := range ModelPrograms() {
		t.Run(p.Name, func(t *testing.T) { require.NoError(t, CheckModel(context.Background(), rt, p)) })
	}
}

// TestModelProgramFLOPs: the full sizes' work, worked out from the layers.
func TestModelProgramFLOPs(t *testing.T) {
	want := map[string]float64{
		// issue 12's count, layer by layer in hlo/nn's TestMobileNetSSDSize.
		"MobileNet-SSD 300×300 bf16": 2474258816,
		// 1×1 256→64, 3×3 64→64, 1×1 64→256 over 56×56.
		"ResNet-50 block 56×56×256": 2 * 56 * 56 * (256*64 + 9*64*64 + 64*256),
		// q, k, v, o projections; scores and context per head; the MLP's two layers.
		"BERT-base layer, forward": 4*2*128*768*768 + 2*(2*12*128*128*64) + 2*(2*128*768*3072),
	}
	for _, p := range ModelPrograms() {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		m, ins, err := p.Build(false)
		require.NoError(t, err, p.Name)
		require.Len(t, ins, len(m.Entry.Params), p.Name)
		require.Equal(t, w, FLOPs(m), p.Name)
	}
}

func TestFLOPsAndChecks(t *testing.T) {
	b := hlo.NewBuilder("two")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 1, 5, 5, 2), "x")
	conv := b.Conv(x, b.Parameter(hlo.MakeShape(hlo.F32, 3, 3, 2, 4), "k"), hlo.MakeWindow([]int64{3, 3}, []int64{1, 1}),
		hlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int64{1, 2}, KernelInput: 2, KernelOutput: 3,
			KernelSpatial: []int64{0, 1}, OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int64{1, 2}}, 1, 1)
	dot := b.Dot(b.Parameter(hlo.MakeShape(hlo.F32, 3, 7), "a"), b.Parameter(hlo.MakeShape(hlo.F32, 7, 2), "c"))
	m, err := b.Build(b.Tuple(conv, dot))
	require.NoError(t, err)
	// conv: 3×3 outputs × 4 channels, 3·3·2 taps each; dot: 3×2 outputs, 7 terms.
	require.Equal(t, float64(2*(9*4*18)+2*(6*7)), FLOPs(m))

	ins := weightInputs(m, 1, nil)
	out, err := cpurefOutputs(m, ins)
	require.NoError(t, err)
	require.NoError(t, CheckAgainstCPU(m, ins, out))
	out[1].SetFloat64(5, out[1].Float64(5)+0.5)
	require.ErrorContains(t, CheckAgainstCPU(m, ins, out), "output 1")
	require.NoError(t, CheckFinite(out))
	out[0].SetFloat64(3, 1/zero)
	require.ErrorContains(t, CheckFinite(out), "output 0 element 3 is +Inf")
}

var zero float64

func cpurefOutputs(m *hlo.Module, in []*hlo.Literal) ([]*hlo.Literal, error) {
	out, err := cpuref.Eval(m, in...)
	if err != nil {
		return nil, err
	}
	return out.Leaves(), nil
}

func TestPairRatios(t *testing.T) {
	var prog, ref Stats
	// Rounds: the program takes 4, 2, 3 ms; the reference 1, 1, 2 ms.
	for i, d := range []time.Duration{4, 2, 3} {
		prog.Add(Sample{GPU: d * time.Millisecond})
		ref.Add(Sample{GPU: []time.Duration{1, 1, 2}[i] * time.Millisecond})
	}
	r := PairResult{Pair: Pair{ProgramWork: 2e6, ReferenceWork: 1e6}, Program: Measured{Stats: prog}, Reference: Measured{Stats: ref}}
	require.InDelta(t, 1.0, r.ProgramFigure(), 1e-12)   // 2e6 in 2 ms
	require.InDelta(t, 1.0, r.ReferenceFigure(), 1e-12) // 1e6 in 1 ms
	// Per round, reference time ÷ program time is 1/4, 1/2, 2/3: median 1/2,
	// times the work ratio 2 gives a share of 1.
	require.InDelta(t, 1.0, r.RoundShare(), 1e-12)
	require.InDelta(t, 2.0, r.RoundTimeRatio(), 1e-12)

	var out bytes.Buffer
	r.Name = "m"
	WriteModelTable(&out, []PairResult{r})
	require.Contains(t, out.String(), "| m | 0.002 | 0 | 0 | 0 | 2.000 | 1 | 1 | 100% |")
}

func TestModelPlot(t *testing.T) {
	var prog, ref Stats
	prog.Add(Sample{GPU: 10 * time.Millisecond})
	ref.Add(Sample{GPU: time.Millisecond})
	rs := []PairResult{
		{Pair: Pair{Name: "a & b", ProgramWork: 1, ReferenceWork: 1}, Program: Measured{Stats: prog}, Reference: Measured{Stats: ref}},
		{Pair: Pair{Name: "c", ProgramWork: 1, ReferenceWork: 1}, Program: Measured{Stats: ref}, Reference: Measured{Stats: ref}},
	}
	svg := string(ModelPlot("suite <test>", Bars(rs)))
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			require.ErrorContains(t, err, "EOF", svg)
			break
		}
	}
	require.Equal(t, 2, strings.Count(svg, `fill="#4a7bb7"`), "one bar per program")
	require.Contains(t, svg, ">10%<", "a: a tenth of the reference's rate")
	require.Contains(t, svg, ">100%<", "c: the reference's rate")
	require.Contains(t, svg, "a &amp; b")
	require.NotContains(t, svg, ">1000%<", "the axis ends at 100% when no program beats the sgemm")
	svg = string(ModelPlot("beats", []Bar{{Name: "x", Share: 1.1}}))
	require.Contains(t, svg, ">110%<")
	require.Contains(t, svg, ">1000%<", "the axis reaches past 110%")
}

// TestFullSuiteNames: at FullSuite the targets are named by issue 12's sizes (the
// names docs/results.md's tables carry).
func TestFullSuiteNames(t *testing.T) {
	var names []string
	for _, p := range TargetPairs(FullSuite) {
		names = append(names, p.Name)
	}
	for _, k := range KernelTargets(FullSuite) {
		names = append(names, k.Name)
	}
	require.Equal(t, []string{
		"dense conv 3×3 f32[1,38,38,256]→256", "dense conv 1×1 f32[1,38,38,256]→256", "depthwise conv 3×3 f32[1,38,38,256]",
		"softmax f32[4096,1024]", "layernorm f32[4096,1024]",
		"softmax f32[4096,1024]", "layernorm f32[4096,1024]", "MLP layer gelu(x·w + b), f32[256,1024]·[1024,1024]",
		"MobileNet block bf16[1,38,38,256] → 256", "Adam update of one f32[1024,1024] tensor",
	}, names)
}

// TestKernelTargetsBuild: the kernel counts' programs build (the suite runs
// them; at their sizes they are too slow for every test run).
func TestKernelTargetsBuild(t *testing.T) {
	for _, k := range KernelTargets(FullSuite) {
		_, err := k.Build()
		require.NoError(t, err, k.Name)
	}
}

// TestTopKernels: the kernels of a dot and its row sums come back, most GPU time
// first, all of them when asked for more than there are, each named by its root's
// op and shapes (whatever fusion makes of the two).
func TestTopKernels(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	require.NoError(t, err)
	defer func() { require.NoError(t, rt.Close()) }()
	p := ModelProgram{Name: "dot, reduce", Build: func(bool) (*hlo.Module, []*hlo.Literal, error) {
		b := hlo.NewBuilder("two")
		d := b.Dot(b.Parameter(hlo.MakeShape(hlo.F32, 64, 64), "a"), b.Parameter(hlo.MakeShape(hlo.F32, 64, 64), "w"))
		r := b.Reduce([]*hlo.Instruction{d}, []*hlo.Instruction{b.ScalarConstant(hlo.F32, 0)}, b.Reducer(hlo.OpAdd, hlo.F32), []int64{1})
		return built(b, b.Tuple(d, r), 1, nil)
	}}
	top, total, err := TopKernels(context.Background(), rt, p, 5)
	require.NoError(t, err)
	require.NotEmpty(t, top)
	var sum time.Duration
	for i, k := range top {
		sum += k.GPUTime
		require.Regexp(t, `^[a-z-]+ .*f32\[64(,64)?\]\(.*f32\[64,64\]`, k.Describe)
		if i > 0 {
			require.GreaterOrEqual(t, top[i-1].GPUTime, k.GPUTime, "most time first")
		}
	}
	require.Equal(t, total, sum, "all kernels listed when n exceeds their number")
}
