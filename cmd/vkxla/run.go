package main

import (
	"context"
	"errors"
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
// per-kernel GPU times.
func runModule(out io.Writer, name, text string, seed uint64, validation bool, opts ...vkxla.CompileOption) (err error) {
	m, err := hlo.ParseModule(text)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	inputs := randomInputs(m, seed)
	want, err := cpuref.Eval(m, inputs...)
	if err != nil {
		return fmt.Errorf("cpuref: %w", err)
	}
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(validation))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }() // validation messages fail the run
	start := time.Now()
	exe, err := rt.Compile(context.Background(), m, opts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	compileTime := time.Since(start)
	got, err := exe.Run(context.Background(), inputs...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "module %s (%s)\ndevice %v\ncompiled in %v; %v\n", m.Name, name, rt.Device(), compileTime.Round(time.Microsecond), exe.MemoryStats())
	live := exe.LiveAtPeak()
	fmt.Fprintf(out, "live at the peak (%d buffers):\n", len(live))
	for _, b := range live[:min(5, len(live))] {
		fmt.Fprintf(out, "  %v\n", b)
	}
	fmt.Fprintf(out, "inputs: random, seed %d\n", seed)
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
// (small enough to be valid indices), preds at random.
func randomInputs(m *hlo.Module, seed uint64) []*hlo.Literal {
	rng := rand.New(rand.NewPCG(seed, 0x766b786c61))
	inputs := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		inputs[i] = randomLiteral(rng, p.Shape)
	}
	return inputs
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
	if len(args) != 1 {
		return fmt.Errorf("print takes one file")
	}
	m, err := hlo.ParseModuleFile(args[0])
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, hlo.Print(m))
	return err
}
