package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/targets"
)

// compileCommand plans a module for a device described as data, with no device:
// the module after the passes, the kernel count, the plan (every buffer's offset,
// size and lifetime) and its MemoryStats, like XLA's memory_analysis() ahead of
// time.
func compileCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("compile", flag.ContinueOnError)
	targetName := fs.String("target", "lavapipe", "the device to plan for: a built-in profile ("+strings.Join(targets.Builtins(), ", ")+"; `list` prints them) or a file of `vulkaninfo --json` output")
	budget := fs.Int64("budget", 0, "device memory budget in bytes (rematerialise to meet it; 0: none)")
	without := fs.String("without", "", "comma-separated optimisation passes to skip (fusion, schedule, …)")
	dump := fs.String("dump", "", "write what VKXLA_DUMP writes (stages, kernels, plan, memory plot) under this directory")
	plot := fs.String("plot", "", "write the memory timeline (live bytes per step, the peak, what is live there) to this SVG file")
	maxFile := fs.Int64("max-file-bytes", defaultMaxFileBytes, "largest HLO or profile file to read")
	devices := fs.Int("devices", 1, "plan one device's part of a run on this many devices together (replicas × partitions): collectives become host steps")
	if help, err := parseFlags(fs, args, out); help || err != nil {
		return err
	}
	if *targetName == "list" {
		return listTargets(out)
	}
	if fs.NArg() != 1 {
		return errors.New("compile takes one file.hlo")
	}
	dev, err := loadTarget(*targetName, *maxFile)
	if err != nil {
		return err
	}
	text, err := readModuleFile(fs.Arg(0), *maxFile)
	if err != nil {
		return err
	}
	m, err := hlo.ParseModule(text)
	if err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	var opts []vkxla.CompileOption
	if *budget != 0 {
		opts = append(opts, vkxla.WithMemoryBudget(*budget))
	}
	if *without != "" {
		opts = append(opts, vkxla.WithoutPasses(strings.Split(*without, ",")...))
	}
	if *devices != 1 {
		opts = append(opts, vkxla.WithDevices(*devices))
	}
	p, err := vkxla.PlanFor(context.Background(), m, dev, *dump, opts...)
	if err != nil {
		return err
	}
	if *plot != "" {
		if err := os.WriteFile(*plot, p.SVG(), 0o644); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
	}
	printPlan(out, dev, p)
	return nil
}

// loadTarget is a built-in profile by name, or else a vulkaninfo --json file.
func loadTarget(name string, maxBytes int64) (targets.Device, error) {
	if d, err := targets.Builtin(name); err == nil {
		return d, nil
	}
	data, err := readModuleFile(name, maxBytes)
	if err != nil {
		return targets.Device{}, fmt.Errorf("-target %s: not a built-in profile (%s) nor a readable file: %w", name, strings.Join(targets.Builtins(), ", "), err)
	}
	d, err := targets.FromVulkaninfo([]byte(data))
	if err != nil {
		return targets.Device{}, fmt.Errorf("-target %s: %w", name, err)
	}
	return d, nil
}

// listTargets prints each built-in profile with the facts that shape its plans.
func listTargets(out io.Writer) error {
	for _, name := range targets.Builtins() {
		d, err := targets.Builtin(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%-16s %s (driver %s): subgroup %d (%d..%d), shared %d B, %d invocations, binding %d B, block %d B\n",
			name, d.Name, d.Driver, d.SubgroupSize, d.MinSubgroupSize, d.MaxSubgroupSize, d.MaxSharedMemory,
			d.MaxWorkgroupInvocations, d.MaxStorageBufferRange, d.MaxMemoryAllocationSize)
	}
	return nil
}

func printPlan(out io.Writer, dev targets.Device, p *plan.Plan) {
	fmt.Fprintf(out, "target: %s (driver %s, subgroup size %d, %d..%d)\n\n", dev.Name, dev.Driver, dev.SubgroupSize, dev.MinSubgroupSize, dev.MaxSubgroupSize)
	fmt.Fprintf(out, "%s\n", hlo.Print(p.Module))
	fmt.Fprintf(out, "kernels: %d distinct, %d dispatches\n\n", len(p.Kernels()), countDispatches(p.Main))
	fmt.Fprint(out, p.String())
}

// countDispatches counts the dispatch steps of a block and the blocks inside it.
func countDispatches(b *plan.Block) int {
	n := 0
	for _, st := range b.Steps {
		if st.Kind == plan.StepDispatch {
			n++
		}
		for _, nested := range append([]*plan.Block{st.Cond, st.Body}, st.Branches...) {
			if nested != nil {
				n += countDispatches(nested)
			}
		}
	}
	return n
}
