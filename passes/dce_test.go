package passes

import "testing"

func TestDCE(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "unused instructions and computations go, parameters stay",
		disabled: []string{"fusion"},
		before: `HloModule m
%unused (u: f32[], v: f32[]) -> f32[] {
  %u = f32[] parameter(0)
  %v = f32[] parameter(1)
  ROOT %s = f32[] add(%u, %v)
}
%used (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e (x: f32[4], y: f32[4]) -> f32[] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %dead = f32[4] exponential(%x)
  %deader = f32[4] negate(%dead)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %zero), dimensions={0}, to_apply=%used
}
`,
		after: `HloModule m
%used (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e (x: f32[4], y: f32[4]) -> f32[] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %zero), dimensions={0}, to_apply=%used
}
`,
	}})
}
