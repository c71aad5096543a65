package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

// trainConfig is what vkxla train trains: an MLP on a synthetic, separable data
// set (train.Blobs), full batch, SGD with momentum.
type trainConfig struct {
	seed         uint64
	steps        int
	target       float64
	every        int
	lr, momentum float64
	examples     int64
	sizes        []int64
	validation   bool
	compileOpts  []vkxla.CompileOption
}

func defaultTrainConfig() trainConfig {
	return trainConfig{seed: 1, steps: 200, target: 0.01, every: 5, lr: 0.05, momentum: 0.9,
		examples: 256, sizes: []int64{8, 32, 32, 4}}
}

func trainCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c := defaultTrainConfig()
	fs.Uint64Var(&c.seed, "seed", c.seed, "seed of the data set and the initial weights")
	fs.IntVar(&c.steps, "steps", c.steps, "most steps before giving up")
	fs.Float64Var(&c.target, "target", c.target, "stop once the loss falls below this")
	fs.IntVar(&c.every, "every", c.every, "print the loss every N steps")
	fs.BoolVar(&c.validation, "validation", false, "enable the Vulkan validation layer")
	if help, err := parseFlags(fs, args, out); help || err != nil {
		return err
	}
	if c.steps <= 0 || c.every <= 0 || !(c.target > 0) {
		return errors.New("train: -steps and -every must be positive, -target above 0")
	}
	return trainMLP(context.Background(), out, c)
}

// trainMLP runs training steps on the GPU until the loss is below the target.
// Every step is run on cpuref too, from the same state (the GPU's state of that
// step: free-running trajectories drift apart), and the two must agree within the
// step module's program tolerance.
func trainMLP(ctx context.Context, out io.Writer, c trainConfig) (err error) {
	model := train.MLP("mlp", hlo.F32, c.examples, c.sizes...)
	step, err := train.Build(model, train.SGD{LR: c.lr, Momentum: c.momentum})
	if err != nil {
		return err
	}
	x, labels := train.Blobs(c.seed, hlo.F32, c.examples, c.sizes[0], c.sizes[len(c.sizes)-1], 0.5)
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(c.validation))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, rt.Close()) }()
	exe, err := rt.Compile(ctx, step.Module, c.compileOpts...)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	fmt.Fprintf(out, "training MLP %v on %d synthetic points (%d classes), SGD lr %g momentum %g, on %v\n",
		c.sizes, c.examples, c.sizes[len(c.sizes)-1], c.lr, c.momentum, rt.Device())
	fmt.Fprintf(out, "one step = one executable: %d kernels; %v\n", kernelCount(exe.OptimizedModule()), exe.MemoryStats())
	fmt.Fprintf(out, "target: loss < %g within %d steps; each step checked against cpuref from the same state\n\n", c.target, c.steps)
	fmt.Fprintf(out, "%6s  %12s  %12s\n", "step", "loss (gpu)", "loss (cpuref)")
	return trainLoop(ctx, out, exe, step, c, []*hlo.Literal{x, labels})
}

func trainLoop(ctx context.Context, out io.Writer, exe *vkxla.Executable, step *train.Step, c trainConfig, batch []*hlo.Literal) error {
	spec := vkxla.ProgramTolerance(step.Module, hlo.F32)
	state := step.Init(c.seed)
	start := time.Now()
	var gpuTime time.Duration
	for i := 1; i <= c.steps; i++ {
		in := append(append([]*hlo.Literal{}, state...), batch...)
		t := time.Now()
		got, err := exe.Run(ctx, in...)
		if err != nil {
			return err
		}
		gpuTime += time.Since(t)
		want, err := cpuref.Eval(step.Module, in...)
		if err != nil {
			return err
		}
		for k, w := range want.Leaves() {
			if err := hlo.LiteralsClose(got[k], w, spec.Abs, spec.Rel); err != nil {
				return fmt.Errorf("train: step %d: output %d differs from cpuref started from the same state: %w", i, k, err)
			}
		}
		loss := got[0].Float64(0)
		done := loss < c.target
		if i == 1 || i%c.every == 0 || done {
			fmt.Fprintf(out, "%6d  %12.6f  %12.6f\n", i, loss, want.Leaves()[0].Float64(0))
		}
		if done {
			fmt.Fprintf(out, "\nloss %.6f < %g after %d steps (%v; %v in GPU runs)\n", loss, c.target, i,
				time.Since(start).Round(time.Millisecond), gpuTime.Round(time.Millisecond))
			return nil
		}
		state = got[1 : 1+step.Updated]
	}
	return fmt.Errorf("train: the loss did not fall below %g in %d steps (-steps raises the cap)", c.target, c.steps)
}
