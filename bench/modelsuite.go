package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn"
)

// SuiteGemm is the size of the square sgemm every model is measured against in
// the same rounds: the device's GEMM rate, the ceiling of GEMM-bound programs.
const SuiteGemm = 1024

// SuiteSizes are the sizes the model suite runs at. FullSuite is issue 12's;
// SmokeSuite is the least that still builds, runs and checks every program,
// target and reference (the command's -smoke, which its test runs in seconds).
type SuiteSizes struct {
	// Small runs the model programs' small variants, each checked against cpuref.
	Small bool
	// Gemm is the side of the square sgemm the models are measured against.
	Gemm int
	// Image is height, width and channels of the convolution targets' NHWC input
	// (batch 1; as many output channels as input).
	Image [3]int64
	// Rows is the softmax and layernorm input: rows × row length.
	Rows [2]int64
	// MLP is batch, inputs and outputs of the kernel-count MLP layer.
	MLP [3]int64
	// Adam is the side of the kernel-count Adam update's square tensor.
	Adam int64
}

// FullSuite is issue 12's sizes; SmokeSuite every piece once at small sizes.
var (
	FullSuite  = SuiteSizes{Gemm: SuiteGemm, Image: [3]int64{38, 38, 256}, Rows: [2]int64{4096, 1024}, MLP: [3]int64{256, 1024, 1024}, Adam: 1024}
	SmokeSuite = SuiteSizes{Small: true, Gemm: 32, Image: [3]int64{6, 6, 16}, Rows: [2]int64{8, 64}, MLP: [3]int64{8, 32, 32}, Adam: 32}
)

// ModelVariant is the program compiled by vkxla, at its full size unless small;
// its first run's outputs are checked against cpuref when cpu is set (minutes for
// the larger programs at full size), else for being finite (the small sizes are
// checked against cpuref by CheckModel).
// Compile options (passes switched off, say) apply to it.
func ModelVariant(p ModelProgram, small, cpu bool, opts ...vkxla.CompileOption) Variant {
	return checkedExecutable("vkxla", func() (*hlo.Module, []*hlo.Literal, error) { return p.Build(small) }, cpu, opts...)
}

// checkedExecutable compiles the module build returns and runs it on the inputs
// build returns with it; the first run's outputs are checked against cpuref when
// cpu is set, else for being finite.
func checkedExecutable(name string, build func() (*hlo.Module, []*hlo.Literal, error), cpu bool, opts ...vkxla.CompileOption) Variant {
	var mod *hlo.Module
	var ins []*hlo.Literal
	withOpts := func(*vkxla.Runtime, *hlo.Module) ([]vkxla.CompileOption, error) { return opts, nil }
	return ExecutableWith(name, withOpts, func() (m *hlo.Module, err error) {
		mod, ins, err = build()
		return mod, err
	}, func() []*hlo.Literal { return ins }, func(in, out []*hlo.Literal) error {
		if cpu {
			return CheckAgainstCPU(mod, in, out)
		}
		return CheckFinite(out)
	})
}

// ModelPair is the program against the same run's sgemm s.Gemm³, at s's sizes
// (small ones always checked against cpuref, full ones when full is set); opts
// apply to the program (the suite with and without its simplification passes,
// say).
func ModelPair(p ModelProgram, s SuiteSizes, full bool, opts ...vkxla.CompileOption) (Pair, error) {
	m, _, err := p.Build(s.Small)
	if err != nil {
		return Pair{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	n, name := s.Gemm, p.Name
	if s.Small {
		name += " (small variant)"
	}
	return Pair{Name: name, Unit: "GFLOP/s", Program: ModelVariant(p, s.Small, full || s.Small, opts...), ProgramWork: FLOPs(m),
		Reference: GemmExecutable(fmt.Sprintf("sgemm %d³", n), n, n, n), ReferenceWork: 2 * float64(n) * float64(n) * float64(n)}, nil
}

// CheckModel runs the program's small variant on rt and compares it with cpuref.
func CheckModel(ctx context.Context, rt *vkxla.Runtime, p ModelProgram) error {
	m, in, err := p.Build(true)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	exe, err := rt.Compile(ctx, m)
	if err != nil {
		return fmt.Errorf("%s (small): %w", p.Name, err)
	}
	out, err := exe.Run(ctx, in...)
	if err == nil {
		err = CheckAgainstCPU(m, in, out)
	}
	if err = errors.Join(err, exe.Close()); err != nil {
		return fmt.Errorf("%s (small): %w", p.Name, err)
	}
	return nil
}

// CheckFinite reports the first float output element that is NaN or infinite.
func CheckFinite(out []*hlo.Literal) error {
	for i, o := range out {
		if !o.DType().IsFloat() {
			continue
		}
		for j := range o.NumElements() {
			if v := o.Float64(j); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("output %d element %d is %v", i, j, v)
			}
		}
	}
	return nil
}

// WriteModelTable writes the model suite's markdown table: per program its
// GFLOP, kernels per run, peak and lower-bound device bytes, best GPU time, GFLOP/s
// from it next to the same run's sgemm GFLOP/s, and the median over the rounds of
// the ratio of the two.
func WriteModelTable(out io.Writer, rs []PairResult) {
	fmt.Fprintln(out, "| program | GFLOP | kernels | peak bytes | lower bound | best GPU ms | GFLOP/s | sgemm GFLOP/s (same run) | % of sgemm (round median) |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		fmt.Fprintf(out, "| %s | %s | %d | %d | %d | %s | %s | %s | %s%% |\n", r.Name, num(r.ProgramWork/1e9),
			r.Program.Dispatches, r.Program.PeakBytes, r.Program.LowerBoundBytes, ms(r.Program.Stats.Best()),
			num(r.ProgramFigure()), num(r.ReferenceFigure()), num(100*r.RoundShare()))
	}
}

