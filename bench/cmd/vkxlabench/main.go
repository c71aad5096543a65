// Command vkxlabench measures vkxla's generated kernels against the hand-written
// GLSL baselines (package shaders) on the default Vulkan device and prints markdown
// tables: a summary (generated vs best baseline, ratio, peak device bytes) and every
// variant's times.
//
//	go run ./bench/cmd/vkxlabench                 # saxpy 16M, sgemm 256³ and 1024³, dispatch overhead, training step under budgets
//	go run ./bench/cmd/vkxlabench -gemm 256 -reps 5
//	go run ./bench/cmd/vkxlabench -smoke          # every variant once at small sizes, checked (main_test.go runs it)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
)

func main() {
	reps := flag.Int("reps", 3, "runs of each variant (interleaved); the best GPU time counts")
	saxpyN := flag.Int("saxpy", 16<<20, "saxpy length (0 skips)")
	gemm := flag.String("gemm", "256,1024", "comma-separated square GEMM sizes (empty skips)")
	overhead := flag.Int("dispatch", 16, "element count of the dispatch-overhead program (0 skips)")
	train := flag.String("train", "8,128,256", "training step layers,batch,width (empty skips)")
	budgets := flag.String("budgets", "95,90,85", "memory budgets of the training step, % of its unbudgeted peak")
	only := flag.String("only", "", "run only workloads whose name matches this regexp")
	validation := flag.Bool("validation", false, "run with the Khronos validation layer (slows host-side calls)")
	smoke := flag.Bool("smoke", false, "run every variant once at small sizes (the sizes and reps flags are ignored); results are still checked")
	flag.Parse()
	if *smoke {
		*reps, *saxpyN, *gemm, *overhead, *train, *budgets = smokeConfig()
	}
	ws, err := workloads(*saxpyN, *gemm, *overhead, *train, *budgets)
	if err == nil {
		err = run(ws, *reps, *only, *validation)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vkxlabench:", err)
		os.Exit(1)
	}
}

// smokeConfig is -smoke's reps, saxpy length, GEMM sizes, dispatch-overhead size,
// training step and budgets: every workload and variant, small enough for seconds on
// lavapipe with validation on.
func smokeConfig() (reps, saxpyN int, gemm string, overhead int, train, budgets string) {
	return 1, 4096, "32", 16, "4,16,32", "90"
}

func workloads(saxpyN int, gemm string, overhead int, train, budgets string) ([]bench.Workload, error) {
	var ws []bench.Workload
	if saxpyN > 0 {
		ws = append(ws, bench.SaxpyWorkload(saxpyN))
	}
	for _, f := range strings.FieldsFunc(gemm, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-gemm: bad size %q", f)
		}
		ws = append(ws, bench.SgemmWorkload(n, n, n))
	}
	if overhead > 0 {
		ws = append(ws, bench.DispatchWorkload(overhead))
	}
	if train != "" {
		dims, err := ints("-train", train)
		if err != nil {
			return nil, err
		}
		if len(dims) != 3 {
			return nil, fmt.Errorf("-train: want layers,batch,width, got %q", train)
		}
		pcts, err := ints("-budgets", budgets)
		if err != nil {
			return nil, err
		}
		ws = append(ws, bench.TrainWorkload(dims[0], dims[1], dims[2], pcts))
	}
	return ws, nil
}

// ints parses a comma-separated list of positive integers.
func ints(flagName, list string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: bad number %q", flagName, f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(ws []bench.Workload, reps int, only string, validation bool) error {
	filter, rt, err := bench.Open(only, validation)
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := measure(rt, filter, ws, reps, validation); err != nil {
		return err
	}
	return rt.Close()
}

// measure runs and prints the workloads filter matches.
func measure(rt *vkxla.Runtime, filter *regexp.Regexp, ws []bench.Workload, reps int, validation bool) error {
	fmt.Printf("%s · %s · %s/%s, %d CPUs · validation %v · best of %d interleaved runs\n\n",
		time.Now().Format("2006-01-02 15:04"), rt.Device(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), validation, reps)
	ctx := context.Background()
	var results []bench.Result
	for _, w := range ws {
		if !filter.MatchString(w.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "running %s…\n", w.Name)
		r, err := bench.Run(ctx, rt, w, reps)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	bench.WriteSummary(os.Stdout, results)
	fmt.Println()
	bench.WriteDetails(os.Stdout, results)
	return nil
}
