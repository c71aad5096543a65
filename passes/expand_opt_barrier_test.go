package passes

import (
	"slices"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

// barrierModule computes sine(x) before a barrier and again on the barrier's
// output, through two equal barriers: without the barrier, CSE would merge all
// three sines.
const barrierModule = `HloModule jit_remat
ENTRY %main.10 (Arg_0.1: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %Arg_0.1 = f32[4] parameter(0)
  %sine.2 = f32[4] sine(%Arg_0.1)
  %tuple.3 = (f32[4]) tuple(%Arg_0.1)
  %opt-barrier.4 = (f32[4]) opt-barrier(%tuple.3)
  %opt-barrier.5 = (f32[4]) opt-barrier(%tuple.3)
  %get-tuple-element.6 = f32[4] get-tuple-element(%opt-barrier.4), index=0
  %get-tuple-element.7 = f32[4] get-tuple-element(%opt-barrier.5), index=0
  %sine.8 = f32[4] sine(%get-tuple-element.6)
  %sine.9 = f32[4] sine(%get-tuple-element.7)
  ROOT %tuple.10 = (f32[4], f32[4], f32[4]) tuple(%sine.2, %sine.8, %sine.9)
}
`

func TestExpandOptBarriers(t *testing.T) {
	keep := func(names ...string) []string {
		return slices.DeleteFunc(OptionalNames(), func(n string) bool { return slices.Contains(names, n) })
	}
	runPassCases(t, []passCase{{
		name:     "CSE merges no barriers and sees through none; the expander reads the operand tuple",
		disabled: keep("cse", "simplify", "dce"),
		before:   barrierModule,
		after: `HloModule jit_remat
ENTRY %main.10 (Arg_0.1: f32[4]) -> (f32[4], f32[4], f32[4]) {
  %Arg_0.1 = f32[4] parameter(0)
  %sine.2 = f32[4] sine(%Arg_0.1)
  %tuple.3 = (f32[4]) tuple(%Arg_0.1)
  %get-tuple-element.6 = f32[4] get-tuple-element(%tuple.3), index=0
  %get-tuple-element.7 = f32[4] get-tuple-element(%tuple.3), index=0
  %sine.8 = f32[4] sine(%get-tuple-element.6)
  %sine.9 = f32[4] sine(%get-tuple-element.7)
  ROOT %tuple.10 = (f32[4], f32[4], f32[4]) tuple(%sine.2, %sine.8, %sine.9)
}
`,
	}})
}

// TestOptBarrierExpanderRunsLast: every other pass runs while the barrier stands.
func TestOptBarrierExpanderRunsLast(t *testing.T) {
	last := Pipeline[len(Pipeline)-1]
	if last.Name != hlo.OptBarrierExpander || !last.Required {
		t.Fatalf("last pass is %q (required %v), want the required %q", last.Name, last.Required, hlo.OptBarrierExpander)
	}
}

// TestOptBarrierThroughWholePipeline: with every pass on (fusion, remat under a
// tight budget included), the three sines stay three and no barrier is left.
func TestOptBarrierThroughWholePipeline(t *testing.T) {
	m, err := hlo.ParseModule(barrierModule)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(m, Config{MemoryBudget: 1}); err != nil {
		t.Fatal(err)
	}
	text := hlo.Print(m)
	if strings.Contains(text, "opt-barrier") {
		t.Errorf("an opt-barrier is left:\n%s", text)
	}
	if n := strings.Count(text, " sine("); n != 3 {
		t.Errorf("%d sines after the pipeline, want 3 (one per side of each barrier):\n%s", n, text)
	}
}
