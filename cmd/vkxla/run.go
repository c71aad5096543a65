package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
)

// runModule runs one module on the device and on cpuref and prints both results,
// whether they agree within the program's tolerance, the memory plan and the
// per-kernel GPU times. The -timeout bounds cpuref, the compile and the GPU run.
func runModule(out io.Writer, name, text string, rf runFlags) (err error) {
	m, err := hlo.ParseModule(text)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if rf.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, rf.timeout)
	}
	defer cancel()
	defer func() { err = explainLimit(err, rf.timeout) }()
	inputs, err := randomInputs(m, rf.seed, rf.limits)
	if err != nil {
		return err
	}
	want, err := rf.limits.EvalContext(ctx, m, inputs...)
	if err != nil {
		return err // cpuref's errors say "cpuref: …"
	}
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(rf.validation))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }() // validation messages fail the run
	start := time.Now()
	exe, err := rt.Compile(ctx, m, rf.compileOpts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	compileTime := time.Since(start)
	got, err := exe.Run(ctx, inputs...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "module %s (%s)\ndevice %v\ncompiled in %v; %v\n", m.Name, name, rt.Device(), compileTime.Round(time.Microsecond), exe.MemoryStats())
	live := exe.LiveAtPeak()
	fmt.Fprintf(out, "live at the peak (%d buffers):\n", len(live))
	for _, b := range live[:min(5, len(live))] {
		fmt.Fprintf(out, "  %v\n", b)
	}
	fmt.Fprintf(out, "inputs: random, seed %d\n", rf.seed)
	if strings.Contains(text, "{...}") {
		fmt.Fprintln(out, "note: the module elides constants ({...}); they hold the parser's seeded pseudo-random values, not the originals")
	}
	fmt.Fprintln(out)
	prof, err := exe.Profile()
	if err != nil {
		return err
	}
	return report(out, m, got, want.Leaves(), prof)
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
		if err != nil {
			fmt.Fprintf(out, "  MISMATCH: %v\n", err)
			mismatch = fmt.Errorf("output %d differs from cpuref: %w", i, err)
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

// randomInputs draws every entry parameter: floats in [-1, 1], integers in [0, 8)
// (small enough to be valid indices), preds at random. The parameters are checked
// against cpuref's limits first, so that a huge one is an error, not an allocation.
func randomInputs(m *hlo.Module, seed uint64, limits cpuref.Limits) ([]*hlo.Literal, error) {
	if err := limits.CheckShapes(m.Entry.ParamShapes()...); err != nil {
		return nil, fmt.Errorf("cpuref: the entry parameters: %w", err)
	}
	rng := rand.New(rand.NewPCG(seed, 0x766b786c61))
	inputs := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		inputs[i] = randomLiteral(rng, p.Shape)
	}
	return inputs, nil
}

func randomLiteral(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	if s.IsTuple() {
		elems := make([]*hlo.Literal, len(s.Elems))
		for i, e := range s.Elems {
			elems[i] = randomLiteral(rng, e)
		}
		return hlo.TupleLiteral(elems...)
	}
	lit := hlo.NewLiteral(s)
	for i := 0; i < lit.NumElements(); i++ {
		switch {
		case s.DType.IsFloat():
			lit.SetFloat64(i, 2*rng.Float64()-1)
		case s.DType == hlo.Pred:
			lit.SetBool(i, rng.IntN(2) == 1)
		default:
			lit.SetInt64(i, rng.Int64N(8))
		}
	}
	return lit
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
