// Command vkxla compiles HLO modules and runs them on a Vulkan device.
//
//	vkxla run [file.hlo]   run a module (default: the built-in MLP example) on random
//	                       inputs, on the GPU and on cpuref, and print both, with
//	                       compile, first-run and warm-run times apart
//	vkxla train            train an MLP on a synthetic data set on the GPU, each step
//	                       checked against cpuref, until the loss is below a target
//	vkxla devices          list the Vulkan devices and their capabilities
//	vkxla print file.hlo   parse, verify and print a module
//	vkxla compile file.hlo plan a module for a device described as data (no device
//	                       needed): the module after passes, kernels, every buffer,
//	                       MemoryStats, a memory timeline plot
package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

//go:embed examples/mlp.hlo
var exampleMLP string

func main() {
	os.Exit(mainWithIO(os.Args[1:], os.Stdout, os.Stderr))
}

// mainWithIO runs the command and prints an error as one "vkxla: …" line (or
// paragraph) on stderr; it returns the exit status.
func mainWithIO(args []string, stdout, stderr io.Writer) int {
	if err := run(args, stdout); err != nil {
		fmt.Fprintln(stderr, errorText(err))
		return 1
	}
	return 0
}

// errorText prefixes the program's name unless the error already starts with it:
// the vkxla package's errors do ("vkxla: Compile m: …").
func errorText(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "vkxla: ") {
		return msg
	}
	return "vkxla: " + msg
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		args = []string{"run"}
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], out)
	case "train":
		return trainCommand(args[1:], out)
	case "devices":
		return devicesCommand(out)
	case "print":
		return printCommand(args[1:], out)
	case "compile":
		return compileCommand(args[1:], out)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(out, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

const usage = `usage:
  vkxla run [-inputs random|ones|npy:DIR] [-seed N] [-positive] [-check] [-validation]
            [-budget BYTES] [-without PASS,...] [-timeout D] [-identity-target NAME]...
            [-max-file-bytes N] [-cpuref-max-bytes N] [-reference cpuref|none] [-runs N]
            [file.hlo]
                                                 run on the GPU and on cpuref, print both,
                                                 and time warm runs apart from the first
  vkxla train [-steps N] [-target LOSS] [-seed N] [-every N] [-validation]
                                                 train an MLP on synthetic data on the GPU,
                                                 each step checked against cpuref
  vkxla devices                                  list Vulkan devices
  vkxla print [-max-file-bytes N] [-identity-target NAME]... file.hlo
                                                 parse, verify and print a module
  vkxla compile [-target NAME|caps.json|list] [-budget BYTES] [-without PASS,...]
                [-dump DIR] [-plot FILE.svg] [-max-file-bytes N] file.hlo
                                                 plan for a device without one: the module
                                                 after passes, kernels, buffers, MemoryStats`

// defaultMaxFileBytes caps the HLO files the commands read (docs/limits.md).
const defaultMaxFileBytes = 256 << 20

// runFlags are the options of vkxla run.
type runFlags struct {
	inputs       inputSource
	check        bool
	validation   bool
	timeout      time.Duration
	limits       cpuref.Limits
	compileOpts  []vkxla.CompileOption
	maxFileBytes int64
	reference    reference
	// warmRuns are timed after the first run; a warmBudget stops them early (at
	// least one) once they have taken that long together (without -runs).
	warmRuns   int
	warmBudget time.Duration
}

// reference is what vkxla run compares the GPU's outputs with.
type reference int

const (
	referenceCPU  reference = iota // cpuref, the default
	referenceNone                  // nothing: the run is only timed
)

func parseReference(s string) (reference, error) {
	switch s {
	case "cpuref":
		return referenceCPU, nil
	case "none":
		return referenceNone, nil
	}
	return 0, fmt.Errorf("run: -reference %q: want cpuref or none", s)
}

func runCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var rf runFlags
	seed := fs.Uint64("seed", 1, "seed of the random inputs")
	inputs := fs.String("inputs", "random", "where the inputs come from: random, ones or npy:DIR (DIR/<parameter name or number>.npy)")
	positive := fs.Bool("positive", false, "draw random floats in [0.5, 1.5) instead of [-1, 1) (for log, sqrt, pow…)")
	fs.BoolVar(&rf.check, "check", false, "on a mismatch, run every kernel alone on cpuref's inputs and name the first that differs (and the instruction inside a fusion)")
	fs.BoolVar(&rf.validation, "validation", os.Getenv("VKXLA_VALIDATION") == "1", "enable the Vulkan validation layer (slows every dispatch: off unless asked)")
	budget := fs.Int64("budget", 0, "device memory budget in bytes (rematerialise to meet it; 0: none)")
	without := fs.String("without", "", "comma-separated optimisation passes to skip (fusion, schedule, …)")
	fs.DurationVar(&rf.timeout, "timeout", 10*time.Minute, "bound on the whole run, cpuref and GPU (0: none)")
	fs.Int64Var(&rf.maxFileBytes, "max-file-bytes", defaultMaxFileBytes, "largest HLO file to read")
	cpurefMax := fs.Int64("cpuref-max-bytes", 0, "cpuref's memory limit, per value and in total (0: cpuref's defaults, 2 GiB and 8 GiB)")
	ref := fs.String("reference", "cpuref", "what the outputs are compared with: cpuref, or none to only time the program")
	fs.IntVar(&rf.warmRuns, "runs", defaultWarmRuns, fmt.Sprintf("warm runs timed after the first (the program's time is their median); without the flag, fewer once they take %v", warmRunsBudget))
	identityTargetFlag(fs)
	if help, err := parseFlags(fs, args, out); help || err != nil {
		return err
	}
	if !flagGiven(fs, "runs") {
		rf.warmBudget = warmRunsBudget
	}
	var err error
	if rf.reference, err = parseReference(*ref); err != nil {
		return err
	}
	if rf.check && rf.reference == referenceNone {
		return errors.New("run: -check compares every kernel with cpuref; it needs -reference cpuref")
	}
	if *budget != 0 {
		rf.compileOpts = append(rf.compileOpts, vkxla.WithMemoryBudget(*budget))
	}
	if *without != "" {
		rf.compileOpts = append(rf.compileOpts, vkxla.WithoutPasses(strings.Split(*without, ",")...))
	}
	if *cpurefMax < 0 || rf.timeout < 0 || rf.warmRuns < 0 {
		return errors.New("run: -cpuref-max-bytes, -timeout and -runs must not be negative")
	}
	rf.limits = cpuref.Limits{MaxValueBytes: *cpurefMax, MaxTotalBytes: *cpurefMax, Progress: terminalProgress(os.Stderr)}
	if rf.inputs, err = parseInputSource(*inputs, *seed, *positive); err != nil {
		return err
	}
	name, text := "examples/mlp.hlo (built in)", exampleMLP
	if fs.NArg() > 1 {
		return errors.New("run takes at most one file")
	}
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		if text, err = readModuleFile(name, rf.maxFileBytes); err != nil {
			return err
		}
	}
	return runModule(out, name, text, rf)
}

