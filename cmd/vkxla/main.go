// Command vkxla compiles HLO modules and runs them on a Vulkan device.
//
//	vkxla run [file.hlo]   run a module (default: the built-in MLP example) on random
//	                       inputs, on the GPU and on cpuref, and print both
//	vkxla devices          list the Vulkan devices and their capabilities
//	vkxla print file.hlo   parse, verify and print a module
package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vkxla/vkxla"
)

//go:embed examples/mlp.hlo
var exampleMLP string

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "vkxla:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		args = []string{"run"}
	}
	switch args[0] {
	case "run":
		return runCommand(args[1:], out)
	case "devices":
		return devicesCommand(out)
	case "print":
		return printCommand(args[1:], out)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(out, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

const usage = `usage:
  vkxla run [-seed N] [-validation] [-budget BYTES] [-without PASS,...] [file.hlo]
                                                 run on the GPU and on cpuref, print both
  vkxla devices                                  list Vulkan devices
  vkxla print file.hlo                           parse, verify and print a module`

func runCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed of the random inputs")
	validation := fs.Bool("validation", os.Getenv("VKXLA_VALIDATION") == "1", "enable the Vulkan validation layer")
	budget := fs.Int64("budget", 0, "device memory budget in bytes (rematerialise to meet it; 0: none)")
	without := fs.String("without", "", "comma-separated optimisation passes to skip (fusion, schedule, …)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var opts []vkxla.CompileOption
	if *budget != 0 {
		opts = append(opts, vkxla.WithMemoryBudget(*budget))
	}
	if *without != "" {
		opts = append(opts, vkxla.WithoutPasses(strings.Split(*without, ",")...))
	}
	name, text := "examples/mlp.hlo (built in)", exampleMLP
	if fs.NArg() > 1 {
		return errors.New("run takes at most one file")
	}
	if fs.NArg() == 1 {
		name = fs.Arg(0)
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		text = string(b)
	}
	return runModule(out, name, text, *seed, *validation, opts...)
}
