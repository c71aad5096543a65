package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
)

// runModule runs one module on the device and on cpuref and prints both results,
// whether they agree within the program's tolerance, the memory plan, the kernel
// count and the per-kernel GPU times, with a progress line per stage (a large
// model takes a while). The -timeout bounds cpuref, the compile and the GPU run.
// runRngSeed seeds the RNG state of rng draws on both sides, so that they agree.
const runRngSeed = 0

func runModule(out io.Writer, name, text string, rf runFlags) (err error) {
	p := progress{out: out}
	m, err := p.parse(name, text)
	if err != nil {
		return err
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if rf.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, rf.timeout)
	}
	defer cancel()
	defer func() { err = explainLimit(err, rf.timeout) }()
	inputs, err := rf.inputs.inputs(m, rf.limits)
	if err != nil {
		return err
	}
	done := p.start("cpuref")
	want, _, err := rf.limits.EvalWithRngState(ctx, m, hlo.RngSeedState(runRngSeed), inputs...)
	if err != nil {
		return err // cpuref's errors say "cpuref: …"
	}
	done()
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(rf.validation))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }() // validation messages fail the run
	done = p.start("compile")
	exe, err := rt.Compile(ctx, m, rf.compileOpts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	done()
	done = p.start("run")
	if err := exe.SeedRng(runRngSeed); err != nil {
		return err
	}
	got, err := exe.Run(ctx, inputs...)
	if err != nil {
		return err
	}
	done()
	describe(out, name, m, rt, exe, rf, strings.Contains(text, "{...}"))
	prof, err := exe.Profile()
	if err != nil {
		return err
	}
	err = report(out, m, got, want.Leaves(), prof)
	if rf.check {
		opt := exe.OptimizedModule()
		if len(opt.Entry.Params) > len(inputs) { // the RNG state parameter (docs/runtime.md)
			s := hlo.RngSeedState(runRngSeed)
			inputs = append(inputs, hlo.MustFromSlice([]int64{2}, s[:]))
		}
		err = errors.Join(err, newChecker(ctx, out, rt, rf.limits).kernels(opt, inputs))
	}
	return err
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

func (p progress) start(stage string) (done func()) {
	fmt.Fprintf(p.out, "%s…", stage)
	t := time.Now()
	return func() { fmt.Fprintf(p.out, " %v\n", time.Since(t).Round(time.Microsecond)) }
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

// report prints GPU and cpuref outputs side by side and fails if they disagree.
func report(out io.Writer, m *hlo.Module, got, want []*hlo.Literal, prof vkxla.Profile) error {
	var mismatch error
	for i := range got {
		spec := vkxla.ProgramTolerance(m, got[i].DType())
		fmt.Fprintf(out, "output %d %v\n  gpu:    %s\n  cpuref: %s\n", i, got[i].Shape(), clip(hlo.FormatLiteralValues(got[i])), clip(hlo.FormatLiteralValues(want[i])))
		err := hlo.LiteralsClose(got[i], want[i], spec.Abs, spec.Rel)
		if spec.Exact() {
			err = hlo.LiteralsEqual(got[i], want[i])
		}
		nans := countNaNs(got[i], want[i])
		if nans.gpu+nans.cpu > 0 {
			fmt.Fprintf(out, "  NaN: gpu %d, cpuref %d of %d\n", nans.gpu, nans.cpu, got[i].NumElements())
		}
		if err != nil {
			fmt.Fprintf(out, "  MISMATCH: %v\n", err)
			mismatch = errors.Join(mismatch, fmt.Errorf("output %d differs from cpuref: %w", i, err))
			continue
		}
		if 2*nans.both > got[i].NumElements() {
			fmt.Fprintf(out, "  inconclusive: %d of %d are NaN on both sides (the inputs may be outside the program's domain: try -positive or -inputs)\n", nans.both, got[i].NumElements())
			continue
		}
		fmt.Fprintf(out, "  agree within |d| <= %.2g + %.2g·|cpuref|\n", spec.Abs, spec.Rel)
	}
	if len(prof.Kernels) > 0 {
		fmt.Fprintf(out, "\nGPU time per instruction (last run):\n%s", prof)
	}
	return mismatch
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
