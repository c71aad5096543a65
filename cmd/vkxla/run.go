package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
)

// runModule runs one module on the device and, unless -reference none, on cpuref,
// and prints both results, whether they agree within the program's tolerance, the
// memory plan, the kernel count, the per-kernel GPU times and the run's times, each
// named for what it includes, with a progress line per stage (a large model takes
// a while). The -timeout bounds cpuref, the compile and the GPU runs.
func runModule(out io.Writer, name, text string, rf runFlags) error {
	_, err := runAndReport(out, name, text, rf)
	return err
}

// runRngSeed seeds the RNG state of rng draws on both sides, so that they agree.
const runRngSeed = 0

// runReport is what one `vkxla run` computed and measured.
type runReport struct {
	got  []*hlo.Literal // the first run's outputs (its RNG seeded as cpuref's)
	want []*hlo.Literal // cpuref's outputs; nil with -reference none
	// prof is the per-kernel GPU time of the last run: a warm one where there was one.
	prof  vkxla.Profile
	times runTimes
}

// runTimes keep the one-time costs (compile, the first run) apart from the
// program's time, which is the warm runs'.
type runTimes struct {
	cpuref, compile time.Duration
	// The first run pays one-time costs later runs do not: on lavapipe the first
	// SSD-MobileNet run took 15.8 s, a warm one 0.09 s (issue 17).
	firstRun, firstRunGPU time.Duration
	// Each warm run's wall time (Run: uploads, dispatches, downloads) and its
	// kernels' total GPU time.
	warm, warmGPU []time.Duration
	capped        time.Duration // the warm runs stopped after this budget (no -runs)
}

// Without -runs, vkxla run times defaultWarmRuns warm runs, or fewer (at least
// one) once they have taken warmRunsBudget together: a large model's runs are long.
const (
	defaultWarmRuns = 5
	warmRunsBudget  = 10 * time.Second
)

// runAndReport is runModule, returning what it printed as figures.
func runAndReport(out io.Writer, name, text string, rf runFlags) (r runReport, err error) {
	p := progress{out: out}
	m, err := p.parse(name, text)
	if err != nil {
		return r, err
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if rf.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, rf.timeout)
	}
	defer cancel()
	defer func() { err = explainLimit(err, rf.timeout) }()
	inputs, err := rf.inputs.inputs(m, rf.limits)
	if err != nil {
		return r, err
	}
	if rf.reference == referenceCPU {
		done := p.start("cpuref")
		want, _, err := rf.limits.EvalWithRngState(ctx, m, hlo.RngSeedState(runRngSeed), inputs...)
		if err != nil {
			return r, err // cpuref's errors say "cpuref: …"
		}
		r.want, r.times.cpuref = want.Leaves(), done()
	}
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(rf.validation))
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, rt.Close()) }() // validation messages fail the run
	done := p.start("compile")
	exe, err := rt.Compile(ctx, m, rf.compileOpts...)
	if err != nil {
		return r, err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	r.times.compile = done()
	if err := r.timeRuns(ctx, p, exe, inputs, rf); err != nil {
		return r, err
	}
	describe(out, name, m, rt, exe, rf, strings.Contains(text, "{...}"))
	err = r.print(out, m)
	if rf.check {
		opt := exe.OptimizedModule()
		if len(opt.Entry.Params) > len(inputs) { // the RNG state parameter (docs/runtime.md)
			s := hlo.RngSeedState(runRngSeed)
			inputs = append(inputs, hlo.MustFromSlice([]int64{2}, s[:]))
		}
		err = errors.Join(err, newChecker(ctx, out, rt, rf.limits).kernels(opt, inputs))
	}
	return r, err
}

// timeRuns runs the executable once, seeded as cpuref was (its outputs are the
// ones compared), then rf.warmRuns more times for the program's time.
func (r *runReport) timeRuns(ctx context.Context, p progress, exe *vkxla.Executable, inputs []*hlo.Literal, rf runFlags) (err error) {
	if err := exe.SeedRng(runRngSeed); err != nil {
		return err
	}
	done := p.start("first run")
	if r.got, err = exe.Run(ctx, inputs...); err != nil {
		return err
	}
	r.times.firstRun = done()
	if r.prof, err = exe.Profile(); err != nil {
		return err
	}
	r.times.firstRunGPU = r.prof.Total()
	if rf.warmRuns == 0 {
		return nil
	}
	done = p.start("warm runs")
	defer done()
	var spent time.Duration
	for len(r.times.warm) < rf.warmRuns {
		start := time.Now()
		if _, err := exe.Run(ctx, inputs...); err != nil {
			return err
		}
		took := time.Since(start)
		if r.prof, err = exe.Profile(); err != nil {
			return err
		}
		r.times.warm, r.times.warmGPU = append(r.times.warm, took), append(r.times.warmGPU, r.prof.Total())
		if spent += took; rf.warmBudget > 0 && spent >= rf.warmBudget && len(r.times.warm) < rf.warmRuns {
			r.times.capped = rf.warmBudget
			break
		}
	}
	return nil
}

