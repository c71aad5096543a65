package passes

import "testing"

func TestMultiOutputFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "an Adam update of one tensor is one kernel writing p, m and v",
			before: `HloModule adam

ENTRY %adam (p: f32[4,8], g: f32[4,8], m: f32[4,8], v: f32[4,8], lr: f32[]) -> (f32[4,8], f32[4,8], f32[4,8]) {
  %p = f32[4,8] parameter(0)
  %g = f32[4,8] parameter(1)
  %m = f32[4,8] parameter(2)
  %v = f32[4,8] parameter(3)
  %lr = f32[] parameter(4)
  %b1 = f32[] constant(0.9)
  %b1b = f32[4,8] broadcast(%b1), dimensions={}
  %c1 = f32[] constant(0.1)
  %c1b = f32[4,8] broadcast(%c1), dimensions={}
  %b2 = f32[] constant(0.999)
  %b2b = f32[4,8] broadcast(%b2), dimensions={}
  %c2 = f32[] constant(0.001)
  %c2b = f32[4,8] broadcast(%c2), dimensions={}
  %eps = f32[] constant(1e-08)
  %epsb = f32[4,8] broadcast(%eps), dimensions={}
  %lrb = f32[4,8] broadcast(%lr), dimensions={}
  %m1 = f32[4,8] multiply(%b1b, %m)
  %m2 = f32[4,8] multiply(%c1b, %g)
  %mn = f32[4,8] add(%m1, %m2)
  %gg = f32[4,8] multiply(%g, %g)
  %v1 = f32[4,8] multiply(%b2b, %v)
  %v2 = f32[4,8] multiply(%c2b, %gg)
  %vn = f32[4,8] add(%v1, %v2)
  %sq = f32[4,8] sqrt(%vn)
  %den = f32[4,8] add(%sq, %epsb)
  %r = f32[4,8] divide(%mn, %den)
  %step = f32[4,8] multiply(%lrb, %r)
  %pn = f32[4,8] subtract(%p, %step)
  ROOT %out = (f32[4,8], f32[4,8], f32[4,8]) tuple(%pn, %mn, %vn)
}
`,
			after: `HloModule adam, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[])->(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0})}

%fused_pn (param_p: f32[4,8], param_g: f32[4,8], param_m: f32[4,8], param_v: f32[4,8], param_lr: f32[]) -> (f32[4,8], f32[4,8], f32[4,8]) {
  %param_p = f32[4,8]{1,0} parameter(0)
  %param_g = f32[4,8]{1,0} parameter(1)
  %param_m = f32[4,8]{1,0} parameter(2)
  %param_v = f32[4,8]{1,0} parameter(3)
  %param_lr = f32[] parameter(4)
  %c2.1 = f32[] constant(0.001)
  %b2.1 = f32[] constant(0.999)
  %gg.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %param_g, f32[4,8]{1,0} %param_g)
  %c2b.1 = f32[4,8]{1,0} broadcast(f32[] %c2.1), dimensions={}
  %b2b.1 = f32[4,8]{1,0} broadcast(f32[] %b2.1), dimensions={}
  %v2.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %c2b.1, f32[4,8]{1,0} %gg.1)
  %v1.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %b2b.1, f32[4,8]{1,0} %param_v)
  %c1.1 = f32[] constant(0.1)
  %b1.1 = f32[] constant(0.9)
  %eps.1 = f32[] constant(1e-08)
  %vn.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %v1.1, f32[4,8]{1,0} %v2.1)
  %c1b.1 = f32[4,8]{1,0} broadcast(f32[] %c1.1), dimensions={}
  %b1b.1 = f32[4,8]{1,0} broadcast(f32[] %b1.1), dimensions={}
  %epsb.1 = f32[4,8]{1,0} broadcast(f32[] %eps.1), dimensions={}
  %sq.1 = f32[4,8]{1,0} sqrt(f32[4,8]{1,0} %vn.1)
  %m2.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %c1b.1, f32[4,8]{1,0} %param_g)
  %m1.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %b1b.1, f32[4,8]{1,0} %param_m)
  %den.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %sq.1, f32[4,8]{1,0} %epsb.1)
  %mn.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %m1.1, f32[4,8]{1,0} %m2.1)
  %r.1 = f32[4,8]{1,0} divide(f32[4,8]{1,0} %mn.1, f32[4,8]{1,0} %den.1)
  %lrb.1 = f32[4,8]{1,0} broadcast(f32[] %param_lr), dimensions={}
  %step.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %lrb.1, f32[4,8]{1,0} %r.1)
  %pn.1 = f32[4,8]{1,0} subtract(f32[4,8]{1,0} %param_p, f32[4,8]{1,0} %step.1)
  ROOT %tuple = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %pn.1, f32[4,8]{1,0} %mn.1, f32[4,8]{1,0} %vn.1)
}

ENTRY %adam (p: f32[4,8], g: f32[4,8], m: f32[4,8], v: f32[4,8], lr: f32[]) -> (f32[4,8], f32[4,8], f32[4,8]) {
  %p = f32[4,8]{1,0} parameter(0)
  %g = f32[4,8]{1,0} parameter(1)
  %m = f32[4,8]{1,0} parameter(2)
  %v = f32[4,8]{1,0} parameter(3)
  %lr = f32[] parameter(4)
  %pn = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) fusion(f32[4,8]{1,0} %p, f32[4,8]{1,0} %g, f32[4,8]{1,0} %m, f32[4,8]{1,0} %v, f32[] %lr), kind=kLoop, calls=%fused_pn
  %pn.2 = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %pn), index=0
  %mn.2 = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %pn), index=1
  %vn.2 = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %pn), index=2
  ROOT %out = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %pn.2, f32[4,8]{1,0} %mn.2, f32[4,8]{1,0} %vn.2)
}
`,
		},
		{
			name: "a returned value another kernel of other dims reads keeps its own kernel",
			before: `HloModule other
ENTRY %other (x: f32[4,8], y: f32[8]) -> (f32[4,8], f32[8]) {
  %x = f32[4,8] parameter(0)
  %y = f32[8] parameter(1)
  %e = f32[8] negate(%y)
  %eb = f32[4,8] broadcast(%e), dimensions={1}
  %s = f32[4,8] add(%x, %eb)
  ROOT %t = (f32[4,8], f32[8]) tuple(%s, %e)
}
`,
			after: `HloModule other, entry_computation_layout={(f32[4,8]{1,0}, f32[8]{0})->(f32[4,8]{1,0}, f32[8]{0})}

%fused_s (param_x: f32[4,8], param_e: f32[8]) -> f32[4,8] {
  %param_x = f32[4,8]{1,0} parameter(0)
  %param_e = f32[8]{0} parameter(1)
  %eb.1 = f32[4,8]{1,0} broadcast(f32[8]{0} %param_e), dimensions={1}
  ROOT %s.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %param_x, f32[4,8]{1,0} %eb.1)
}

ENTRY %other (x: f32[4,8], y: f32[8]) -> (f32[4,8], f32[8]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[8]{0} parameter(1)
  %e = f32[8]{0} negate(f32[8]{0} %y)
  %s = f32[4,8]{1,0} fusion(f32[4,8]{1,0} %x, f32[8]{0} %e), kind=kLoop, calls=%fused_s
  ROOT %t = (f32[4,8]{1,0}, f32[8]{0}) tuple(f32[4,8]{1,0} %s, f32[8]{0} %e)
}
`,
		},
	})
}
