package passes

import "testing"

func TestSiblingFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "three loop kernels that read x become one kernel writing their three outputs",
			before: `HloModule siblings
ENTRY %siblings (x: f32[4,8], y: f32[4,8], z: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) {
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %z = f32[4,8] parameter(2)
  %w = f32[64,64] parameter(3)
  %n = f32[4,8] negate(%x)
  %a = f32[4,8] add(%n, %y)
  %m = f32[4,8] multiply(%x, %z)
  %s = f32[4,8] sqrt(%m)
  %t = f32[4,8] tanh(%x)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) tuple(%a, %s, %t, %wn)
}
`,
			after: `HloModule siblings, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0})->(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0})}

%fused_siblings_t (param_x.3: f32[4,8], param_y.2: f32[4,8], param_z.2: f32[4,8]) -> (f32[4,8], f32[4,8], f32[4,8]) {
  %param_x.3 = f32[4,8]{1,0} parameter(0)
  %param_y.2 = f32[4,8]{1,0} parameter(1)
  %param_z.2 = f32[4,8]{1,0} parameter(2)
  %t.1 = f32[4,8]{1,0} tanh(f32[4,8]{1,0} %param_x.3)
  %n.1 = f32[4,8]{1,0} negate(f32[4,8]{1,0} %param_x.3)
  %a.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %n.1, f32[4,8]{1,0} %param_y.2)
  %m.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %param_x.3, f32[4,8]{1,0} %param_z.2)
  %s.1 = f32[4,8]{1,0} sqrt(f32[4,8]{1,0} %m.1)
  ROOT %tuple.1 = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %t.1, f32[4,8]{1,0} %a.1, f32[4,8]{1,0} %s.1)
}

ENTRY %siblings (x: f32[4,8], y: f32[4,8], z: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  %z = f32[4,8]{1,0} parameter(2)
  %w = f32[64,64]{1,0} parameter(3)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %siblings_t = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) fusion(f32[4,8]{1,0} %x, f32[4,8]{1,0} %y, f32[4,8]{1,0} %z), kind=kLoop, calls=%fused_siblings_t
  %t = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %siblings_t), index=0
  %a = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %siblings_t), index=1
  %s = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}) %siblings_t), index=2
  ROOT %out = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0}) tuple(f32[4,8]{1,0} %a, f32[4,8]{1,0} %s, f32[4,8]{1,0} %t, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "a kernel that reads, through a reduction, what its sibling writes stays apart (the merge would make a cycle)",
			before: `HloModule cycle

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %cycle (x: f32[8,8], w: f32[64,64]) -> (f32[8,8], f32[8,8], f32[64,64]) {
  %x = f32[8,8] parameter(0)
  %w = f32[64,64] parameter(1)
  %a = f32[8,8] negate(%x)
  %zero = f32[] constant(0)
  %c = f32[8] reduce(%a, %zero), dimensions={0}, to_apply=%add
  %cb = f32[8,8] broadcast(%c), dimensions={1}
  %b = f32[8,8] add(%x, %cb)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[8,8], f32[8,8], f32[64,64]) tuple(%a, %b, %wn)
}
`,
			after: `HloModule cycle, entry_computation_layout={(f32[8,8]{1,0}, f32[64,64]{1,0})->(f32[8,8]{1,0}, f32[8,8]{1,0}, f32[64,64]{1,0})}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_b.1 (param_x: f32[8,8], param_c: f32[8]) -> f32[8,8] {
  %param_x = f32[8,8]{1,0} parameter(0)
  %param_c = f32[8]{0} parameter(1)
  %cb.1 = f32[8,8]{1,0} broadcast(f32[8]{0} %param_c), dimensions={1}
  ROOT %b.1.1 = f32[8,8]{1,0} add(f32[8,8]{1,0} %param_x, f32[8,8]{1,0} %cb.1)
}

