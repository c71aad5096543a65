package passes

import "testing"

const scalarMax = `%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
`

func TestRowFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "softmax is one row kernel",
			before: `HloModule softmax
` + scalarAdd + scalarMax + `
ENTRY %softmax (x: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16] parameter(0)
  %ninf = f32[] constant(-inf)
  %m = f32[8] reduce(%x, %ninf), dimensions={1}, to_apply=%max
  %mb = f32[8,16] broadcast(%m), dimensions={0}
  %d = f32[8,16] subtract(%x, %mb)
  %e = f32[8,16] exponential(%d)
  %zero = f32[] constant(0)
  %s = f32[8] reduce(%e, %zero), dimensions={1}, to_apply=%add
  %sb = f32[8,16] broadcast(%s), dimensions={0}
  ROOT %y = f32[8,16] divide(%e, %sb)
}
`,
			after: `HloModule softmax, entry_computation_layout={(f32[8,16]{1,0})->f32[8,16]{1,0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%max (a.1: f32[], b.1: f32[]) -> f32[] {
  %a.1 = f32[] parameter(0)
  %b.1 = f32[] parameter(1)
  ROOT %m = f32[] maximum(f32[] %a.1, f32[] %b.1)
}

%fused_y (param_x: f32[8,16]) -> f32[8,16] {
  %param_x = f32[8,16]{1,0} parameter(0)
  %ninf.1 = f32[] constant(-inf)
  %m.1.1 = f32[8]{0} reduce(f32[8,16]{1,0} %param_x, f32[] %ninf.1), dimensions={1}, to_apply=%max
  %mb.1 = f32[8,16]{1,0} broadcast(f32[8]{0} %m.1.1), dimensions={0}
  %d.1 = f32[8,16]{1,0} subtract(f32[8,16]{1,0} %param_x, f32[8,16]{1,0} %mb.1)
  %zero.1 = f32[] constant(0)
  %e.1 = f32[8,16]{1,0} exponential(f32[8,16]{1,0} %d.1)
  %s.1.1 = f32[8]{0} reduce(f32[8,16]{1,0} %e.1, f32[] %zero.1), dimensions={1}, to_apply=%add
  %sb.1 = f32[8,16]{1,0} broadcast(f32[8]{0} %s.1.1), dimensions={0}
  ROOT %y.1 = f32[8,16]{1,0} divide(f32[8,16]{1,0} %e.1, f32[8,16]{1,0} %sb.1)
}

ENTRY %softmax (x: f32[8,16]) -> f32[8,16] {
  %x = f32[8,16]{1,0} parameter(0)
  ROOT %y = f32[8,16]{1,0} fusion(f32[8,16]{1,0} %x), kind=kLoop, calls=%fused_y
}
`,
		},
		{
			name: "layernorm is one row kernel: the mean is read through a divide",
			before: `HloModule layernorm
` + scalarAdd + `
ENTRY %layernorm (x: f32[4,2,8], g: f32[8]) -> f32[4,2,8] {
  %x = f32[4,2,8] parameter(0)
  %g = f32[8] parameter(1)
  %zero = f32[] constant(0)
  %sum = f32[4,2] reduce(%x, %zero), dimensions={2}, to_apply=%add
  %n = f32[] constant(8)
  %nb = f32[4,2] broadcast(%n), dimensions={}
  %mean = f32[4,2] divide(%sum, %nb)
  %meanb = f32[4,2,8] broadcast(%mean), dimensions={0,1}
  %xc = f32[4,2,8] subtract(%x, %meanb)
  %sq = f32[4,2,8] multiply(%xc, %xc)
  %sqsum = f32[4,2] reduce(%sq, %zero), dimensions={2}, to_apply=%add
  %rstd = f32[4,2] rsqrt(%sqsum)
  %rstdb = f32[4,2,8] broadcast(%rstd), dimensions={0,1}
  %xn = f32[4,2,8] multiply(%xc, %rstdb)
  %gb = f32[4,2,8] broadcast(%g), dimensions={2}
  ROOT %y = f32[4,2,8] multiply(%xn, %gb)
}
`,
			after: `HloModule layernorm, entry_computation_layout={(f32[4,2,8]{2,1,0}, f32[8]{0})->f32[4,2,8]{2,1,0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_y (param_x: f32[4,2,8], param_g: f32[8]) -> f32[4,2,8] {
  %param_x = f32[4,2,8]{2,1,0} parameter(0)
  %param_g = f32[8]{0} parameter(1)
  %n.1 = f32[] constant(8)
  %nb.1 = f32[4,2]{1,0} broadcast(f32[] %n.1), dimensions={}
  %zero.1 = f32[] constant(0)
  %sum.1 = f32[4,2]{1,0} reduce(f32[4,2,8]{2,1,0} %param_x, f32[] %zero.1), dimensions={2}, to_apply=%add
  %mean.1 = f32[4,2]{1,0} divide(f32[4,2]{1,0} %sum.1, f32[4,2]{1,0} %nb.1)
  %meanb.1 = f32[4,2,8]{2,1,0} broadcast(f32[4,2]{1,0} %mean.1), dimensions={0,1}
  %xc.1 = f32[4,2,8]{2,1,0} subtract(f32[4,2,8]{2,1,0} %param_x, f32[4,2,8]{2,1,0} %meanb.1)
  %sq.1 = f32[4,2,8]{2,1,0} multiply(f32[4,2,8]{2,1,0} %xc.1, f32[4,2,8]{2,1,0} %xc.1)
  %sqsum.1 = f32[4,2]{1,0} reduce(f32[4,2,8]{2,1,0} %sq.1, f32[] %zero.1), dimensions={2}, to_apply=%add
  %rstd.1 = f32[4,2]{1,0} rsqrt(f32[4,2]{1,0} %sqsum.1)
  %rstdb.1 = f32[4,2,8]{2,1,0} broadcast(f32[4,2]{1,0} %rstd.1), dimensions={0,1}
  %gb.1 = f32[4,2,8]{2,1,0} broadcast(f32[8]{0} %param_g), dimensions={2}
  %xn.1 = f32[4,2,8]{2,1,0} multiply(f32[4,2,8]{2,1,0} %xc.1, f32[4,2,8]{2,1,0} %rstdb.1)
  ROOT %y.1 = f32[4,2,8]{2,1,0} multiply(f32[4,2,8]{2,1,0} %xn.1, f32[4,2,8]{2,1,0} %gb.1)
}

ENTRY %layernorm (x: f32[4,2,8], g: f32[8]) -> f32[4,2,8] {
  %x = f32[4,2,8]{2,1,0} parameter(0)
  %g = f32[8]{0} parameter(1)
  ROOT %y = f32[4,2,8]{2,1,0} fusion(f32[4,2,8]{2,1,0} %x, f32[8]{0} %g), kind=kLoop, calls=%fused_y
}
`,
		},
		{
			name: "a row reduction read across rows stays a kernel of its own",
			before: `HloModule across
` + scalarAdd + `
ENTRY %across (x: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8] parameter(0)
  %zero = f32[] constant(0)
  %s = f32[8] reduce(%x, %zero), dimensions={1}, to_apply=%add
  %sb = f32[8,8] broadcast(%s), dimensions={1}
  ROOT %y = f32[8,8] divide(%x, %sb)
}
`,
			after: `HloModule across, entry_computation_layout={(f32[8,8]{1,0})->f32[8,8]{1,0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_y (param_x: f32[8,8], param_s.1: f32[8]) -> f32[8,8] {
  %param_x = f32[8,8]{1,0} parameter(0)
  %param_s.1 = f32[8]{0} parameter(1)
  %sb.1 = f32[8,8]{1,0} broadcast(f32[8]{0} %param_s.1), dimensions={1}
  ROOT %y.1 = f32[8,8]{1,0} divide(f32[8,8]{1,0} %param_x, f32[8,8]{1,0} %sb.1)
}

%fused_s.1 (param_x.1: f32[8,8]) -> f32[8] {
  %param_x.1 = f32[8,8]{1,0} parameter(0)
  %zero.1 = f32[] constant(0)
  ROOT %s.1.1 = f32[8]{0} reduce(f32[8,8]{1,0} %param_x.1, f32[] %zero.1), dimensions={1}, to_apply=%add
}

ENTRY %across (x: f32[8,8]) -> f32[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  %s.1 = f32[8]{0} fusion(f32[8,8]{1,0} %x), kind=kInput, calls=%fused_s.1
  ROOT %y = f32[8,8]{1,0} fusion(f32[8,8]{1,0} %x, f32[8]{0} %s.1), kind=kLoop, calls=%fused_y
}
`,
		},
		{
			name: "a column reduction, or a reduction with two users, is not fused",
			before: `HloModule cols
` + scalarAdd + `
ENTRY %cols (x: f32[8,4]) -> (f32[8,4], f32[8]) {
  %x = f32[8,4] parameter(0)
  %zero = f32[] constant(0)
  %c = f32[4] reduce(%x, %zero), dimensions={0}, to_apply=%add
  %cb = f32[8,4] broadcast(%c), dimensions={1}
  %y = f32[8,4] divide(%x, %cb)
  %s = f32[8] reduce(%y, %zero), dimensions={1}, to_apply=%add
  %sb = f32[8,4] broadcast(%s), dimensions={0}
  %z = f32[8,4] multiply(%y, %sb)
  ROOT %t = (f32[8,4], f32[8]) tuple(%z, %s)
}
`,
			after: `HloModule cols, entry_computation_layout={(f32[8,4]{1,0})->(f32[8,4]{1,0}, f32[8]{0})}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_z (param_y: f32[8,4], param_s.1: f32[8]) -> f32[8,4] {
  %param_y = f32[8,4]{1,0} parameter(0)
  %param_s.1 = f32[8]{0} parameter(1)
  %sb.1 = f32[8,4]{1,0} broadcast(f32[8]{0} %param_s.1), dimensions={0}
  ROOT %z.1 = f32[8,4]{1,0} multiply(f32[8,4]{1,0} %param_y, f32[8,4]{1,0} %sb.1)
}

%fused_s.1 (param_y.1: f32[8,4]) -> f32[8] {
  %param_y.1 = f32[8,4]{1,0} parameter(0)
  %zero.1 = f32[] constant(0)
  ROOT %s.1.1 = f32[8]{0} reduce(f32[8,4]{1,0} %param_y.1, f32[] %zero.1), dimensions={1}, to_apply=%add
}

%fused_y (param_x: f32[8,4], param_c: f32[4]) -> f32[8,4] {
  %param_x = f32[8,4]{1,0} parameter(0)
  %param_c = f32[4]{0} parameter(1)
  %cb.1 = f32[8,4]{1,0} broadcast(f32[4]{0} %param_c), dimensions={1}
  ROOT %y.1 = f32[8,4]{1,0} divide(f32[8,4]{1,0} %param_x, f32[8,4]{1,0} %cb.1)
}

%fused_c (param_x.1: f32[8,4]) -> f32[4] {
  %param_x.1 = f32[8,4]{1,0} parameter(0)
  %zero.2 = f32[] constant(0)
  ROOT %c.1 = f32[4]{0} reduce(f32[8,4]{1,0} %param_x.1, f32[] %zero.2), dimensions={0}, to_apply=%add
}

ENTRY %cols (x: f32[8,4]) -> (f32[8,4], f32[8]) {
  %x = f32[8,4]{1,0} parameter(0)
  %c = f32[4]{0} fusion(f32[8,4]{1,0} %x), kind=kInput, calls=%fused_c
  %y = f32[8,4]{1,0} fusion(f32[8,4]{1,0} %x, f32[4]{0} %c), kind=kLoop, calls=%fused_y
  %s.1 = f32[8]{0} fusion(f32[8,4]{1,0} %y), kind=kInput, calls=%fused_s.1
  %z = f32[8,4]{1,0} fusion(f32[8,4]{1,0} %y, f32[8]{0} %s.1), kind=kLoop, calls=%fused_z
  ROOT %t = (f32[8,4]{1,0}, f32[8]{0}) tuple(f32[8,4]{1,0} %z, f32[8]{0} %s.1)
}
`,
		},
		{
			name: "rows longer than the row kernel's sweep bound are not fused",
			before: `HloModule long
` + scalarAdd + `
ENTRY %long (x: f32[2,32768]) -> f32[2,32768] {
  %x = f32[2,32768] parameter(0)
  %zero = f32[] constant(0)
  %s = f32[2] reduce(%x, %zero), dimensions={1}, to_apply=%add
  %sb = f32[2,32768] broadcast(%s), dimensions={0}
  ROOT %y = f32[2,32768] divide(%x, %sb)
}
`,
			after: `HloModule long, entry_computation_layout={(f32[2,32768]{1,0})->f32[2,32768]{1,0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_y (param_x: f32[2,32768], param_s.1: f32[2]) -> f32[2,32768] {
  %param_x = f32[2,32768]{1,0} parameter(0)
  %param_s.1 = f32[2]{0} parameter(1)
  %sb.1 = f32[2,32768]{1,0} broadcast(f32[2]{0} %param_s.1), dimensions={0}
  ROOT %y.1 = f32[2,32768]{1,0} divide(f32[2,32768]{1,0} %param_x, f32[2,32768]{1,0} %sb.1)
}

%fused_s.1 (param_x.1: f32[2,32768]) -> f32[2] {
  %param_x.1 = f32[2,32768]{1,0} parameter(0)
  %zero.1 = f32[] constant(0)
  ROOT %s.1.1 = f32[2]{0} reduce(f32[2,32768]{1,0} %param_x.1, f32[] %zero.1), dimensions={1}, to_apply=%add
}

ENTRY %long (x: f32[2,32768]) -> f32[2,32768] {
  %x = f32[2,32768]{1,0} parameter(0)
  %s.1 = f32[2]{0} fusion(f32[2,32768]{1,0} %x), kind=kInput, calls=%fused_s.1
  ROOT %y = f32[2,32768]{1,0} fusion(f32[2,32768]{1,0} %x, f32[2]{0} %s.1), kind=kLoop, calls=%fused_y
}
`,
		},
	})
}