// describe prints the module, the device, the plan and what the inputs were.
func describe(out io.Writer, name string, m *hlo.Module, rt *vkxla.Runtime, exe *vkxla.Executable, rf runFlags, elided bool) {
	fmt.Fprintf(out, "module %s (%s)\ndevice %v (validation layer %s)\n%d kernels; %v\n", m.Name, name, rt.Device(),
		onOff(rf.validation), kernelCount(exe.OptimizedModule()), exe.MemoryStats())
	live := exe.LiveAtPeak()
	fmt.Fprintf(out, "live at the peak (%d buffers):\n", len(live))
	for _, b := range live[:min(5, len(live))] {
		fmt.Fprintf(out, "  %v\n", b)
	}
	fmt.Fprintf(out, "inputs: %v\n", rf.inputs)
	if elided {
		fmt.Fprintln(out, "note: the module elides constants ({...}); they hold the parser's seeded pseudo-random values, not the originals")
	}
	fmt.Fprintln(out)
}

// kernelCount counts the entry instructions that run on the device.
func kernelCount(opt *hlo.Module) int {
	n := 0
	for _, in := range opt.Entry.Instructions {
		if in.Op != hlo.OpParameter && runsOnDevice(in) {
			n++
		}
	}
	return n
}

func onOff(on bool) string {
	if on {
		return "on: timings include its checks"
	}
	return "off"
}

// progress prints a line as each stage starts and its time when it ends.
type progress struct{ out io.Writer }

func (p progress) start(stage string) (done func() time.Duration) {
	fmt.Fprintf(p.out, "%s…", stage)
	t := time.Now()
	return func() time.Duration {
		took := time.Since(t)
		fmt.Fprintf(p.out, " %v\n", roundTime(took))
		return took
	}
}

