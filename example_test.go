package vkxla_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// The README's example: build a*x + y, compile it, state its memory, run it on the
// default Vulkan device and on cpuref. (No "Output:" line, so `go test` compiles it
// but does not run it: it needs a device.)
func Example() {
	b := hlo.NewBuilder("axpy")
	a := b.Parameter(hlo.Scalar(hlo.F32), "a")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 1024), "x")
	y := b.Parameter(hlo.MakeShape(hlo.F32, 1024), "y")
	m, err := b.Build(b.Add(b.Mul(b.BroadcastScalar(a, 1024), x), y))
	if err != nil {
		log.Fatal(err) // the builder's first error: op, operands, shapes
	}

	rt, err := vkxla.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	exe, err := rt.Compile(context.Background(), m) // cached: compiling the same module again is free
	if err != nil {
		log.Fatal(err)
	}
	defer exe.Close()
	fmt.Println(exe.MemoryStats()) // peak device bytes, known before running

	xs := make([]float32, 1024)
	ys := make([]float32, 1024)
	for i := range xs {
		xs[i], ys[i] = float32(i), 1
	}
	inputs := []*hlo.Literal{hlo.ScalarLiteral(float32(2)), hlo.MustFromSlice([]int64{1024}, xs), hlo.MustFromSlice([]int64{1024}, ys)}
	outs, err := exe.Run(context.Background(), inputs...)
	if err != nil {
		log.Fatal(err)
	}
	want, err := cpuref.Eval(m, inputs...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(hlo.LiteralsEqual(outs[0], want)) // <nil>: the GPU agrees with cpuref
}

// Meeting a device memory budget: values that would stay live across the peak are
// recomputed before their next use (rematerialisation). When no plan fits, the
// error says what the plan needs and what is live at its peak. (Compiled by `go
// test`, not run: it needs a device; TestMemoryBudget runs the same steps.)
func ExampleWithMemoryBudget() {
	m, err := hlo.ParseModuleFile("testdata/programs/checkpoint.hlo")
	if err != nil {
		log.Fatal(err)
	}
	rt, err := vkxla.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()
	exe, err := rt.Compile(context.Background(), m, vkxla.WithMemoryBudget(56<<10))
	if errors.Is(err, vkxla.ErrOverBudget) {
		log.Fatal(err) // "… the plan needs N bytes …, largest live at the peak: …"
	}
	if err != nil {
		log.Fatal(err)
	}
	defer exe.Close()
	fmt.Println(exe.MemoryStats().PeakBytes <= 56<<10) // true
	for _, b := range exe.LiveAtPeak() {
		fmt.Println(b) // e.g. "b 16384 B (temporary), then c"
	}
}