// Target is one of issue 12's speed targets as a pair: its measure is the
// program's figure as a % of the reference's (share) or the program's time as a
// multiple of the reference's (time).
type Target struct {
	Pair
	// Goal says what meets the target, as the issue states it.
	Goal string
	// Time reports the time ratio (× reference) instead of the figure share (%).
	Time bool
}

// TargetPairs are issue 12's convolution and normalisation targets at s's sizes
// (FullSuite: the issue's): dense 3×3 and 1×1 convolutions of f32[1,38,38,256] →
// 256 channels against the GEMM of their im2col shape (M = 38·38, N = 256, K =
// 9·256 or 256), a depthwise 3×3 against an elementwise copy's bytes/s (input,
// output and filter counted once), and softmax and layernorm over the last dim of
// f32[4096,1024] against a copy of the tensor. The copy is an elementwise negate
// compiled by vkxla: one kernel that reads and writes each element once.
func TargetPairs(s SuiteSizes) []Target {
	hw, c := s.Image[0], s.Image[2]
	img := []int64{1, s.Image[0], s.Image[1], c}
	imgName := shapeName(img...)
	convPair := func(k int64) Target {
		build := func() (*hlo.Module, error) {
			b := hlo.NewBuilder("conv")
			x := b.Parameter(hlo.MakeShape(hlo.F32, img...), "x")
			return b.Build(nn.Conv2D(b, x, b.Parameter(hlo.MakeShape(hlo.F32, k, k, c, c), "kernel"), 1, nn.Same))
		}
		m, n, kk := int(hw*s.Image[1]), int(c), int(k*k*c)
		work := 2 * float64(m) * float64(n) * float64(kk)
		return Target{Pair: Pair{Name: fmt.Sprintf("dense conv %d×%d f32%s→%d", k, k, imgName, c), Unit: "GFLOP/s",
			Program: exeVariant("vkxla", build), ProgramWork: work,
			Reference: GemmExecutable(fmt.Sprintf("sgemm %d×%d×%d", m, n, kk), m, n, kk), ReferenceWork: work},
			Goal: "≥ 50% of the GEMM's GFLOP/s"}
	}
	depthwise := func() (*hlo.Module, error) {
		b := hlo.NewBuilder("depthwise")
		x := b.Parameter(hlo.MakeShape(hlo.F32, img...), "x")
		return b.Build(nn.DepthwiseConv2D(b, x, b.Parameter(hlo.MakeShape(hlo.F32, 3, 3, 1, c), "kernel"), 1, nn.Same))
	}
	elems := float64(hw * s.Image[1] * c)
	rows := s.Rows[:]
	rowsName := shapeName(rows...)
	rowBytes := 8 * float64(rows[0]*rows[1])
	softmax := func() (*hlo.Module, error) {
		b := hlo.NewBuilder("softmax")
		return b.Build(nn.Softmax(b, b.Parameter(hlo.MakeShape(hlo.F32, rows...), "x")))
	}
	layernorm := func() (*hlo.Module, error) {
		b := hlo.NewBuilder("layernorm")
		x := b.Parameter(hlo.MakeShape(hlo.F32, rows...), "x")
		scale, bias := b.Parameter(hlo.MakeShape(hlo.F32, rows[1]), "scale"), b.Parameter(hlo.MakeShape(hlo.F32, rows[1]), "bias")
		return b.Build(nn.LayerNorm(b, x, scale, bias, 1e-5))
	}
	return []Target{
		convPair(3),
		convPair(1),
		{Pair: Pair{Name: "depthwise conv 3×3 f32" + imgName, Unit: "GB/s", Program: exeVariant("vkxla", depthwise),
			ProgramWork: 4 * (2*elems + 9*float64(c)), Reference: copyVariant(img), ReferenceWork: 8 * elems},
			Goal: "≥ 50% of a copy's GB/s"},
		{Pair: Pair{Name: "softmax f32" + rowsName, Unit: "GB/s", Program: exeVariant("vkxla", softmax), ProgramWork: rowBytes,
			Reference: copyVariant(rows), ReferenceWork: rowBytes}, Goal: "≤ 3× a copy's time", Time: true},
		{Pair: Pair{Name: "layernorm f32" + rowsName, Unit: "GB/s", Program: exeVariant("vkxla", layernorm), ProgramWork: rowBytes,
			Reference: copyVariant(rows), ReferenceWork: rowBytes}, Goal: "≤ 3× a copy's time", Time: true},
	}
}

