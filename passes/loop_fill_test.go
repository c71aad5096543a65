package passes

import "testing"

func TestSplitLoopFills(t *testing.T) {
	loop := `%cond (s: (s32[], f32[4,2])) -> pred[] {
  %s = (s32[], f32[4,2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[4,2])) -> (s32[], f32[4,2]) {
  %s = (s32[], f32[4,2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v = f32[4,2] get-tuple-element(%s), index=1
  %e = f32[4,2] exponential(%v)
  ROOT %next = (s32[], f32[4,2]) tuple(%i1, %e)
}
%body2 (s: (s32[], f32[4,2])) -> (s32[], f32[4,2]) {
  %s = (s32[], f32[4,2]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v = f32[4,2] get-tuple-element(%s), index=1
  %e = f32[4,2] negate(%v)
  ROOT %next = (s32[], f32[4,2]) tuple(%i1, %e)
}
`
	runPassCases(t, []passCase{{
		name:     "two loops start from one zero fill: each gets its own, made just before its state, and the shared one dies (CSE had merged the fills and the tuples)",
		disabled: []string{"fusion", "sibling-fusion", "schedule"},
		before: `HloModule m
` + loop + `ENTRY %e (x: f32[4,2]) -> (f32[4,2], f32[4,2]) {
  %x = f32[4,2] parameter(0)
  %zero = s32[] constant(0)
  %z = f32[] constant(0)
  %fill = f32[4,2] broadcast(%z), dimensions={}
  %init = (s32[], f32[4,2]) tuple(%zero, %fill)
  %w = (s32[], f32[4,2]) while(%init), condition=%cond, body=%body
  %a = f32[4,2] get-tuple-element(%w), index=1
  %fill2 = f32[4,2] broadcast(%z), dimensions={}
  %init2 = (s32[], f32[4,2]) tuple(%zero, %fill2)
  %w2 = (s32[], f32[4,2]) while(%init2), condition=%cond, body=%body2
  %b = f32[4,2] get-tuple-element(%w2), index=1
  ROOT %r = (f32[4,2], f32[4,2]) tuple(%a, %b)
}
`,
		after: `HloModule m
` + loop + `ENTRY %e (x: f32[4,2]) -> (f32[4,2], f32[4,2]) {
  %x = f32[4,2] parameter(0)
  %zero = s32[] constant(0)
  %z = f32[] constant(0)
  %fill.1 = f32[4,2] broadcast(%z), dimensions={}
  %init.1 = (s32[], f32[4,2]) tuple(%zero, %fill.1)
  %w = (s32[], f32[4,2]) while(%init.1), condition=%cond, body=%body
  %a = f32[4,2] get-tuple-element(%w), index=1
  %fill.2 = f32[4,2] broadcast(%z), dimensions={}
  %init.2 = (s32[], f32[4,2]) tuple(%zero, %fill.2)
  %w2 = (s32[], f32[4,2]) while(%init.2), condition=%cond, body=%body2
  %b = f32[4,2] get-tuple-element(%w2), index=1
  ROOT %r = (f32[4,2], f32[4,2]) tuple(%a, %b)
}
`,
	}})
}