%fused_c (param_a.1: f32[8,8]) -> f32[8] {
  %param_a.1 = f32[8,8]{1,0} parameter(0)
  %zero.1 = f32[] constant(0)
  ROOT %c.1 = f32[8]{0} reduce(f32[8,8]{1,0} %param_a.1, f32[] %zero.1), dimensions={0}, to_apply=%add
}

ENTRY %cycle (x: f32[8,8], w: f32[64,64]) -> (f32[8,8], f32[8,8], f32[64,64]) {
  %x = f32[8,8]{1,0} parameter(0)
  %w = f32[64,64]{1,0} parameter(1)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %a.1 = f32[8,8]{1,0} negate(f32[8,8]{1,0} %x)
  %c = f32[8]{0} fusion(f32[8,8]{1,0} %a.1), kind=kInput, calls=%fused_c
  %b.1 = f32[8,8]{1,0} fusion(f32[8,8]{1,0} %x, f32[8]{0} %c), kind=kLoop, calls=%fused_b.1
  ROOT %out = (f32[8,8]{1,0}, f32[8,8]{1,0}, f32[64,64]{1,0}) tuple(f32[8,8]{1,0} %a.1, f32[8,8]{1,0} %b.1, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "kernels of different dims stay apart (one kernel writes all its outputs at one index)",
			before: `HloModule dims
ENTRY %dims (x: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[8,4], f32[64,64]) {
  %x = f32[4,8] parameter(0)
  %w = f32[64,64] parameter(1)
  %a = f32[4,8] negate(%x)
  %tr = f32[8,4] transpose(%x), dimensions={1,0}
  %b = f32[8,4] abs(%tr)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[4,8], f32[8,4], f32[64,64]) tuple(%a, %b, %wn)
}
`,
			after: `HloModule dims, entry_computation_layout={(f32[4,8]{1,0}, f32[64,64]{1,0})->(f32[4,8]{1,0}, f32[8,4]{1,0}, f32[64,64]{1,0})}

%fused_b (param_x: f32[4,8]) -> f32[8,4] {
  %param_x = f32[4,8]{1,0} parameter(0)
  %tr.1 = f32[8,4]{1,0} transpose(f32[4,8]{1,0} %param_x), dimensions={1,0}
  ROOT %b.1 = f32[8,4]{1,0} abs(f32[8,4]{1,0} %tr.1)
}

ENTRY %dims (x: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[8,4], f32[64,64]) {
  %x = f32[4,8]{1,0} parameter(0)
  %w = f32[64,64]{1,0} parameter(1)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %a = f32[4,8]{1,0} negate(f32[4,8]{1,0} %x)
  %b = f32[8,4]{1,0} fusion(f32[4,8]{1,0} %x), kind=kLoop, calls=%fused_b
  ROOT %out = (f32[4,8]{1,0}, f32[8,4]{1,0}, f32[64,64]{1,0}) tuple(f32[4,8]{1,0} %a, f32[8,4]{1,0} %b, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "the instruction bound keeps a merge small: only the pair that fits merges",
			cfg:  Config{MaxFusedInstructions: 3},
			before: `HloModule cap
ENTRY %siblings (x: f32[4,8], y: f32[4,8], z: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) {
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %z = f32[4,8] parameter(2)
  %w = f32[64,64] parameter(3)
  %n = f32[4,8] negate(%x)
  %a = f32[4,8] add(%n, %y)
  %m = f32[4,8] multiply(%x, %z)
  %s = f32[4,8] sqrt(%m)
  %t = f32[4,8] tanh(%x)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) tuple(%a, %s, %t, %wn)
}
`,
			after: `HloModule cap, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0})->(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0})}

%fused_s (param_x: f32[4,8], param_z: f32[4,8]) -> f32[4,8] {
  %param_x = f32[4,8]{1,0} parameter(0)
  %param_z = f32[4,8]{1,0} parameter(1)
  %m.1 = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %param_x, f32[4,8]{1,0} %param_z)
  ROOT %s.1 = f32[4,8]{1,0} sqrt(f32[4,8]{1,0} %m.1)
}

