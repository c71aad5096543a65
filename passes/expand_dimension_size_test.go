package passes

import "testing"

func TestExpandDimensionSizes(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "static sizes become constants",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (x: f32[4,7]) -> (s32[], s32[]) {
  %x = f32[4,7] parameter(0)
  %d0 = s32[] get-dimension-size(%x), dimensions={0}
  %d1 = s32[] get-dimension-size(%x), dimensions={1}
  ROOT %t = (s32[], s32[]) tuple(%d0, %d1)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4,7]) -> (s32[], s32[]) {
  %x = f32[4,7] parameter(0)
  %d0.constant = s32[] constant(4)
  %d1.constant = s32[] constant(7)
  ROOT %t = (s32[], s32[]) tuple(%d0.constant, %d1.constant)
}
`,
	}})
}