// flagGiven reports whether the command line set the flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// identityTargetFlag adds -identity-target NAME (repeatable): a vendor's
// pass-through custom-call target, run as the identity (docs/custom-calls.md).
func identityTargetFlag(fs *flag.FlagSet) {
	fs.Func("identity-target", "treat custom-call target `NAME` as the identity (repeatable)", func(name string) error {
		if err := hlo.RegisterIdentityTarget(name); err != nil {
			return fmt.Errorf("-identity-target %s: %w", name, err)
		}
		return nil
	})
}

// parseFlags parses a subcommand's flags. The flag package's own printing is
// silenced so that an error is printed once, by main, with the flags' usage; -h
// prints the usage on out and reports help.
func parseFlags(fs *flag.FlagSet, args []string, out io.Writer) (help bool, err error) {
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	if err == nil {
		return false, nil
	}
	var defaults strings.Builder
	fs.SetOutput(&defaults)
	fs.PrintDefaults()
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(out, "%s\n\nflags of %s:\n%s", usage, fs.Name(), defaults.String())
		return true, nil
	}
	return false, fmt.Errorf("%s: %w\nflags of %s:\n%s", fs.Name(), err, fs.Name(), strings.TrimRight(defaults.String(), "\n"))
}

// readModuleFile reads an HLO file of at most max bytes: /dev/zero or a huge file is
// an error naming the cap and the flag that raises it, not an unbounded read.
func readModuleFile(name string, max int64) (string, error) {
	if max <= 0 {
		return "", fmt.Errorf("-max-file-bytes is %d; it must be positive", max)
	}
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, min(max, math.MaxInt64-1)+1)) // one byte past the cap tells

	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(b)) > max {
		return "", fmt.Errorf("%s: larger than %d bytes (-max-file-bytes raises the cap)", name, max)
	}
	return string(b), nil
}
