package passes

import "testing"

func TestEpilogueFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "a kernel that has taken an extra output takes no dot: the GEMM's output stage writes one array",
			before: `HloModule extra
ENTRY %extra (x: f32[8,16], w: f32[16,32], b: f32[8,32]) -> (f32[8,32], f32[8,32]) {
  %x = f32[8,16] parameter(0)
  %w = f32[16,32] parameter(1)
  %b = f32[8,32] parameter(2)
  %d = f32[8,32] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %eq = pred[8,32] compare(%d, %b), direction=EQ
  %s = f32[8,32] select(%eq, %d, %b)
  %a = f32[8,32] add(%s, %d)
  ROOT %t = (f32[8,32], f32[8,32]) tuple(%a, %s)
}
`,
			disabled: []string{"sibling-fusion"},
			after: `HloModule extra, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0}, f32[8,32]{1,0})->(f32[8,32]{1,0}, f32[8,32]{1,0})}

%fused_a (param_b: f32[8,32], param_d: f32[8,32]) -> (f32[8,32], f32[8,32]) {
  %param_b = f32[8,32]{1,0} parameter(0)
  %param_d = f32[8,32]{1,0} parameter(1)
  %eq.1 = pred[8,32]{1,0} compare(f32[8,32]{1,0} %param_d, f32[8,32]{1,0} %param_b), direction=EQ
  %s.1 = f32[8,32]{1,0} select(pred[8,32]{1,0} %eq.1, f32[8,32]{1,0} %param_d, f32[8,32]{1,0} %param_b)
  %a.1 = f32[8,32]{1,0} add(f32[8,32]{1,0} %s.1, f32[8,32]{1,0} %param_d)
  ROOT %tuple = (f32[8,32]{1,0}, f32[8,32]{1,0}) tuple(f32[8,32]{1,0} %a.1, f32[8,32]{1,0} %s.1)
}

ENTRY %extra (x: f32[8,16], w: f32[16,32], b: f32[8,32]) -> (f32[8,32], f32[8,32]) {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,32]{1,0} parameter(1)
  %b = f32[8,32]{1,0} parameter(2)
  %d = f32[8,32]{1,0} dot(f32[8,16]{1,0} %x, f32[16,32]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a = (f32[8,32]{1,0}, f32[8,32]{1,0}) fusion(f32[8,32]{1,0} %b, f32[8,32]{1,0} %d), kind=kLoop, calls=%fused_a
  %a.2 = f32[8,32]{1,0} get-tuple-element((f32[8,32]{1,0}, f32[8,32]{1,0}) %a), index=0
  %s.2 = f32[8,32]{1,0} get-tuple-element((f32[8,32]{1,0}, f32[8,32]{1,0}) %a), index=1
  ROOT %t = (f32[8,32]{1,0}, f32[8,32]{1,0}) tuple(f32[8,32]{1,0} %a.2, f32[8,32]{1,0} %s.2)
}
`,
		},
		{
			name: "an MLP layer, dot + bias + gelu, is one kernel; the dot's operands stay plain",
			before: `HloModule mlp
ENTRY %mlp (x: f32[8,16], w: f32[16,32], b: f32[32]) -> f32[8,32] {
  %x = f32[8,16] parameter(0)
  %w = f32[16,32] parameter(1)
  %b = f32[32] parameter(2)
  %xn = f32[8,16] negate(%x)
  %d = f32[8,32] dot(%xn, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[8,32] broadcast(%b), dimensions={1}
  %h = f32[8,32] add(%d, %bb)
  %h3 = f32[8,32] multiply(%h, %h)
  %h4 = f32[8,32] multiply(%h3, %h)
  %c = f32[] constant(0.044715)
  %cb = f32[8,32] broadcast(%c), dimensions={}
  %ch4 = f32[8,32] multiply(%cb, %h4)
  %inner = f32[8,32] add(%h, %ch4)
  %t = f32[8,32] tanh(%inner)
  %one = f32[] constant(1)
  %oneb = f32[8,32] broadcast(%one), dimensions={}
  %half = f32[] constant(0.5)
  %halfb = f32[8,32] broadcast(%half), dimensions={}
  %hh = f32[8,32] multiply(%halfb, %h)
  %tp = f32[8,32] add(%oneb, %t)
  ROOT %y = f32[8,32] multiply(%hh, %tp)
}
`,
			after: `HloModule mlp, entry_computation_layout={(f32[8,16]{1,0}, f32[16,32]{1,0}, f32[32]{0})->f32[8,32]{1,0}}

%fused_y (param_w: f32[16,32], param_b: f32[32], param_xn: f32[8,16]) -> f32[8,32] {
  %param_w = f32[16,32]{1,0} parameter(0)
  %param_b = f32[32]{0} parameter(1)
  %param_xn = f32[8,16]{1,0} parameter(2)
  %d.1 = f32[8,32]{1,0} dot(f32[8,16]{1,0} %param_xn, f32[16,32]{1,0} %param_w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb.1 = f32[8,32]{1,0} broadcast(f32[32]{0} %param_b), dimensions={1}
  %h.1 = f32[8,32]{1,0} add(f32[8,32]{1,0} %d.1, f32[8,32]{1,0} %bb.1)
  %h3.1 = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %h.1, f32[8,32]{1,0} %h.1)
  %c.1 = f32[] constant(0.044715)
  %h4.1 = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %h3.1, f32[8,32]{1,0} %h.1)
  %cb.1 = f32[8,32]{1,0} broadcast(f32[] %c.1), dimensions={}
  %ch4.1 = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %cb.1, f32[8,32]{1,0} %h4.1)
  %inner.1 = f32[8,32]{1,0} add(f32[8,32]{1,0} %h.1, f32[8,32]{1,0} %ch4.1)
  %one.1 = f32[] constant(1)
  %half.1 = f32[] constant(0.5)
  %t.1 = f32[8,32]{1,0} tanh(f32[8,32]{1,0} %inner.1)
  %oneb.1 = f32[8,32]{1,0} broadcast(f32[] %one.1), dimensions={}
  %halfb.1 = f32[8,32]{1,0} broadcast(f32[] %half.1), dimensions={}
  %tp.1 = f32[8,32]{1,0} add(f32[8,32]{1,0} %oneb.1, f32[8,32]{1,0} %t.1)
  %hh.1 = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %halfb.1, f32[8,32]{1,0} %h.1)
  ROOT %y.1 = f32[8,32]{1,0} multiply(f32[8,32]{1,0} %hh.1, f32[8,32]{1,0} %tp.1)
}

ENTRY %mlp (x: f32[8,16], w: f32[16,32], b: f32[32]) -> f32[8,32] {
  %x = f32[8,16]{1,0} parameter(0)
  %w = f32[16,32]{1,0} parameter(1)
  %b = f32[32]{0} parameter(2)
  %xn = f32[8,16]{1,0} negate(f32[8,16]{1,0} %x)
  ROOT %y = f32[8,32]{1,0} fusion(f32[16,32]{1,0} %w, f32[32]{0} %b, f32[8,16]{1,0} %xn), kind=kOutput, calls=%fused_y
}
`,
		},
		{
			name: "a transposed product keeps its own kernel; a product two epilogue ops read joins them",
			before: `HloModule across
ENTRY %across (x: f32[8,8], w: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %x = f32[8,8] parameter(0)
  %w = f32[8,8] parameter(1)
  %d = f32[8,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %dt = f32[8,8] transpose(%d), dimensions={1,0}
  %a = f32[8,8] add(%dt, %x)
  %e = f32[8,8] dot(%x, %w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %r = f32[8,8] maximum(%e, %x)
  %s = f32[8,8] subtract(%e, %x)
  %rs = f32[8,8] add(%r, %s)
  ROOT %t = (f32[8,8], f32[8,8]) tuple(%a, %rs)
}
`,
			after: `HloModule across, entry_computation_layout={(f32[8,8]{1,0}, f32[8,8]{1,0})->(f32[8,8]{1,0}, f32[8,8]{1,0})}

%fused_rs (param_x: f32[8,8], param_w: f32[8,8]) -> f32[8,8] {
  %param_x = f32[8,8]{1,0} parameter(0)
  %param_w = f32[8,8]{1,0} parameter(1)
  %e.1 = f32[8,8]{1,0} dot(f32[8,8]{1,0} %param_x, f32[8,8]{1,0} %param_w), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %s.1 = f32[8,8]{1,0} subtract(f32[8,8]{1,0} %e.1, f32[8,8]{1,0} %param_x)
  %r.1 = f32[8,8]{1,0} maximum(f32[8,8]{1,0} %e.1, f32[8,8]{1,0} %param_x)
  ROOT %rs.1 = f32[8,8]{1,0} add(f32[8,8]{1,0} %r.1, f32[8,8]{1,0} %s.1)
}

%fused_a (param_x.1: f32[8,8], param_d: f32[8,8]) -> f32[8,8] {
  %param_x.1 = f32[8,8]{1,0} parameter(0)
  %param_d = f32[8,8]{1,0} parameter(1)
  %dt.1 = f32[8,8]{1,0} transpose(f32[8,8]{1,0} %param_d), dimensions={1,0}
  ROOT %a.1 = f32[8,8]{1,0} add(f32[8,8]{1,0} %dt.1, f32[8,8]{1,0} %param_x.1)
}

ENTRY %across (x: f32[8,8], w: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %x = f32[8,8]{1,0} parameter(0)
  %w = f32[8,8]{1,0} parameter(1)
  %d = f32[8,8]{1,0} dot(f32[8,8]{1,0} %x, f32[8,8]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a = f32[8,8]{1,0} fusion(f32[8,8]{1,0} %x, f32[8,8]{1,0} %d), kind=kLoop, calls=%fused_a
  %rs = f32[8,8]{1,0} fusion(f32[8,8]{1,0} %x, f32[8,8]{1,0} %w), kind=kOutput, calls=%fused_rs
  ROOT %t = (f32[8,8]{1,0}, f32[8,8]{1,0}) tuple(f32[8,8]{1,0} %a, f32[8,8]{1,0} %rs)
}
`,
		},
		{
			name: "a product the output also holds keeps its own kernel",
			before: `HloModule both
ENTRY %both (x: f32[8,8], w: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %x = f32[8,8] parameter(0)
  %w = f32[8,8] parameter(1)
  %d = f32[8,8] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r = f32[8,8] maximum(%d, %x)
  ROOT %t = (f32[8,8], f32[8,8]) tuple(%d, %r)
}
`,
			after: `HloModule both, entry_computation_layout={(f32[8,8]{1,0}, f32[8,8]{1,0})->(f32[8,8]{1,0}, f32[8,8]{1,0})}

ENTRY %both (x: f32[8,8], w: f32[8,8]) -> (f32[8,8], f32[8,8]) {
  %x = f32[8,8]{1,0} parameter(0)
  %w = f32[8,8]{1,0} parameter(1)
  %d = f32[8,8]{1,0} dot(f32[8,8]{1,0} %x, f32[8,8]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r = f32[8,8]{1,0} maximum(f32[8,8]{1,0} %d, f32[8,8]{1,0} %x)
  ROOT %t = (f32[8,8]{1,0}, f32[8,8]{1,0}) tuple(f32[8,8]{1,0} %d, f32[8,8]{1,0} %r)
}
`,
		},
		{
			name: "a separable block is two kernels: depthwise + bias + ReLU6, 1×1 + bias + ReLU6; a grouped convolution keeps its own kernel",
			before: `HloModule separable
ENTRY %separable (x: f32[1,8,8,16], dw: f32[3,3,1,16], db: f32[16], pw: f32[1,1,16,32], pb: f32[32], gw: f32[3,3,8,32]) -> (f32[1,8,8,32], f32[1,8,8,32]) {
  %x = f32[1,8,8,16] parameter(0)
  %dw = f32[3,3,1,16] parameter(1)
  %db = f32[16] parameter(2)
  %pw = f32[1,1,16,32] parameter(3)
  %pb = f32[32] parameter(4)
  %gw = f32[3,3,8,32] parameter(5)
  %lo = f32[] constant(0)
  %hi = f32[] constant(6)
  %d = f32[1,8,8,16] convolution(%x, %dw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
  %dbb = f32[1,8,8,16] broadcast(%db), dimensions={3}
  %da = f32[1,8,8,16] add(%d, %dbb)
  %dr = f32[1,8,8,16] clamp(%lo, %da, %hi)
  %p = f32[1,8,8,32] convolution(%dr, %pw), window={size=1x1}, dim_labels=b01f_01io->b01f
  %pbb = f32[1,8,8,32] broadcast(%pb), dimensions={3}
  %pa = f32[1,8,8,32] add(%p, %pbb)
  %pr = f32[1,8,8,32] clamp(%lo, %pa, %hi)
  %g = f32[1,8,8,32] convolution(%x, %gw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  %gr = f32[1,8,8,32] negate(%g)
  ROOT %t = (f32[1,8,8,32], f32[1,8,8,32]) tuple(%pr, %gr)
}
`,
			after: `HloModule separable, entry_computation_layout={(f32[1,8,8,16]{3,2,1,0}, f32[3,3,1,16]{3,2,1,0}, f32[16]{0}, f32[1,1,16,32]{3,2,1,0}, f32[32]{0}, f32[3,3,8,32]{3,2,1,0})->(f32[1,8,8,32]{3,2,1,0}, f32[1,8,8,32]{3,2,1,0})}

%fused_pr (param_pw: f32[1,1,16,32], param_pb: f32[32], param_dr: f32[1,8,8,16]) -> f32[1,8,8,32] {
  %param_pw = f32[1,1,16,32]{3,2,1,0} parameter(0)
  %param_pb = f32[32]{0} parameter(1)
  %param_dr = f32[1,8,8,16]{3,2,1,0} parameter(2)
  %pbb.1 = f32[1,8,8,32]{3,2,1,0} broadcast(f32[32]{0} %param_pb), dimensions={3}
  %p.1 = f32[1,8,8,32]{3,2,1,0} convolution(f32[1,8,8,16]{3,2,1,0} %param_dr, f32[1,1,16,32]{3,2,1,0} %param_pw), window={size=1x1}, dim_labels=b01f_01io->b01f
  %hi.1 = f32[] constant(6)
  %pa.1 = f32[1,8,8,32]{3,2,1,0} add(f32[1,8,8,32]{3,2,1,0} %p.1, f32[1,8,8,32]{3,2,1,0} %pbb.1)
  %lo.1 = f32[] constant(0)
  ROOT %pr.1 = f32[1,8,8,32]{3,2,1,0} clamp(f32[] %lo.1, f32[1,8,8,32]{3,2,1,0} %pa.1, f32[] %hi.1)
}

%fused_dr (param_x: f32[1,8,8,16], param_dw: f32[3,3,1,16], param_db: f32[16]) -> f32[1,8,8,16] {
  %param_x = f32[1,8,8,16]{3,2,1,0} parameter(0)
  %param_dw = f32[3,3,1,16]{3,2,1,0} parameter(1)
  %param_db = f32[16]{0} parameter(2)
  %dbb.1 = f32[1,8,8,16]{3,2,1,0} broadcast(f32[16]{0} %param_db), dimensions={3}
  %d.1 = f32[1,8,8,16]{3,2,1,0} convolution(f32[1,8,8,16]{3,2,1,0} %param_x, f32[3,3,1,16]{3,2,1,0} %param_dw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=16
  %hi.2 = f32[] constant(6)
  %da.1 = f32[1,8,8,16]{3,2,1,0} add(f32[1,8,8,16]{3,2,1,0} %d.1, f32[1,8,8,16]{3,2,1,0} %dbb.1)
  %lo.2 = f32[] constant(0)
  ROOT %dr.1 = f32[1,8,8,16]{3,2,1,0} clamp(f32[] %lo.2, f32[1,8,8,16]{3,2,1,0} %da.1, f32[] %hi.2)
}

ENTRY %separable (x: f32[1,8,8,16], dw: f32[3,3,1,16], db: f32[16], pw: f32[1,1,16,32], pb: f32[32], gw: f32[3,3,8,32]) -> (f32[1,8,8,32], f32[1,8,8,32]) {
  %x = f32[1,8,8,16]{3,2,1,0} parameter(0)
  %dw = f32[3,3,1,16]{3,2,1,0} parameter(1)
  %db = f32[16]{0} parameter(2)
  %pw = f32[1,1,16,32]{3,2,1,0} parameter(3)
  %pb = f32[32]{0} parameter(4)
  %gw = f32[3,3,8,32]{3,2,1,0} parameter(5)
  %g = f32[1,8,8,32]{3,2,1,0} convolution(f32[1,8,8,16]{3,2,1,0} %x, f32[3,3,8,32]{3,2,1,0} %gw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
  %dr = f32[1,8,8,16]{3,2,1,0} fusion(f32[1,8,8,16]{3,2,1,0} %x, f32[3,3,1,16]{3,2,1,0} %dw, f32[16]{0} %db), kind=kOutput, calls=%fused_dr
  %gr = f32[1,8,8,32]{3,2,1,0} negate(f32[1,8,8,32]{3,2,1,0} %g)
  %pr = f32[1,8,8,32]{3,2,1,0} fusion(f32[1,1,16,32]{3,2,1,0} %pw, f32[32]{0} %pb, f32[1,8,8,16]{3,2,1,0} %dr), kind=kOutput, calls=%fused_pr
  ROOT %t = (f32[1,8,8,32]{3,2,1,0}, f32[1,8,8,32]{3,2,1,0}) tuple(f32[1,8,8,32]{3,2,1,0} %pr, f32[1,8,8,32]{3,2,1,0} %gr)
}
`,
		},
	})
}
