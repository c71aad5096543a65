package passes

import "testing"

func TestOperandConvertFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "a bf16×bf16→f32 dot with a bias is one kernel reading the bf16 operands",
			before: `HloModule mixed
ENTRY %mixed (x: bf16[2,16], w: bf16[16,32], b: f32[32]) -> f32[2,32] {
  %x = bf16[2,16] parameter(0)
  %w = bf16[16,32] parameter(1)
  %b = f32[32] parameter(2)
  %d = f32[2,32] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[2,32] broadcast(%b), dimensions={1}
  ROOT %y = f32[2,32] add(%d, %bb)
}
`,
			after: `HloModule mixed, entry_computation_layout={(bf16[2,16]{1,0}, bf16[16,32]{1,0}, f32[32]{0})->f32[2,32]{1,0}}

%fused_y (param_x: bf16[2,16], param_w: bf16[16,32], param_b: f32[32]) -> f32[2,32] {
  %param_x = bf16[2,16]{1,0} parameter(0)
  %param_w = bf16[16,32]{1,0} parameter(1)
  %param_b = f32[32]{0} parameter(2)
  %d.convert.1.1 = f32[16,32]{1,0} convert(bf16[16,32]{1,0} %param_w)
  %d.convert.2 = f32[2,16]{1,0} convert(bf16[2,16]{1,0} %param_x)
  %bb.1 = f32[2,32]{1,0} broadcast(f32[32]{0} %param_b), dimensions={1}
  %d.1 = f32[2,32]{1,0} dot(f32[2,16]{1,0} %d.convert.2, f32[16,32]{1,0} %d.convert.1.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %y.1 = f32[2,32]{1,0} add(f32[2,32]{1,0} %d.1, f32[2,32]{1,0} %bb.1)
}

ENTRY %mixed (x: bf16[2,16], w: bf16[16,32], b: f32[32]) -> f32[2,32] {
  %x = bf16[2,16]{1,0} parameter(0)
  %w = bf16[16,32]{1,0} parameter(1)
  %b = f32[32]{0} parameter(2)
  ROOT %y = f32[2,32]{1,0} fusion(bf16[2,16]{1,0} %x, bf16[16,32]{1,0} %w, f32[32]{0} %b), kind=kOutput, calls=%fused_y
}

`,
		},
		{
			name: "a bare f16×f16→f32 dot takes its converts; a negated operand stays a kernel of its own, and a convert read twice stays too",
			before: `HloModule bare
ENTRY %bare (x: f16[3,8], w: f16[8,12], v: bf16[8,12]) -> (f32[3,12], f32[3,12], f32[8,12]) {
  %x = f16[3,8] parameter(0)
  %w = f16[8,12] parameter(1)
  %v = bf16[8,12] parameter(2)
  %d = f32[3,12] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %xn = f16[3,8] negate(%x)
  %xc = f32[3,8] convert(%xn)
  %vc = f32[8,12] convert(%v)
  %e = f32[3,12] dot(%xc, %vc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[3,12], f32[3,12], f32[8,12]) tuple(%d, %e, %vc)
}
`,
			after: `HloModule bare, entry_computation_layout={(f16[3,8]{1,0}, f16[8,12]{1,0}, bf16[8,12]{1,0})->(f32[3,12]{1,0}, f32[3,12]{1,0}, f32[8,12]{1,0})}

%fused_e (param_xn: f16[3,8], param_vc: f32[8,12]) -> f32[3,12] {
  %param_xn = f16[3,8]{1,0} parameter(0)
  %param_vc = f32[8,12]{1,0} parameter(1)
  %xc.1 = f32[3,8]{1,0} convert(f16[3,8]{1,0} %param_xn)
  ROOT %e.1 = f32[3,12]{1,0} dot(f32[3,8]{1,0} %xc.1, f32[8,12]{1,0} %param_vc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%fused_d (param_x: f16[3,8], param_w: f16[8,12]) -> f32[3,12] {
  %param_x = f16[3,8]{1,0} parameter(0)
  %param_w = f16[8,12]{1,0} parameter(1)
  %d.convert.1.1 = f32[8,12]{1,0} convert(f16[8,12]{1,0} %param_w)
  %d.convert.2 = f32[3,8]{1,0} convert(f16[3,8]{1,0} %param_x)
  ROOT %d.1 = f32[3,12]{1,0} dot(f32[3,8]{1,0} %d.convert.2, f32[8,12]{1,0} %d.convert.1.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %bare (x: f16[3,8], w: f16[8,12], v: bf16[8,12]) -> (f32[3,12], f32[3,12], f32[8,12]) {
  %x = f16[3,8]{1,0} parameter(0)
  %w = f16[8,12]{1,0} parameter(1)
  %v = bf16[8,12]{1,0} parameter(2)
  %d = f32[3,12]{1,0} fusion(f16[3,8]{1,0} %x, f16[8,12]{1,0} %w), kind=kOutput, calls=%fused_d
  %xn = f16[3,8]{1,0} negate(f16[3,8]{1,0} %x)
  %vc = f32[8,12]{1,0} convert(bf16[8,12]{1,0} %v)
  %e = f32[3,12]{1,0} fusion(f16[3,8]{1,0} %xn, f32[8,12]{1,0} %vc), kind=kOutput, calls=%fused_e
  ROOT %t = (f32[3,12]{1,0}, f32[3,12]{1,0}, f32[8,12]{1,0}) tuple(f32[3,12]{1,0} %d, f32[3,12]{1,0} %e, f32[8,12]{1,0} %vc)
}

`,
		},
	})
}
