// Command rssprobe answers where resident memory goes when pipelines are created and
// destroyed: it creates and destroys N compute pipelines (distinct SPIR-V, or the
// same one with -same) straight through package device, printing the resident set
// as it goes, after glibc's malloc_trim (which returns free heap memory, so what
// stays is live), and after the device is destroyed (and trimmed again).
//
//	go run ./scripts/rssprobe -n 2000 [-same]
//
// Findings on lavapipe are in docs/runtime.md ("Resident memory per compile").
package main

/*
#include <malloc.h>
*/
import "C"

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

func main() {
	n := flag.Int("n", 2000, "pipelines to create and destroy")
	same := flag.Bool("same", false, "the same SPIR-V every time")
	flag.Parse()
	d, err := device.Open(device.Options{})
	if err != nil {
		log.Fatal(err)
	}
	kernels := make([]*codegen.Kernel, *n)
	for i := range kernels {
		c := i
		if *same {
			c = 0
		}
		kernels[i] = addConstKernel(vkxla.TargetFromCaps(d.Caps()), c)
	}
	fmt.Printf("start: %.1f MiB\n", rssMiB())
	for i, k := range kernels {
		dk, err := d.NewKernel(k.SPIRV, vkxla.KernelSpec(k))
		if err == nil {
			err = dk.Close()
		}
		if err != nil {
			log.Fatal(err)
		}
		if (i+1)%max(*n/4, 1) == 0 {
			fmt.Printf("after %d pipelines: %.1f MiB (live device objects: %d)\n", i+1, rssMiB(), d.LiveObjects())
		}
	}
	C.malloc_trim(0)
	fmt.Printf("after malloc_trim: %.1f MiB\n", rssMiB())
	if err := d.Close(); err != nil {
		log.Fatal(err)
	}
	C.malloc_trim(0)
	fmt.Printf("after the device's Close and malloc_trim: %.1f MiB\n", rssMiB())
}

// addConstKernel is the kernel of x + c over f32[16] (c is part of the SPIR-V).
func addConstKernel(t codegen.Target, c int) *codegen.Kernel {
	b := hlo.NewBuilder("addc")
	x := b.Parameter(hlo.MakeShape(hlo.F32, 16), "x")
	m, err := b.Build(b.Add(x, b.BroadcastScalar(b.ScalarConstant(hlo.F32, float64(c)), 16)))
	if err != nil {
		log.Fatal(err)
	}
	p, err := codegen.Lower(m.Entry, t)
	if err != nil {
		log.Fatal(err)
	}
	return p.Dispatches[0].Kernel
}

// rssMiB is the resident set after a GC (so the Go heap is settled).
func rssMiB() float64 {
	runtime.GC()
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		log.Fatal(err)
	}
	pages, err := strconv.ParseInt(strings.Fields(string(statm))[1], 10, 64)
	if err != nil {
		log.Fatal(err)
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20)
}
