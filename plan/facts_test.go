package plan_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/vkxla/vkxla/heapsim"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
	"github.com/vkxla/vkxla/targets"
)

// TestFactsAgreeOnPrograms: for every kernel computation of the test programs
// (testdata/programs, planned for lavapipe), the facts the passes' trials read
// (codegen.Facts, no SPIR-V) are those of the emitted program, and a model built
// from the facts alone has the plan's statistics.
func TestFactsAgreeOnPrograms(t *testing.T) {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	target := d.Plan()
	files, err := filepath.Glob("../testdata/programs/*.hlo")
	if err != nil || len(files) == 0 {
		t.Fatalf("no programs: %v", err)
	}
	for _, file := range files {
		p := planFile(t, file, target, nil)
		compared := 0
		facts := func(kc *hlo.Computation) (*codegen.Program, error) {
			want, err := codegen.Lower(kc, target.Codegen)
			if err != nil {
				return nil, err
			}
			got, err := codegen.Facts(kc, target.Codegen)
			if err != nil {
				t.Fatalf("%s: %s: Facts: %v", file, kc.Name, err)
			}
			if !sameFacts(got, want) {
				t.Errorf("%s: %s: facts %+v differ from the program %+v", file, kc.Name, got, want)
			}
			compared++
			return got, nil
		}
		model, err := heapsim.Simulate(p.Module, heapsim.Config{Kernels: facts, Limits: target.Limits})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if model.Stats != p.Stats {
			t.Errorf("%s: model from facts %v, plan %v", file, model.Stats, p.Stats)
		}
		if compared == 0 {
			t.Errorf("%s: no kernel computations compared", file)
		}
	}
}

func sameFacts(got, want *codegen.Program) bool {
	if !slices.EqualFunc(got.Inputs, want.Inputs, hlo.Shape.Equal) || !slices.EqualFunc(got.Outputs, want.Outputs, hlo.Shape.Equal) ||
		!slices.Equal(got.Scratch, want.Scratch) || !slices.Equal(got.InPlace, want.InPlace) || len(got.Dispatches) != len(want.Dispatches) {
		return false
	}
	for i, d := range want.Dispatches {
		if !slices.Equal(got.Dispatches[i].Args, d.Args) || got.Dispatches[i].CopiesInPlaceInput != d.CopiesInPlaceInput {
			return false
		}
	}
	return true
}