// shapeName is dims as a shape prints them: [1,38,38,256].
func shapeName(dims ...int64) string {
	return strings.TrimPrefix(hlo.MakeShape(hlo.F32, dims...).String(), "f32")
}

// exeVariant compiles build's module, runs it on weightInputs and checks the
// first run's outputs against cpuref.
func exeVariant(name string, build func() (*hlo.Module, error)) Variant {
	return checkedExecutable(name, func() (*hlo.Module, []*hlo.Literal, error) {
		m, err := build()
		if err != nil {
			return nil, nil, err
		}
		return m, weightInputs(m, 9, nil), nil
	}, true)
}

// copyVariant is an elementwise copy of an f32 tensor of the given dims (negate:
// one kernel, each element read and written once).
func copyVariant(dims []int64) Variant {
	return exeVariant("copy (negate)", func() (*hlo.Module, error) {
		b := hlo.NewBuilder("copy")
		return b.Build(b.Negate(b.Parameter(hlo.MakeShape(hlo.F32, dims...), "x")))
	})
}

// WriteTargetTable writes the targets' markdown table.
func WriteTargetTable(out io.Writer, rs []TargetResult) {
	fmt.Fprintln(out, "| target (issue 12) | program | kernels | figure | reference | figure | measured (round median) | goal |")
	fmt.Fprintln(out, "|---|---|---:|---:|---|---:|---:|---|")
	for _, r := range rs {
		measured := fmt.Sprintf("%s%%", num(100*r.RoundShare()))
		if r.Time {
			measured = fmt.Sprintf("%s× the time", num(r.RoundTimeRatio()))
		}
		fmt.Fprintf(out, "| %s | %s | %d | %s %s | %s | %s %s | %s | %s |\n", r.Name, r.Program.Name, r.Program.Dispatches,
			num(r.ProgramFigure()), r.Unit, r.Reference.Name, num(r.ReferenceFigure()), r.Unit, measured, r.Goal)
	}
}

// TargetResult is a measured target.
type TargetResult struct {
	PairResult
	Goal string
	Time bool
}

// MeasureTarget measures a target's pair.
func MeasureTarget(ctx context.Context, rt *vkxla.Runtime, t Target, reps int) (TargetResult, error) {
	r, err := MeasurePair(ctx, rt, t.Pair, reps)
	return TargetResult{PairResult: r, Goal: t.Goal, Time: t.Time}, err
}

// KernelTarget is a reference program of issue 12 whose kernels per run have a
// target; the suite reports the count, and does not assert it.
type KernelTarget struct {
	Name  string
	Goal  string // "≤ 2", "1", "2–3"
	Build func() (*hlo.Module, error)
}

