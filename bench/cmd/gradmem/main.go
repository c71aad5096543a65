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
package main

import (
	"context"
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
	flag.Parse()
	if err := run(*mlp, *lm, *budgets, *reps, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gradmem:", err)
		os.Exit(1)
	}
}

func run(mlp, lm, budgets string, reps int, check bool) error {
	pcts, err := ints(budgets, -1)
	if err != nil {
		return fmt.Errorf("-budgets: %w", err)
	}
	var cases []bench.GradCase
	if mlp != "" {
		d, err := ints(mlp, 3)
		if err != nil {
			return fmt.Errorf("-mlp: %w", err)
		}
		c, err := bench.DeepMLPCase(d[0], d[1], d[2])
		if err != nil {
			return err
		}
		cases = append(cases, c)
	}
	if lm != "" {
		d, err := ints(lm, 7)
		if err != nil {
			return fmt.Errorf("-lm: %w", err)
		}
		c, err := bench.TransformerCase(train.LMConfig{Blocks: d[0], Seq: int64(d[1]), Dim: int64(d[2]),
			Heads: int64(d[3]), Hidden: int64(d[4]), Vocab: int64(d[5]), Batch: int64(d[6])})
		if err != nil {
			return err
		}
		cases = append(cases, c)
	}
	rt, err := vkxla.NewRuntime()
	if err != nil {
		return err
	}
	defer rt.Close()
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
	return rt.Close()
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
