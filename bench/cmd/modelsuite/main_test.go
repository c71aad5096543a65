package main

import (
	"regexp"
	"testing"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/bench"
	"github.com/vkxla/vkxla/device/devicetest"
)

// -smoke: every model program, target and reference of the suite once at
// bench.SmokeSuite's sizes, each checked against cpuref. A program that crashes,
// fails to compile or computes a wrong value fails here, and so does a
// validation-layer message.
func TestSmoke(t *testing.T) {
	rt, err := vkxla.NewRuntime(vkxla.WithDevice(devicetest.Open(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if err := run(rt, regexp.MustCompile(""), bench.SmokeSuite, 1, true, false, "", "", devicetest.Validation(), nil); err != nil {
		t.Fatal(err)
	}
}
