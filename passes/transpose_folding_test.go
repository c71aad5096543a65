package passes

import "testing"

func TestTransposeFolding(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name:     "both operands: the dot reads A stored K×M and B stored N×K",
			disabled: []string{"fusion", "schedule"},
			before: `HloModule m
ENTRY %e (a: f32[8,4], b: f32[6,8]) -> f32[4,6] {
  %a = f32[8,4] parameter(0)
  %b = f32[6,8] parameter(1)
  %at = f32[4,8] transpose(%a), dimensions={1,0}
  %bt = f32[8,6] transpose(%b), dimensions={1,0}
  ROOT %d = f32[4,6] dot(%at, %bt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
			after: `HloModule m
ENTRY %e (a: f32[8,4], b: f32[6,8]) -> f32[4,6] {
  %a = f32[8,4] parameter(0)
  %b = f32[6,8] parameter(1)
  ROOT %d = f32[4,6] dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
}
`,
		},
		{
			name:     "batch dimensions are renumbered; a transpose with another user stays",
			disabled: []string{"fusion", "schedule"},
			before: `HloModule m
ENTRY %e (a: f32[5,2,3], b: f32[2,5,7]) -> (f32[2,3,7], f32[2,5,3]) {
  %a = f32[5,2,3] parameter(0)
  %b = f32[2,5,7] parameter(1)
  %at = f32[2,5,3] transpose(%a), dimensions={1,0,2}
  %d = f32[2,3,7] dot(%at, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT %t = (f32[2,3,7], f32[2,5,3]) tuple(%d, %at)
}
`,
			after: `HloModule m
ENTRY %e (a: f32[5,2,3], b: f32[2,5,7]) -> (f32[2,3,7], f32[2,5,3]) {
  %a = f32[5,2,3] parameter(0)
  %b = f32[2,5,7] parameter(1)
  %at = f32[2,5,3] transpose(%a), dimensions={1,0,2}
  %d = f32[2,3,7] dot(%a, %b), lhs_batch_dims={1}, rhs_batch_dims={0}, lhs_contracting_dims={0}, rhs_contracting_dims={1}
  ROOT %t = (f32[2,3,7], f32[2,5,3]) tuple(%d, %at)
}
`,
		},
		{
			// The transpose swaps the two free dimensions of A: folding would list
			// them in the other order in the result.
			name:     "free dimensions reordered: no fold",
			disabled: []string{"fusion", "schedule"},
			before: `HloModule m
ENTRY %e (a: f32[3,2,4], b: f32[4,5]) -> f32[2,3,5] {
  %a = f32[3,2,4] parameter(0)
  %b = f32[4,5] parameter(1)
  %at = f32[2,3,4] transpose(%a), dimensions={1,0,2}
  ROOT %d = f32[2,3,5] dot(%at, %b), lhs_contracting_dims={2}, rhs_contracting_dims={0}
}
`,
		},
	})
}