// KernelTargets are issue 12's kernel-count targets at s's sizes (FullSuite: the
// issue's): softmax and layernorm over f32[4096,1024], an MLP layer (dot + bias +
// GELU, f32[256,1024]·[1024,1024]), a MobileNet separable block as an inference
// export has it (bf16 [1,38,38,256] → 256, batch norms folded into biases) and
// one Adam update of an f32[1024,1024] tensor.
func KernelTargets(s SuiteSizes) []KernelTarget {
	rows := s.Rows[:]
	rowsName := shapeName(rows...)
	batch, in, out := s.MLP[0], s.MLP[1], s.MLP[2]
	img := []int64{1, s.Image[0], s.Image[1], s.Image[2]}
	param := func(b *hlo.Builder, dt hlo.DType, dims ...int64) *hlo.Instruction {
		return b.Parameter(hlo.MakeShape(dt, dims...), "p")
	}
	return []KernelTarget{
		{"softmax f32" + rowsName, "≤ 2", func() (*hlo.Module, error) {
			b := hlo.NewBuilder("softmax")
			return b.Build(nn.Softmax(b, param(b, hlo.F32, rows...)))
		}},
		{"layernorm f32" + rowsName, "≤ 2", func() (*hlo.Module, error) {
			b := hlo.NewBuilder("layernorm")
			return b.Build(nn.LayerNorm(b, param(b, hlo.F32, rows...), param(b, hlo.F32, rows[1]), param(b, hlo.F32, rows[1]), 1e-5))
		}},
		{fmt.Sprintf("MLP layer gelu(x·w + b), f32%s·%s", shapeName(batch, in), shapeName(in, out)), "1", func() (*hlo.Module, error) {
			b := hlo.NewBuilder("mlp_layer")
			return b.Build(nn.GELU(b, nn.Dense(b, param(b, hlo.F32, batch, in), param(b, hlo.F32, in, out), param(b, hlo.F32, out))))
		}},
		{fmt.Sprintf("MobileNet block bf16%s → %d", shapeName(img...), img[3]), "2–3", func() (*hlo.Module, error) {
			b := hlo.NewBuilder("mobilenet_block")
			return b.Build(nn.SeparableBlock(b, param(b, hlo.BF16, img...), paramWeights(b, hlo.BF16), "block", 1, img[3]))
		}},
		{fmt.Sprintf("Adam update of one f32%s tensor", shapeName(s.Adam, s.Adam)), "1", func() (*hlo.Module, error) {
			b := hlo.NewBuilder("adam")
			n := s.Adam
			// weightInputs gives the second moment ("…variance") positive values.
			v := b.Parameter(hlo.MakeShape(hlo.F32, n, n), "second_moment_variance")
			p, m, v2 := nn.Adam(b, param(b, hlo.F32, n, n), param(b, hlo.F32, n, n), param(b, hlo.F32, n, n),
				v, b.ScalarConstant(hlo.F32, 3), nn.DefaultAdam)
			return b.Build(b.Tuple(p, m, v2))
		}},
	}
}

// KernelCount compiles the target's program on rt, runs it once (its outputs
// checked against cpuref) and returns the kernels dispatched per run.
func KernelCount(ctx context.Context, rt *vkxla.Runtime, t KernelTarget) (n int, err error) {
	r, err := exeVariant(t.Name, t.Build).New(ctx, rt)
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	s, err := r.Run(ctx)
	return s.Dispatches, err
}

// WriteKernelTable writes the kernel-count targets and the counts measured.
func WriteKernelTable(out io.Writer, ts []KernelTarget, counts []int) {
	fmt.Fprintln(out, "| reference program | kernels per run | target (issue 12) |")
	fmt.Fprintln(out, "|---|---:|---|")
	for i, t := range ts {
		fmt.Fprintf(out, "| %s | %d | %s |\n", t.Name, counts[i], t.Goal)
	}
}

// HotKernel is one kernel of a profile: its root instruction as the optimized
// module prints it (op, shape, operand shapes) and its GPU time.
type HotKernel struct {
	vkxla.KernelTime
	Describe string
}

// TopKernels compiles the program at its full size on rt, runs it twice and
// returns the second run's n kernels of most GPU time, most first, and its total.
func TopKernels(ctx context.Context, rt *vkxla.Runtime, p ModelProgram, n int) (top []HotKernel, total time.Duration, err error) {
	m, in, err := p.Build(false)
	if err != nil {
		return nil, 0, err
	}
	exe, err := rt.Compile(ctx, m)
	if err != nil {
		return nil, 0, err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	// The profile is of the second run: the first pays one-time costs (the
	// driver's first touch of every buffer and pipeline) that fall on whichever
	// kernel comes first.
	for range 2 {
		if _, err := exe.Run(ctx, in...); err != nil {
			return nil, 0, err
		}
	}
	prof, err := exe.Profile()
	if err != nil {
		return nil, 0, err
	}
	ks := slices.Clone(prof.Kernels)
	slices.SortFunc(ks, func(a, b vkxla.KernelTime) int { return cmp.Compare(b.GPUTime, a.GPUTime) })
	byName := map[string]*hlo.Instruction{}
	for _, c := range exe.OptimizedModule().Computations {
		for _, in := range c.Instructions {
			byName[in.Name] = in
		}
	}
	for _, k := range ks[:min(n, len(ks))] {
		top = append(top, HotKernel{KernelTime: k, Describe: describe(byName[k.Instruction])})
	}
	return top, prof.Total(), nil
}

// describe is "op shape(operand shapes)" of an instruction ("" if nil).
func describe(in *hlo.Instruction) string {
	if in == nil {
		return ""
	}
	ops := make([]string, len(in.Operands))
	for i, o := range in.Operands {
		ops[i] = o.Shape.String()
	}
	return fmt.Sprintf("%s %s(%s)", in.Op, in.Shape, strings.Join(ops, ", "))
}
