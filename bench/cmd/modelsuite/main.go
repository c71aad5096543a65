// Command modelsuite runs issue 12's model benchmark suite on the default Vulkan
// device and prints markdown tables: each model program (MobileNet-SSD, a
// ResNet-50 block, a BERT-base layer forward and forward+backward, a GPT-2 decode
// step, an MLP training step) timed in interleaved rounds with the same run's
// sgemm; the convolution and normalisation targets against a GEMM or a
// copy; and the kernel counts of its reference programs. Before timing, each
// program's small variant is run against cpuref.
//
//	go run ./bench/cmd/modelsuite                       # everything, 3 rounds (about 10 minutes on lavapipe)
//	go run ./bench/cmd/modelsuite -reps 5 -plot docs/img/model-suite.svg -commit abc1234
//	go run ./bench/cmd/modelsuite -only BERT -targets=false
//	go run ./bench/cmd/modelsuite -smoke                # every program, target and reference once at small sizes, checked (main_test.go runs it)
//
// The peer comparison (bench/peer/cmd/peersuite) is its own module that downloads
// GoMLX, so `make test` has no smoke run of it; its tests run in that module.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
)

func main() {
	reps := flag.Int("reps", 3, "interleaved rounds of each program and its reference")
	only := flag.String("only", "", "run only programs and targets whose name matches this regexp")
	targets := flag.Bool("targets", true, "also measure issue 12's convolution, normalisation and kernel-count targets")
	full := flag.Bool("cpuref", false, "check every full-size program against cpuref too (slow: minutes)")
	plot := flag.String("plot", "", "write the suite's bar chart (SVG) to this file")
	commit := flag.String("commit", "", "the commit measured, for the plot's title")
	validation := flag.Bool("validation", false, "run with the Khronos validation layer")
	without := flag.String("without", "", "compile the programs without these passes (comma-separated, e.g. simplify,cse), the sgemm with all")
	profile := flag.Int("profile", 0, "instead of timing, print each program's N kernels of most GPU time (the second of two runs)")
	smoke := flag.Bool("smoke", false, "run every program, target and reference once at small sizes, each checked against cpuref (-reps and -cpuref are ignored)")
	flag.Parse()
	if *profile > 0 {
		if err := profileRun(*profile, *only, *validation); err != nil {
			fmt.Fprintln(os.Stderr, "modelsuite:", err)
			os.Exit(1)
		}
		return
	}
	var opts []vkxla.CompileOption
	if *without != "" {
		opts = append(opts, vkxla.WithoutPasses(strings.Split(*without, ",")...))
	}
	sizes := bench.FullSuite
	if *smoke {
		*reps, sizes = 1, bench.SmokeSuite
	}
	filter, rt, err := bench.Open(*only, *validation)
	if err == nil {
		err = errors.Join(run(rt, filter, sizes, *reps, *targets, *full, *plot, *commit, *validation, opts), rt.Close())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "modelsuite:", err)
		os.Exit(1)
	}
}

// run measures the programs and targets filter matches, at sizes, on rt.
func run(rt *vkxla.Runtime, filter *regexp.Regexp, sizes bench.SuiteSizes, reps int, targets, full bool, plot, commit string, validation bool, opts []vkxla.CompileOption) error {
	ctx := context.Background()
	start := time.Now()
	fmt.Printf("%s · %s · %s/%s, %d CPUs · validation %v · %d interleaved rounds\n\n",
		start.UTC().Format("2006-01-02 15:04 UTC"), rt.Device(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), validation, reps)
	var models []bench.PairResult
	for _, p := range bench.ModelPrograms() {
		if !filter.MatchString(p.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: checking the small variant against cpuref…\n", p.Name)
		if err := bench.CheckModel(ctx, rt, p); err != nil {
			return err
		}
		pair, err := bench.ModelPair(p, sizes, full, opts...)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: timing…\n", p.Name)
		r, err := bench.MeasurePair(ctx, rt, pair, reps)
		if err != nil {
			return err
		}
		models = append(models, r)
	}
	bench.WriteModelTable(os.Stdout, models)
	if targets {
		if err := runTargets(ctx, rt, filter, sizes, reps); err != nil {
			return err
		}
	}
	if plot != "" && len(models) > 0 {
		title := fmt.Sprintf("vkxla model suite · %s · %s", rt.Device(), start.UTC().Format("2006-01-02"))
		if commit != "" {
			title += " · commit " + commit
		}
		if err := os.WriteFile(plot, bench.ModelPlot(title, bench.Bars(models)), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "done in %v\n", time.Since(start).Round(time.Second))
	return nil
}

func runTargets(ctx context.Context, rt *vkxla.Runtime, filter *regexp.Regexp, sizes bench.SuiteSizes, reps int) error {
	var trs []bench.TargetResult
	for _, t := range bench.TargetPairs(sizes) {
		if !filter.MatchString(t.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: timing…\n", t.Name)
		r, err := bench.MeasureTarget(ctx, rt, t, reps)
		if err != nil {
			return err
		}
		trs = append(trs, r)
	}
	if len(trs) > 0 {
		fmt.Println()
		bench.WriteTargetTable(os.Stdout, trs)
	}
	var kts []bench.KernelTarget
	var counts []int
	for _, t := range bench.KernelTargets(sizes) {
		if !filter.MatchString(t.Name) {
			continue
		}
		n, err := bench.KernelCount(ctx, rt, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.Name, err)
		}
		kts, counts = append(kts, t), append(counts, n)
	}
	if len(kts) > 0 {
		fmt.Println()
		bench.WriteKernelTable(os.Stdout, kts, counts)
	}
	return nil
}

// profileRun prints each program's top kernels by GPU time in one run.
func profileRun(n int, only string, validation bool) error {
	filter, rt, err := bench.Open(only, validation)
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Println("| program | kernel (its root instruction) | what it computes | dispatches | GPU ms | % of the run |")
	fmt.Println("|---|---|---|---:|---:|---:|")
	for _, p := range bench.ModelPrograms() {
		if !filter.MatchString(p.Name) {
			continue
		}
		top, total, err := bench.TopKernels(context.Background(), rt, p, n)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		for _, k := range top {
			fmt.Printf("| %s | %s | `%s` | %d | %.1f | %.0f%% |\n", p.Name, k.Instruction, k.Describe, k.Dispatches,
				float64(k.GPUTime.Microseconds())/1e3, 100*k.GPUTime.Seconds()/total.Seconds())
		}
	}
	return rt.Close()
}