%fused_siblings_a (param_x.2: f32[4,8], param_y.1: f32[4,8]) -> (f32[4,8], f32[4,8]) {
  %param_x.2 = f32[4,8]{1,0} parameter(0)
  %param_y.1 = f32[4,8]{1,0} parameter(1)
  %n.1 = f32[4,8]{1,0} negate(f32[4,8]{1,0} %param_x.2)
  %a.1 = f32[4,8]{1,0} add(f32[4,8]{1,0} %n.1, f32[4,8]{1,0} %param_y.1)
  %t.1 = f32[4,8]{1,0} tanh(f32[4,8]{1,0} %param_x.2)
  ROOT %tuple = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %a.1, f32[4,8]{1,0} %t.1)
}

ENTRY %siblings (x: f32[4,8], y: f32[4,8], z: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[4,8], f32[4,8], f32[64,64]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  %z = f32[4,8]{1,0} parameter(2)
  %w = f32[64,64]{1,0} parameter(3)
  %s = f32[4,8]{1,0} fusion(f32[4,8]{1,0} %x, f32[4,8]{1,0} %z), kind=kLoop, calls=%fused_s
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %siblings_a = (f32[4,8]{1,0}, f32[4,8]{1,0}) fusion(f32[4,8]{1,0} %x, f32[4,8]{1,0} %y), kind=kLoop, calls=%fused_siblings_a
  %a = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}) %siblings_a), index=0
  %t = f32[4,8]{1,0} get-tuple-element((f32[4,8]{1,0}, f32[4,8]{1,0}) %siblings_a), index=1
  ROOT %out = (f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0}) tuple(f32[4,8]{1,0} %a, f32[4,8]{1,0} %s, f32[4,8]{1,0} %t, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "a merge that would raise the modelled peak by half is not made",
			before: `HloModule memory
ENTRY %memory (x: f32[4,8], y: f32[4,8], z: f32[4,8]) -> (f32[4,8], f32[4,8]) {
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %z = f32[4,8] parameter(2)
  %a = f32[4,8] add(%x, %y)
  %s = f32[4,8] multiply(%x, %z)
  ROOT %out = (f32[4,8], f32[4,8]) tuple(%a, %s)
}
`,
			after: `HloModule memory, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[4,8]{1,0})->(f32[4,8]{1,0}, f32[4,8]{1,0})}

ENTRY %memory (x: f32[4,8], y: f32[4,8], z: f32[4,8]) -> (f32[4,8], f32[4,8]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  %z = f32[4,8]{1,0} parameter(2)
  %a = f32[4,8]{1,0} add(f32[4,8]{1,0} %x, f32[4,8]{1,0} %y)
  %s = f32[4,8]{1,0} multiply(f32[4,8]{1,0} %x, f32[4,8]{1,0} %z)
  ROOT %out = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(f32[4,8]{1,0} %a, f32[4,8]{1,0} %s)
}
`,
		},
		{
			name: "two column reductions of one input (a layer norm's bias and scale gradients) become one reduction of two values",
			before: `HloModule grads

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %grads (dy: f32[16,8], xhat: f32[16,8], w: f32[64,64]) -> (f32[8], f32[8], f32[64,64]) {
  %dy = f32[16,8] parameter(0)
  %xhat = f32[16,8] parameter(1)
  %w = f32[64,64] parameter(2)
  %zero = f32[] constant(0)
  %dbias = f32[8] reduce(%dy, %zero), dimensions={0}, to_apply=%add
  %p = f32[16,8] multiply(%dy, %xhat)
  %dscale = f32[8] reduce(%p, %zero), dimensions={0}, to_apply=%add
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[8], f32[8], f32[64,64]) tuple(%dbias, %dscale, %wn)
}
`,
			after: `HloModule grads, entry_computation_layout={(f32[16,8]{1,0}, f32[16,8]{1,0}, f32[64,64]{1,0})->(f32[8]{0}, f32[8]{0}, f32[64,64]{1,0})}

%siblings_add (a.1: f32[], a.2: f32[], b.1: f32[], b.2: f32[]) -> (f32[], f32[]) {
  %a.1 = f32[] parameter(0)
  %a.2 = f32[] parameter(1)
  %b.1 = f32[] parameter(2)
  %b.2 = f32[] parameter(3)
  %s.1 = f32[] add(f32[] %a.1, f32[] %b.1)
  %s.2 = f32[] add(f32[] %a.2, f32[] %b.2)
  ROOT %tuple = (f32[], f32[]) tuple(f32[] %s.1, f32[] %s.2)
}

%fused_siblings_dbias (param_dy.2: f32[16,8], param_xhat.1: f32[16,8]) -> (f32[8], f32[8]) {
  %param_dy.2 = f32[16,8]{1,0} parameter(0)
  %param_xhat.1 = f32[16,8]{1,0} parameter(1)
  %zero.2 = f32[] constant(0)
  %p.1 = f32[16,8]{1,0} multiply(f32[16,8]{1,0} %param_dy.2, f32[16,8]{1,0} %param_xhat.1)
  ROOT %dbias.1.1 = (f32[8]{0}, f32[8]{0}) reduce(f32[16,8]{1,0} %param_dy.2, f32[16,8]{1,0} %p.1, f32[] %zero.2, f32[] %zero.2), dimensions={0}, to_apply=%siblings_add
}

ENTRY %grads (dy: f32[16,8], xhat: f32[16,8], w: f32[64,64]) -> (f32[8], f32[8], f32[64,64]) {
  %dy = f32[16,8]{1,0} parameter(0)
  %xhat = f32[16,8]{1,0} parameter(1)
  %w = f32[64,64]{1,0} parameter(2)
  %siblings_dbias = (f32[8]{0}, f32[8]{0}) fusion(f32[16,8]{1,0} %dy, f32[16,8]{1,0} %xhat), kind=kInput, calls=%fused_siblings_dbias
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %dbias = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %siblings_dbias), index=0
  %dscale = f32[8]{0} get-tuple-element((f32[8]{0}, f32[8]{0}) %siblings_dbias), index=1
  ROOT %out = (f32[8]{0}, f32[8]{0}, f32[64,64]{1,0}) tuple(f32[8]{0} %dbias, f32[8]{0} %dscale, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "kernels that read the same scalar merge too: the bias corrections β1^t and β2^t of Adam",
			before: `HloModule powers
ENTRY %powers (step: f32[], w: f32[64,64]) -> (f32[], f32[], f32[64,64]) {
  %step = f32[] parameter(0)
  %w = f32[64,64] parameter(1)
  %b1 = f32[] constant(0.9)
  %b2 = f32[] constant(0.999)
  %p1 = f32[] power(%b1, %step)
  %p2 = f32[] power(%b2, %step)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[], f32[], f32[64,64]) tuple(%p1, %p2, %wn)
}
`,
			after: `HloModule powers, entry_computation_layout={(f32[], f32[64,64]{1,0})->(f32[], f32[], f32[64,64]{1,0})}

