// Command gradmem measures the device memory of autodiff-produced training steps
// (hlo/nn/train) as a curve: no fusion and no reuse, the default passes (the
// unbudgeted peak), memory budgets as percentages of that peak, and the smallest
// budget Compile meets; then the same step with checkpointed regions (each
// policy the case defines: train.Remat), unbudgeted, under the budgets below its
// own peak and at its floor. With -reps > 0 each configuration is also run and its
// GPU time reported as a ratio against the unbudgeted step in the same run.
//
//	go run ./bench/cmd/gradmem                                   # the docs/results.md table
//	go run ./bench/cmd/gradmem -mlp 16,128,4096 -lm '' -reps 0   # peaks only, at the stated size
//	go run ./bench/cmd/gradmem -smoke                            # every configuration once at small sizes, checked (main_test.go runs it)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/hlo/nn/train"
)

func main() {
	mlp := flag.String("mlp", "16,128,1024", "deep MLP layers,width,batch (empty skips)")
	lm := flag.String("lm", "4,64,64,4,256,64,4", "transformer blocks,seq,dim,heads,hidden,vocab,batch (empty skips)")
	budgets := flag.String("budgets", "90,70,50,30", "budgets, % of the unbudgeted peak")
	reps := flag.Int("reps", 3, "timed runs of each configuration, interleaved (0: memory only)")
	check := flag.Bool("cpuref", true, "check the unbudgeted step against cpuref")
	floorStep := flag.Float64("floor-step", bench.FloorResolution, "the floor search's stopping width, a fraction of the unbudgeted peak")
	smoke := flag.Bool("smoke", false, "run every configuration once at small sizes, checked against cpuref (the other flags are ignored)")
	flag.Parse()
	if *smoke {
		*mlp, *lm, *budgets, *reps, *check, *floorStep = smokeConfig()
	}
	if err := run(*mlp, *lm, *budgets, *reps, *check, *floorStep); err != nil {
		fmt.Fprintln(os.Stderr, "gradmem:", err)
		os.Exit(1)
	}
}

// smokeConfig is -smoke's MLP, transformer, budgets, reps and cpuref check: both
// cases with every checkpoint policy, a budget that is met and one that is
// refused, each configuration run once and checked, in seconds on lavapipe.
func smokeConfig() (mlp, lm, budgets string, reps int, check bool, floorStep float64) {
	return "3,8,16", "1,4,8,2,8,8,1", "80", 1, true, 0.1
}

func run(mlp, lm, budgets string, reps int, check bool, floorStep float64) error {
	pcts, err := ints(budgets, -1)
	if err != nil {
		return fmt.Errorf("-budgets: %w", err)
	}
	cases, err := gradCases(mlp, lm, floorStep)
	if err != nil {
		return err
	}
	rt, err := vkxla.NewRuntime()
	if err != nil {
		return err
	}
	return errors.Join(measure(rt, cases, pcts, reps, check), rt.Close())
}

// gradCases are the cases -mlp and -lm describe, each with the floor search's
// stopping width floorStep.
func gradCases(mlp, lm string, floorStep float64) ([]bench.GradCase, error) {
	var cases []bench.GradCase
	if mlp != "" {
		d, err := ints(mlp, 3)
		if err != nil {
			return nil, fmt.Errorf("-mlp: %w", err)
		}
		c, err := bench.DeepMLPCase(d[0], d[1], d[2])
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	if lm != "" {
		d, err := ints(lm, 7)
		if err != nil {
			return nil, fmt.Errorf("-lm: %w", err)
		}
		c, err := bench.TransformerCase(train.LMConfig{Blocks: d[0], Seq: int64(d[1]), Dim: int64(d[2]),
			Heads: int64(d[3]), Hidden: int64(d[4]), Vocab: int64(d[5]), Batch: int64(d[6])})
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	for i := range cases {
		cases[i].FloorStep = floorStep
	}
	return cases, nil
}

// measure prints each case's memory curve on rt.
func measure(rt *vkxla.Runtime, cases []bench.GradCase, pcts []int, reps int, check bool) error {
	fmt.Printf("%v · %d timed runs each\n\n", rt.Device(), reps)
	for _, c := range cases {
		fmt.Fprintf(os.Stderr, "measuring %s…\n", c.Name)
		curve, err := bench.GradMemory(context.Background(), rt, c, pcts, reps, check)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		bench.WriteMemoryCurve(os.Stdout, curve)
		fmt.Println()
	}
	return nil
}

// ints parses a comma-separated list of positive integers, n of them (n < 0: any).
func ints(list string, n int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad number %q", f)
		}
		out = append(out, v)
	}
	if n >= 0 && len(out) != n {
		return nil, fmt.Errorf("want %d numbers, got %q", n, list)
	}
	return out, nil
}
