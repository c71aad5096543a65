package main

import (
	"regexp"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
)

// -smoke: the command's workloads, every variant once at small sizes. A variant that
// crashes (a kernel spec that disagrees with its SPIR-V) or computes a wrong value
// (every run is checked) fails here, and so does a validation-layer message.
func TestSmoke(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	reps, saxpyN, gemm, overhead, train, budgets := smokeConfig()
	ws, err := workloads(saxpyN, gemm, overhead, train, budgets)
	if err != nil {
		t.Fatal(err)
	}
	if err := measure(rt, regexp.MustCompile(""), ws, reps, devicetest.Validation()); err != nil {
		t.Fatal(err)
	}
}
