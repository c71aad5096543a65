// Command vkxlabench measures vkxla's generated kernels against the hand-written
// GLSL baselines (package shaders) on the default Vulkan device and prints markdown
// tables: a summary (generated vs best baseline, ratio, peak device bytes) and every
// variant's times.
//
//	go run ./bench/cmd/vkxlabench                 # saxpy 16M, sgemm 256³ and 1024³, dispatch overhead
//	go run ./bench/cmd/vkxlabench -gemm 256 -reps 5
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
	only := flag.String("only", "", "run only workloads whose name matches this regexp")
	validation := flag.Bool("validation", false, "run with the Khronos validation layer (slows host-side calls)")
	flag.Parse()
	if err := run(*reps, *saxpyN, *gemm, *overhead, *only, *validation); err != nil {
		fmt.Fprintln(os.Stderr, "vkxlabench:", err)
		os.Exit(1)
	}
}

func workloads(saxpyN int, gemm string, overhead int) ([]bench.Workload, error) {
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
	return ws, nil
}

func run(reps, saxpyN int, gemm string, overhead int, only string, validation bool) error {
	ws, err := workloads(saxpyN, gemm, overhead)
	if err != nil {
		return err
	}
	filter, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(validation))
	if err != nil {
		return err
	}
	defer rt.Close()
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
	return rt.Close()
}
