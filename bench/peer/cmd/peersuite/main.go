// Command peersuite is the model suite's peer column: each program of
// bench.ModelPrograms, and an sgemm 1024³, run by vkxla (Executable.Run on the
// default Vulkan device) and by GoMLX v0.26.0's pure-Go backend (simplego) on
// the same module, translated op for op (peer.Translate), in interleaved rounds
// timed by the same wall clock (inputs copied in, outputs copied out, on both
// sides). It prints a markdown table with the ratio; programs the peer cannot
// express are listed as N/A with the reason.
//
//	go run ./cmd/peersuite -reps 3            # from bench/peer; about 10 minutes on lavapipe
//	go run ./cmd/peersuite -only 'BERT|sgemm'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/gomlx/gomlx/backends"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/bench/peer"
	"github.com/vkxla/vkxla/hlo"
)

func main() {
	reps := flag.Int("reps", 3, "interleaved rounds of each program on each side")
	only := flag.String("only", "", "run only programs whose name matches this regexp")
	flag.Parse()
	if err := run(*reps, *only); err != nil {
		fmt.Fprintln(os.Stderr, "peersuite:", err)
		os.Exit(1)
	}
}

// sgemm is the product both sides' GEMM-bound programs are limited by.
func sgemm() bench.ModelProgram {
	const n = bench.SuiteGemm
	return bench.ModelProgram{Name: fmt.Sprintf("sgemm %d³", n), Build: func(bool) (*hlo.Module, []*hlo.Literal, error) {
		b := hlo.NewBuilder("sgemm")
		m, err := b.Build(bench.Gemm(b, n, n, n))
		return m, []*hlo.Literal{bench.F32Literal(3, n, n), bench.F32Literal(4, n, n)}, err
	}}
}

// row is one program's outcome.
type row struct {
	name           string
	work           float64
	vkxla, gomlx   bench.Stats
	kernels        int
	notExpressible error
}

func run(reps int, only string) error {
	filter, rt, err := bench.Open(only, false)
	if err != nil {
		return err
	}
	defer rt.Close()
	backend, err := peer.NewBackend()
	if err != nil {
		return err
	}
	defer backend.Finalize()
	start := time.Now()
	fmt.Printf("%s · vkxla on %s · GoMLX v0.26.0 %s · %s/%s, %d CPUs · %d interleaved rounds\n\n",
		start.UTC().Format("2006-01-02 15:04 UTC"), rt.Device(), backend.Description(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), reps)
	var rows []row
	for _, p := range append(bench.ModelPrograms(), sgemm()) {
		if !filter.MatchString(p.Name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s…\n", p.Name)
		r, err := measure(context.Background(), rt, backend, p, reps)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		rows = append(rows, r)
	}
	write(rows)
	fmt.Fprintf(os.Stderr, "done in %v\n", time.Since(start).Round(time.Second))
	return rt.Close()
}

// measure runs p at its full size on both sides, interleaved. Each side's first
// run is checked for finite outputs; both sides are checked against cpuref at
// the programs' small sizes by the tests (bench and bench/peer).
func measure(ctx context.Context, rt *vkxla.Runtime, backend backends.Backend, p bench.ModelProgram, reps int) (row, error) {
	m, in, err := p.Build(false)
	if err != nil {
		return row{}, err
	}
	r := row{name: p.Name, work: bench.FLOPs(m)}
	g, err := peer.NewRunner("GoMLX simplego", backend, m, in)
	if errors.Is(err, peer.ErrUnsupported) {
		r.notExpressible = err
		return r, nil
	}
	if err != nil {
		return r, err
	}
	defer g.Close()
	if err := bench.CheckFinite(g.Outputs); err != nil {
		return r, fmt.Errorf("GoMLX: %w", err)
	}
	v, err := bench.Executable("vkxla", func() (*hlo.Module, error) { return m, nil },
		func() []*hlo.Literal { return in }, func(_, out []*hlo.Literal) error { return bench.CheckFinite(out) }).New(ctx, rt)
	if err != nil {
		return r, err
	}
	defer v.Close()
	stats, err := bench.Measure(ctx, []bench.Runner{peer.WallOnly{Runner: v}, g}, reps)
	if err != nil {
		return r, err
	}
	r.vkxla, r.gomlx = stats[0], stats[1]
	return r, nil
}

func write(rows []row) {
	fmt.Println("| program | GFLOP | vkxla best wall ms | vkxla GFLOP/s (wall) | GoMLX simplego best ms | GoMLX GFLOP/s | vkxla ahead by (round median of GoMLX ÷ vkxla time) |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if r.notExpressible != nil {
			fmt.Printf("| %s | %.3g | — | — | N/A | — | N/A: %v |\n", r.name, r.work/1e9, r.notExpressible)
			continue
		}
		fmt.Printf("| %s | %.3g | %.1f | %.3g | %.1f | %.3g | %.2f× |\n", r.name, r.work/1e9,
			ms(r.vkxla.BestWall), gflops(r.work, r.vkxla.BestWall), ms(r.gomlx.BestWall), gflops(r.work, r.gomlx.BestWall),
			bench.RoundRatio(r.vkxla, r.gomlx))
	}
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func gflops(work float64, d time.Duration) float64 { return work / d.Seconds() / 1e9 }
