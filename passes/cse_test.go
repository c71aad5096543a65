package passes

import "testing"

func TestCSE(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "equal subexpressions merge, operands first; different attributes stay apart",
		disabled: []string{"fusion", "schedule"},
		before: `HloModule m
ENTRY %e (x: f32[4], y: f32[4]) -> (f32[4], f32[4], f32[2]) {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %a1 = f32[4] add(%x, %y)
  %a2 = f32[4] add(%x, %y)
  %e1 = f32[4] exponential(%a1)
  %e2 = f32[4] exponential(%a2)
  %s1 = f32[2] slice(%e1), slice={[0:2]}
  %s2 = f32[2] slice(%e2), slice={[2:4]}
  %r = f32[4] multiply(%e1, %e2)
  %t = f32[2] add(%s1, %s2)
  ROOT %out = (f32[4], f32[4], f32[2]) tuple(%r, %e2, %t)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4], y: f32[4]) -> (f32[4], f32[4], f32[2]) {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %a1 = f32[4] add(%x, %y)
  %e1 = f32[4] exponential(%a1)
  %s1 = f32[2] slice(%e1), slice={[0:2]}
  %s2 = f32[2] slice(%e1), slice={[2:4]}
  %r = f32[4] multiply(%e1, %e1)
  %t = f32[2] add(%s1, %s2)
  ROOT %out = (f32[4], f32[4], f32[2]) tuple(%r, %e1, %t)
}
`,
	}, {
		name:     "constants merge by value and shape, not by name",
		disabled: []string{"fusion", "sibling-fusion", "schedule"},
		before: `HloModule m
ENTRY %e (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %c1 = f32[3] constant({1, 2, 3})
  %c2 = f32[3] constant({1, 2, 3})
  %c3 = f32[3] constant({1, 2, 4})
  %m1 = f32[3] multiply(%x, %c1)
  %m2 = f32[3] multiply(%x, %c2)
  %m3 = f32[3] multiply(%x, %c3)
  %s = f32[3] add(%m1, %m2)
  ROOT %r = f32[3] add(%s, %m3)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %c1 = f32[3] constant({1, 2, 3})
  %c3 = f32[3] constant({1, 2, 4})
  %m1 = f32[3] multiply(%x, %c1)
  %m3 = f32[3] multiply(%x, %c3)
  %s = f32[3] add(%m1, %m1)
  ROOT %r = f32[3] add(%s, %m3)
}
`,
	}, {
		name:     "equal parameters never merge; a computation's root may be replaced",
		disabled: []string{"dce", "fusion", "dce-after-fusion", "schedule"},
		before: `HloModule m
ENTRY %e (x: f32[2], y: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  %n1 = f32[2] negate(%x)
  %n2 = f32[2] negate(%y)
  %s = f32[2] add(%n1, %n2)
  ROOT %n3 = f32[2] negate(%x)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[2], y: f32[2]) -> f32[2] {
  %x = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  ROOT %n1 = f32[2] negate(%x)
  %n2 = f32[2] negate(%y)
  %s = f32[2] add(%n1, %n2)
}
`,
	}})
}
