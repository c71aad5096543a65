package passes

import "testing"

const addF32 = `%add (lhs: f32[], rhs: f32[]) -> f32[] {
  %lhs = f32[] parameter(0)
  %rhs = f32[] parameter(1)
  ROOT %s = f32[] add(%lhs, %rhs)
}
`

func TestReduceToDot(t *testing.T) {
	off := []string{"fusion", "sibling-fusion", "schedule"}
	runPassCases(t, []passCase{
		{
			// GoMLX's gradient of x·W: xᵀ·g as a reduce over the batch of x ⊗ g.
			name:     "weight gradient: the reduced batch dimension is contracted",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (x: f32[256,32], g: f32[256,64]) -> f32[32,64] {
  %x = f32[256,32] parameter(0)
  %g = f32[256,64] parameter(1)
  %bx = f32[256,32,64] broadcast(%x), dimensions={0,1}
  %bg = f32[256,32,64] broadcast(%g), dimensions={0,2}
  %p = f32[256,32,64] multiply(%bx, %bg)
  %z = f32[] constant(0)
  ROOT %r = f32[32,64] reduce(%p, %z), dimensions={0}, to_apply=%add
}
`,
			after: `HloModule m

ENTRY %e (x: f32[256,32], g: f32[256,64]) -> f32[32,64] {
  %x = f32[256,32] parameter(0)
  %g = f32[256,64] parameter(1)
  ROOT %r.dot = f32[32,64] dot(%x, %g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
`,
		},
		{
			name:     "the dot's order differs from the reduce's: a transpose follows",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (x: f32[256,32], g: f32[256,64]) -> f32[64,32] {
  %x = f32[256,32] parameter(0)
  %g = f32[256,64] parameter(1)
  %bx = f32[64,32,256] broadcast(%x), dimensions={2,1}
  %bg = f32[64,32,256] broadcast(%g), dimensions={2,0}
  %p = f32[64,32,256] multiply(%bx, %bg)
  %z = f32[] constant(0)
  ROOT %r = f32[64,32] reduce(%p, %z), dimensions={2}, to_apply=%add
}
`,
			after: `HloModule m

ENTRY %e (x: f32[256,32], g: f32[256,64]) -> f32[64,32] {
  %x = f32[256,32] parameter(0)
  %g = f32[256,64] parameter(1)
  %r.dot = f32[32,64] dot(%x, %g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %r.transpose = f32[64,32] transpose(%r.dot), dimensions={1,0}
}
`,
		},
		{
			name:     "a kept dimension both fill is a batch dimension; an operand not broadcast fills all",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (a: f32[2,3,5], b: f32[2,7,5]) -> f32[2,3,7] {
  %a = f32[2,3,5] parameter(0)
  %b = f32[2,7,5] parameter(1)
  %ba = f32[2,3,7,5] broadcast(%a), dimensions={0,1,3}
  %b4 = f32[2,3,7,5] broadcast(%b), dimensions={0,2,3}
  %p = f32[2,3,7,5] multiply(%ba, %b4)
  %z = f32[] constant(0)
  ROOT %r = f32[2,3,7] reduce(%p, %z), dimensions={3}, to_apply=%add
}
`,
			after: `HloModule m

ENTRY %e (a: f32[2,3,5], b: f32[2,7,5]) -> f32[2,3,7] {
  %a = f32[2,3,5] parameter(0)
  %b = f32[2,7,5] parameter(1)
  ROOT %r.dot = f32[2,3,7] dot(%a, %b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
}
`,
		},
		{
			name:     "row sums of x times a broadcast column: the reduced dimension only x fills stays a reduce",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (x: f32[4,5], c: f32[4]) -> f32[4] {
  %x = f32[4,5] parameter(0)
  %c = f32[4] parameter(1)
  %bc = f32[4,5] broadcast(%c), dimensions={0}
  %p = f32[4,5] multiply(%x, %bc)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%p, %z), dimensions={1}, to_apply=%add
}
`,
		},
		{
			name:     "row-wise dot products (the product is no larger than its sources): stays a reduce that fuses",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (y: f32[16,64], dy: f32[16,64]) -> f32[16] {
  %y = f32[16,64] parameter(0)
  %dy = f32[16,64] parameter(1)
  %p = f32[16,64] multiply(%y, %dy)
  %z = f32[] constant(0)
  ROOT %r = f32[16] reduce(%p, %z), dimensions={1}, to_apply=%add
}
`,
		},
		{
			name:     "a matrix-vector product (one side has no free dimension): stays a reduce",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (w: f32[8,5], v: f32[5]) -> f32[8] {
  %w = f32[8,5] parameter(0)
  %v = f32[5] parameter(1)
  %bv = f32[8,5] broadcast(%v), dimensions={1}
  %p = f32[8,5] multiply(%w, %bv)
  %z = f32[] constant(0)
  ROOT %r = f32[8] reduce(%p, %z), dimensions={1}, to_apply=%add
}
`,
		},
		{
			name:     "init -0 (a dot's sum starts at +0): no rewrite",
			disabled: off,
			before: `HloModule m

` + addF32 + `
ENTRY %e (x: f32[8,3], g: f32[8,2]) -> f32[3,2] {
  %x = f32[8,3] parameter(0)
  %g = f32[8,2] parameter(1)
  %bx = f32[8,3,2] broadcast(%x), dimensions={0,1}
  %bg = f32[8,3,2] broadcast(%g), dimensions={0,2}
  %p = f32[8,3,2] multiply(%bx, %bg)
  %z = f32[] constant(-0)
  ROOT %r = f32[3,2] reduce(%p, %z), dimensions={0}, to_apply=%add
}
`,
		},
		{
			name:     "bf16 products (the reduce rounds each partial sum to bf16, a dot would not): no rewrite",
			disabled: off,
			before: `HloModule m

%addbf (x: bf16[], y: bf16[]) -> bf16[] {
  %x = bf16[] parameter(0)
  %y = bf16[] parameter(1)
  ROOT %s = bf16[] add(%x, %y)
}

ENTRY %e (x: bf16[8,3], g: bf16[8,2]) -> bf16[3,2] {
  %x = bf16[8,3] parameter(0)
  %g = bf16[8,2] parameter(1)
  %bx = bf16[8,3,2] broadcast(%x), dimensions={0,1}
  %bg = bf16[8,3,2] broadcast(%g), dimensions={0,2}
  %p = bf16[8,3,2] multiply(%bx, %bg)
  %z = bf16[] constant(0)
  ROOT %r = bf16[3,2] reduce(%p, %z), dimensions={0}, to_apply=%addbf
}
`,
		},
	})
}