// roundTime keeps four or so significant digits of a time for printing.
func roundTime(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

func (p progress) parse(name, text string) (*hlo.Module, error) {
	done := p.start("parse")
	m, err := hlo.ParseModule(text)
	if err != nil {
		fmt.Fprintln(p.out)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	done()
	return m, nil
}

// explainLimit names the flag behind an error of the run's limits.
func explainLimit(err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (the run's -timeout of %v; -timeout 0 for none)", err, timeout)
	case errors.Is(err, cpuref.ErrTooLarge):
		return fmt.Errorf("%w (-cpuref-max-bytes raises cpuref's limits)", err)
	}
	return err
}

// print prints the GPU's outputs next to cpuref's and fails if they disagree,
// then the GPU time per instruction and the run's times.
func (r runReport) print(out io.Writer, m *hlo.Module) error {
	var mismatch error
	for i, got := range r.got {
		fmt.Fprintf(out, "output %d %v\n  gpu:    %s\n", i, got.Shape(), clip(hlo.FormatLiteralValues(got)))
		if r.want != nil {
			mismatch = errors.Join(mismatch, compareOutput(out, m, i, got, r.want[i]))
		}
	}
	if r.want == nil {
		fmt.Fprintln(out, "reference: none (-reference none): the outputs were not compared with cpuref")
	}
	if len(r.prof.Kernels) > 0 {
		which := "the last warm run"
		if len(r.times.warm) == 0 {
			which = "the first run: no warm runs"
		}
		fmt.Fprintf(out, "\nGPU time per instruction (%s):\n%s", which, r.prof)
	}
	r.times.print(out)
	return mismatch
}

// compareOutput prints cpuref's value of output i and whether the GPU's agrees.
func compareOutput(out io.Writer, m *hlo.Module, i int, got, want *hlo.Literal) error {
	spec := vkxla.ProgramTolerance(m, got.DType())
	fmt.Fprintf(out, "  cpuref: %s\n", clip(hlo.FormatLiteralValues(want)))
	err := hlo.LiteralsClose(got, want, spec.Abs, spec.Rel)
	if spec.Exact() {
		err = hlo.LiteralsEqual(got, want)
	}
	nans := countNaNs(got, want)
	if nans.gpu+nans.cpu > 0 {
		fmt.Fprintf(out, "  NaN: gpu %d, cpuref %d of %d\n", nans.gpu, nans.cpu, got.NumElements())
	}
	switch {
	case err != nil:
		fmt.Fprintf(out, "  MISMATCH: %v\n", err)
		return fmt.Errorf("output %d differs from cpuref: %w", i, err)
	case 2*nans.both > got.NumElements():
		fmt.Fprintf(out, "  inconclusive: %d of %d are NaN on both sides (the inputs may be outside the program's domain: try -positive or -inputs)\n", nans.both, got.NumElements())
	default:
		fmt.Fprintf(out, "  agree within |d| <= %.2g + %.2g·|cpuref|\n", spec.Abs, spec.Rel)
	}
	return nil
}

// print names each time for what it includes; the program's time is the warm
// runs' median.
func (t runTimes) print(out io.Writer) {
	fmt.Fprintln(out, "\ntimes (wall clock on the host; GPU kernels from timestamp queries):")
	if t.cpuref > 0 {
		fmt.Fprintf(out, "  cpuref     %v (the reference)\n", roundTime(t.cpuref))
	}
	fmt.Fprintf(out, "  compile    %v\n", roundTime(t.compile))
	fmt.Fprintf(out, "  first run  %v, GPU kernels %v (it includes one-time costs the warm runs do not pay)\n",
		roundTime(t.firstRun), roundTime(t.firstRunGPU))
	if len(t.warm) == 0 {
		fmt.Fprintln(out, "  warm runs  none (-runs 0): no figure without one-time costs")
		return
	}
	w, runs := slices.Sorted(slices.Values(t.warm)), "runs"
	if len(w) == 1 {
		runs = "run"
	}
	fmt.Fprintf(out, "  warm run   median %v over %d %s (min %v, max %v), GPU kernels median %v: the program's time\n",
		roundTime(median(t.warm)), len(w), runs, roundTime(w[0]), roundTime(w[len(w)-1]), roundTime(median(t.warmGPU)))
	if t.capped > 0 {
		fmt.Fprintf(out, "             (stopped after %v of warm runs; -runs N times exactly N)\n", t.capped)
	}
}

// median of a non-empty list: the mean of the middle two of an even count.
func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + " …"
	}
	return s
}

// nanCounts counts NaN elements of a float output on each side and on both.
type nanCounts struct{ gpu, cpu, both int }

func countNaNs(got, want *hlo.Literal) nanCounts {
	var n nanCounts
	if !got.DType().IsFloat() {
		return n
	}
	for i := range got.NumElements() {
		g, w := math.IsNaN(got.Float64(i)), math.IsNaN(want.Float64(i))
		n.gpu, n.cpu = n.gpu+b2i(g), n.cpu+b2i(w)
		n.both += b2i(g && w)
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func devicesCommand(out io.Writer) error {
	all, err := device.List()
	if err != nil {
		return err
	}
	for _, c := range all {
		fmt.Fprintf(out, "%d: %v\n   subgroup %d, shared memory %d B, max storage buffer range %d B, max allocation %d B\n",
			c.Index, c, c.SubgroupSize, c.MaxSharedMemory, c.MaxStorageBufferRange, c.MaxMemoryAllocationSize)
		fmt.Fprintf(out, "   float16 %v, float64 %v, int8 %v, int16 %v, int64 %v, 8-bit storage %v, 16-bit storage %v\n",
			c.Float16, c.Float64, c.Int8, c.Int16, c.Int64, c.StorageBuffer8Bit, c.StorageBuffer16Bit)
	}
	return nil
}

func printCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("print", flag.ContinueOnError)
	maxFileBytes := fs.Int64("max-file-bytes", defaultMaxFileBytes, "largest HLO file to read")
	identityTargetFlag(fs)
	if help, err := parseFlags(fs, args, out); help || err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("print takes one file")
	}
	text, err := readModuleFile(fs.Arg(0), *maxFileBytes)
	if err != nil {
		return err
	}
	m, err := hlo.ParseModule(text)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	_, err = io.WriteString(out, hlo.Print(m))
	return err
}