%fused_siblings_p1 (param_step.2: f32[]) -> (f32[], f32[]) {
  %param_step.2 = f32[] parameter(0)
  %b1.1 = f32[] constant(0.9)
  %p1.1 = f32[] power(f32[] %b1.1, f32[] %param_step.2)
  %b2.1 = f32[] constant(0.999)
  %p2.1 = f32[] power(f32[] %b2.1, f32[] %param_step.2)
  ROOT %tuple = (f32[], f32[]) tuple(f32[] %p1.1, f32[] %p2.1)
}

ENTRY %powers (step: f32[], w: f32[64,64]) -> (f32[], f32[], f32[64,64]) {
  %step = f32[] parameter(0)
  %w = f32[64,64]{1,0} parameter(1)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %siblings_p1 = (f32[], f32[]) fusion(f32[] %step), kind=kLoop, calls=%fused_siblings_p1
  %p1 = f32[] get-tuple-element((f32[], f32[]) %siblings_p1), index=0
  %p2 = f32[] get-tuple-element((f32[], f32[]) %siblings_p1), index=1
  ROOT %out = (f32[], f32[], f32[64,64]{1,0}) tuple(f32[] %p1, f32[] %p2, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "two unfused reductions of one computed value become one variadic reduce, not a fusion of one op",
			before: `HloModule lone

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%max (c: f32[], d: f32[]) -> f32[] {
  %c = f32[] parameter(0)
  %d = f32[] parameter(1)
  ROOT %m = f32[] maximum(%c, %d)
}

ENTRY %lone (x: f32[16,8], y: f32[16,8], w: f32[64,64], zero: f32[]) -> (f32[], f32[], f32[16,8], f32[64,64]) {
  %x = f32[16,8] parameter(0)
  %y = f32[16,8] parameter(1)
  %w = f32[64,64] parameter(2)
  %zero = f32[] parameter(3)
  %pw = f32[16,8] power(%x, %y)
  %sum = f32[] reduce(%pw, %zero), dimensions={0,1}, to_apply=%add
  %top = f32[] reduce(%pw, %zero), dimensions={0,1}, to_apply=%max
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[], f32[], f32[16,8], f32[64,64]) tuple(%sum, %top, %pw, %wn)
}
`,
			after: `HloModule lone, entry_computation_layout={(f32[16,8]{1,0}, f32[16,8]{1,0}, f32[64,64]{1,0}, f32[])->(f32[], f32[], f32[16,8]{1,0}, f32[64,64]{1,0})}

%siblings_add (a.1: f32[], c.1: f32[], b.1: f32[], d.1: f32[]) -> (f32[], f32[]) {
  %a.1 = f32[] parameter(0)
  %c.1 = f32[] parameter(1)
  %b.1 = f32[] parameter(2)
  %d.1 = f32[] parameter(3)
  %s.1 = f32[] add(f32[] %a.1, f32[] %b.1)
  %m.1 = f32[] maximum(f32[] %c.1, f32[] %d.1)
  ROOT %tuple = (f32[], f32[]) tuple(f32[] %s.1, f32[] %m.1)
}

ENTRY %lone (x: f32[16,8], y: f32[16,8], w: f32[64,64], zero: f32[]) -> (f32[], f32[], f32[16,8], f32[64,64]) {
  %x = f32[16,8]{1,0} parameter(0)
  %y = f32[16,8]{1,0} parameter(1)
  %w = f32[64,64]{1,0} parameter(2)
  %zero = f32[] parameter(3)
  %pw = f32[16,8]{1,0} power(f32[16,8]{1,0} %x, f32[16,8]{1,0} %y)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  %siblings_sum = (f32[], f32[]) reduce(f32[16,8]{1,0} %pw, f32[16,8]{1,0} %pw, f32[] %zero, f32[] %zero), dimensions={0,1}, to_apply=%siblings_add
  %sum = f32[] get-tuple-element((f32[], f32[]) %siblings_sum), index=0
  %top = f32[] get-tuple-element((f32[], f32[]) %siblings_sum), index=1
  ROOT %out = (f32[], f32[], f32[16,8]{1,0}, f32[64,64]{1,0}) tuple(f32[] %sum, f32[] %top, f32[16,8]{1,0} %pw, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "a dead kernel (DCE off) is merged with no live sibling: it would be computed for nothing",
			before: `HloModule dead
ENTRY %dead (x: f32[4,8], y: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[64,64]) {
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %w = f32[64,64] parameter(2)
  %a = f32[4,8] add(%x, %y)
  %s = f32[4,8] multiply(%x, %y)
  %sn = f32[4,8] negate(%s)
  %wn = f32[64,64] negate(%w)
  ROOT %out = (f32[4,8], f32[64,64]) tuple(%a, %wn)
}
`,
			disabled: []string{"dce", "fusion"},
			after: `HloModule dead, entry_computation_layout={(f32[4,8]{1,0}, f32[4,8]{1,0}, f32[64,64]{1,0})->(f32[4,8]{1,0}, f32[64,64]{1,0})}

ENTRY %dead (x: f32[4,8], y: f32[4,8], w: f32[64,64]) -> (f32[4,8], f32[64,64]) {
  %x = f32[4,8]{1,0} parameter(0)
  %y = f32[4,8]{1,0} parameter(1)
  %w = f32[64,64]{1,0} parameter(2)
  %a = f32[4,8]{1,0} add(f32[4,8]{1,0} %x, f32[4,8]{1,0} %y)
  %wn = f32[64,64]{1,0} negate(f32[64,64]{1,0} %w)
  ROOT %out = (f32[4,8]{1,0}, f32[64,64]{1,0}) tuple(f32[4,8]{1,0} %a, f32[64,64]{1,0} %wn)
}
`,
		},
		{
			name: "reductions long enough for the workgroup tree keep one kernel each (its subgroup path folds one value)",
			before: `HloModule bigred

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %bigred (dy: f32[2048,2], xhat: f32[2048,2], w: f32[256,256]) -> (f32[2], f32[2], f32[256,256]) {
  %dy = f32[2048,2] parameter(0)
  %xhat = f32[2048,2] parameter(1)
  %w = f32[256,256] parameter(2)
  %zero = f32[] constant(0)
  %dbias = f32[2] reduce(%dy, %zero), dimensions={0}, to_apply=%add
  %p = f32[2048,2] multiply(%dy, %xhat)
  %dscale = f32[2] reduce(%p, %zero), dimensions={0}, to_apply=%add
  %wn = f32[256,256] negate(%w)
  ROOT %out = (f32[2], f32[2], f32[256,256]) tuple(%dbias, %dscale, %wn)
}
`,
			after: `HloModule bigred, entry_computation_layout={(f32[2048,2]{1,0}, f32[2048,2]{1,0}, f32[256,256]{1,0})->(f32[2]{0}, f32[2]{0}, f32[256,256]{1,0})}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_dscale (param_dy: f32[2048,2], param_xhat: f32[2048,2]) -> f32[2] {
  %param_dy = f32[2048,2]{1,0} parameter(0)
  %param_xhat = f32[2048,2]{1,0} parameter(1)
  %zero.1 = f32[] constant(0)
  %p.1 = f32[2048,2]{1,0} multiply(f32[2048,2]{1,0} %param_dy, f32[2048,2]{1,0} %param_xhat)
  ROOT %dscale.1 = f32[2]{0} reduce(f32[2048,2]{1,0} %p.1, f32[] %zero.1), dimensions={0}, to_apply=%add
}

%fused_dbias (param_dy.1: f32[2048,2]) -> f32[2] {
  %param_dy.1 = f32[2048,2]{1,0} parameter(0)
  %zero.2 = f32[] constant(0)
  ROOT %dbias.1 = f32[2]{0} reduce(f32[2048,2]{1,0} %param_dy.1, f32[] %zero.2), dimensions={0}, to_apply=%add
}

ENTRY %bigred (dy: f32[2048,2], xhat: f32[2048,2], w: f32[256,256]) -> (f32[2], f32[2], f32[256,256]) {
  %dy = f32[2048,2]{1,0} parameter(0)
  %xhat = f32[2048,2]{1,0} parameter(1)
  %w = f32[256,256]{1,0} parameter(2)
  %dbias = f32[2]{0} fusion(f32[2048,2]{1,0} %dy), kind=kInput, calls=%fused_dbias
  %dscale = f32[2]{0} fusion(f32[2048,2]{1,0} %dy, f32[2048,2]{1,0} %xhat), kind=kInput, calls=%fused_dscale
  %wn = f32[256,256]{1,0} negate(f32[256,256]{1,0} %w)
  ROOT %out = (f32[2]{0}, f32[2]{0}, f32[256,256]{1,0}) tuple(f32[2]{0} %dbias, f32[2]{0} %dscale, f32[256,256]{1,0} %wn)
}
`,
		},
		{
			name: "an elementwise kernel joins a row kernel of its dims (softmax's backward) as a second output of the row sweep",
			before: `HloModule rows

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %rows (y: f32[16,64], dy: f32[16,64], w: f32[128,128]) -> (f32[16,64], f32[16,64], f32[128,128]) {
  %y = f32[16,64] parameter(0)
  %dy = f32[16,64] parameter(1)
  %w = f32[128,128] parameter(2)
  %zero = f32[] constant(0)
  %p = f32[16,64] multiply(%y, %dy)
  %s = f32[16] reduce(%p, %zero), dimensions={1}, to_apply=%add
  %sb = f32[16,64] broadcast(%s), dimensions={0}
  %d = f32[16,64] subtract(%dy, %sb)
  %dx = f32[16,64] multiply(%y, %d)
  %e = f32[16,64] exponential(%y)
  %wn = f32[128,128] negate(%w)
  ROOT %out = (f32[16,64], f32[16,64], f32[128,128]) tuple(%dx, %e, %wn)
}
`,
			after: `HloModule rows, entry_computation_layout={(f32[16,64]{1,0}, f32[16,64]{1,0}, f32[128,128]{1,0})->(f32[16,64]{1,0}, f32[16,64]{1,0}, f32[128,128]{1,0})}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_siblings_dx (param_y.1: f32[16,64], param_dy.1: f32[16,64]) -> (f32[16,64], f32[16,64]) {
  %param_y.1 = f32[16,64]{1,0} parameter(0)
  %param_dy.1 = f32[16,64]{1,0} parameter(1)
  %zero.1 = f32[] constant(0)
  %p.1 = f32[16,64]{1,0} multiply(f32[16,64]{1,0} %param_y.1, f32[16,64]{1,0} %param_dy.1)
  %s.1.1 = f32[16]{0} reduce(f32[16,64]{1,0} %p.1, f32[] %zero.1), dimensions={1}, to_apply=%add
  %sb.1 = f32[16,64]{1,0} broadcast(f32[16]{0} %s.1.1), dimensions={0}
  %d.1 = f32[16,64]{1,0} subtract(f32[16,64]{1,0} %param_dy.1, f32[16,64]{1,0} %sb.1)
  %dx.1 = f32[16,64]{1,0} multiply(f32[16,64]{1,0} %param_y.1, f32[16,64]{1,0} %d.1)
  %e.1 = f32[16,64]{1,0} exponential(f32[16,64]{1,0} %param_y.1)
  ROOT %tuple = (f32[16,64]{1,0}, f32[16,64]{1,0}) tuple(f32[16,64]{1,0} %dx.1, f32[16,64]{1,0} %e.1)
}

ENTRY %rows (y: f32[16,64], dy: f32[16,64], w: f32[128,128]) -> (f32[16,64], f32[16,64], f32[128,128]) {
  %y = f32[16,64]{1,0} parameter(0)
  %dy = f32[16,64]{1,0} parameter(1)
  %w = f32[128,128]{1,0} parameter(2)
  %wn = f32[128,128]{1,0} negate(f32[128,128]{1,0} %w)
  %siblings_dx = (f32[16,64]{1,0}, f32[16,64]{1,0}) fusion(f32[16,64]{1,0} %y, f32[16,64]{1,0} %dy), kind=kLoop, calls=%fused_siblings_dx
  %dx = f32[16,64]{1,0} get-tuple-element((f32[16,64]{1,0}, f32[16,64]{1,0}) %siblings_dx), index=0
  %e = f32[16,64]{1,0} get-tuple-element((f32[16,64]{1,0}, f32[16,64]{1,0}) %siblings_dx), index=1
  ROOT %out = (f32[16,64]{1,0}, f32[16,64]{1,0}, f32[128,128]{1,0}) tuple(f32[16,64]{1,0} %dx, f32[16,64]{1,0} %e, f32[128,128]{1,0} %wn)
}
`,
		},
	})
}
