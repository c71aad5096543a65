package main

import (
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/device/devicetest"
)

// -smoke: both training-step cases, every configuration of their memory curves
// (no fusion, budgets met and refused, the floor, every checkpoint policy) once at
// small sizes. bench.GradMemory checks each run: the unbudgeted step against
// cpuref, the others against it. A configuration that crashes, fails to compile
// or computes a wrong value fails here, and so does a validation-layer message.
func TestSmoke(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	mlp, lm, budgets, reps, check, floorStep := smokeConfig()
	pcts, err := ints(budgets, -1)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := gradCases(mlp, lm, floorStep)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 {
		t.Fatalf("smoke cases: %d, want the MLP and the transformer", len(cases))
	}
	if err := measure(rt, cases, pcts, reps, check); err != nil {
		t.Fatal(err)
	}
}
