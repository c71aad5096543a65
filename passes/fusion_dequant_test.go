package passes

import "testing"

func TestDequantisingOperandFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "an s4 weight's convert and its per-group f16 scale (broadcast, reshape, widening convert, multiply) join the dot's kernel",
			before: `HloModule quant
ENTRY %quant (x: f32[1,256], w: s4[256,64], s: f16[2,64]) -> f32[1,64] {
  %x = f32[1,256] parameter(0)
  %w = s4[256,64] parameter(1)
  %s = f16[2,64] parameter(2)
  %wc = f32[256,64] convert(%w)
  %sg = f16[2,128,64] broadcast(%s), dimensions={0,2}
  %sb = f16[256,64] reshape(%sg)
  %sc = f32[256,64] convert(%sb)
  %ws = f32[256,64] multiply(%wc, %sc)
  ROOT %y = f32[1,64] dot(%x, %ws), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
`,
			after: `HloModule quant, entry_computation_layout={(f32[1,256]{1,0}, s4[256,64]{1,0}, f16[2,64]{1,0})->f32[1,64]{1,0}}

%fused_y (param_x: f32[1,256], param_w: s4[256,64], param_s: f16[2,64]) -> f32[1,64] {
  %param_x = f32[1,256]{1,0} parameter(0)
  %param_w = s4[256,64]{1,0} parameter(1)
  %param_s = f16[2,64]{1,0} parameter(2)
  %sg.1 = f16[2,128,64]{2,1,0} broadcast(f16[2,64]{1,0} %param_s), dimensions={0,2}
  %sb.1 = f16[256,64]{1,0} reshape(f16[2,128,64]{2,1,0} %sg.1)
  %sc.1 = f32[256,64]{1,0} convert(f16[256,64]{1,0} %sb.1)
  %wc.1 = f32[256,64]{1,0} convert(s4[256,64]{1,0} %param_w)
  %ws.1 = f32[256,64]{1,0} multiply(f32[256,64]{1,0} %wc.1, f32[256,64]{1,0} %sc.1)
  ROOT %y.1 = f32[1,64]{1,0} dot(f32[1,256]{1,0} %param_x, f32[256,64]{1,0} %ws.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %quant (x: f32[1,256], w: s4[256,64], s: f16[2,64]) -> f32[1,64] {
  %x = f32[1,256]{1,0} parameter(0)
  %w = s4[256,64]{1,0} parameter(1)
  %s = f16[2,64]{1,0} parameter(2)
  ROOT %y = f32[1,64]{1,0} fusion(f32[1,256]{1,0} %x, s4[256,64]{1,0} %w, f16[2,64]{1,0} %s), kind=kOutput, calls=%fused_y
}

`,
		},
		{
			name: "a multiply of two f32 values is no dequantisation, and a dequantised weight read elsewhere too stays a kernel",
			before: `HloModule reject
ENTRY %reject (x: f32[2,32], w: f32[32,16], m: f32[32,16], q: u8[32,16]) -> (f32[2,16], f32[2,16], f32[32,16]) {
  %x = f32[2,32] parameter(0)
  %w = f32[32,16] parameter(1)
  %m = f32[32,16] parameter(2)
  %q = u8[32,16] parameter(3)
  %wm = f32[32,16] multiply(%w, %m)
  %d = f32[2,16] dot(%x, %wm), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %qc = f32[32,16] convert(%q)
  %e = f32[2,16] dot(%x, %qc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[2,16], f32[2,16], f32[32,16]) tuple(%d, %e, %qc)
}
`,
			after: `HloModule reject, entry_computation_layout={(f32[2,32]{1,0}, f32[32,16]{1,0}, f32[32,16]{1,0}, u8[32,16]{1,0})->(f32[2,16]{1,0}, f32[2,16]{1,0}, f32[32,16]{1,0})}

ENTRY %reject (x: f32[2,32], w: f32[32,16], m: f32[32,16], q: u8[32,16]) -> (f32[2,16], f32[2,16], f32[32,16]) {
  %x = f32[2,32]{1,0} parameter(0)
  %w = f32[32,16]{1,0} parameter(1)
  %m = f32[32,16]{1,0} parameter(2)
  %q = u8[32,16]{1,0} parameter(3)
  %wm = f32[32,16]{1,0} multiply(f32[32,16]{1,0} %w, f32[32,16]{1,0} %m)
  %d = f32[2,16]{1,0} dot(f32[2,32]{1,0} %x, f32[32,16]{1,0} %wm), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %qc = f32[32,16]{1,0} convert(u8[32,16]{1,0} %q)
  %e = f32[2,16]{1,0} dot(f32[2,32]{1,0} %x, f32[32,16]{1,0} %qc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %t = (f32[2,16]{1,0}, f32[2,16]{1,0}, f32[32,16]{1,0}) tuple(f32[2,16]{1,0} %d, f32[2,16]{1,0} %e, f32[32,16]{1,0} %qc)
}

`,
		},
	})
}

// TestDequantisingConvolutionFusion: a convolution's filter chain (an s4 filter,
// HWIO, its convert and a per-output-channel scale) joins the convolution's
// kernel with its bias epilogue; of an f8×f8→f32 convolution
// (preferred_element_type) the filter's convert joins, the input's stays a kernel
// (the implicit GEMM reads the input as vec4s of f32).
func TestDequantisingConvolutionFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "an s4 filter's convert and per-channel scale join the convolution and its bias add",
			before: `HloModule qconv
ENTRY %qconv (x: f32[1,6,6,5], w: s4[3,3,5,7], s: f32[7], b: f32[7]) -> f32[1,6,6,7] {
  %x = f32[1,6,6,5] parameter(0)
  %w = s4[3,3,5,7] parameter(1)
  %s = f32[7] parameter(2)
  %b = f32[7] parameter(3)
  %wc = f32[3,3,5,7] convert(%w)
  %sb = f32[3,3,5,7] broadcast(%s), dimensions={3}
  %ws = f32[3,3,5,7] multiply(%wc, %sb)
  %c = f32[1,6,6,7] convolution(%x, %ws), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  %bb = f32[1,6,6,7] broadcast(%b), dimensions={3}
  ROOT %y = f32[1,6,6,7] add(%c, %bb)
}
`,
			after: `HloModule qconv, entry_computation_layout={(f32[1,6,6,5]{3,2,1,0}, s4[3,3,5,7]{3,2,1,0}, f32[7]{0}, f32[7]{0})->f32[1,6,6,7]{3,2,1,0}}

%fused_y (param_x: f32[1,6,6,5], param_w: s4[3,3,5,7], param_s: f32[7], param_b: f32[7]) -> f32[1,6,6,7] {
  %param_x = f32[1,6,6,5]{3,2,1,0} parameter(0)
  %param_w = s4[3,3,5,7]{3,2,1,0} parameter(1)
  %param_s = f32[7]{0} parameter(2)
  %param_b = f32[7]{0} parameter(3)
  %sb.1 = f32[3,3,5,7]{3,2,1,0} broadcast(f32[7]{0} %param_s), dimensions={3}
  %wc.1 = f32[3,3,5,7]{3,2,1,0} convert(s4[3,3,5,7]{3,2,1,0} %param_w)
  %ws.1 = f32[3,3,5,7]{3,2,1,0} multiply(f32[3,3,5,7]{3,2,1,0} %wc.1, f32[3,3,5,7]{3,2,1,0} %sb.1)
  %bb.1 = f32[1,6,6,7]{3,2,1,0} broadcast(f32[7]{0} %param_b), dimensions={3}
  %c.1 = f32[1,6,6,7]{3,2,1,0} convolution(f32[1,6,6,5]{3,2,1,0} %param_x, f32[3,3,5,7]{3,2,1,0} %ws.1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT %y.1 = f32[1,6,6,7]{3,2,1,0} add(f32[1,6,6,7]{3,2,1,0} %c.1, f32[1,6,6,7]{3,2,1,0} %bb.1)
}

ENTRY %qconv (x: f32[1,6,6,5], w: s4[3,3,5,7], s: f32[7], b: f32[7]) -> f32[1,6,6,7] {
  %x = f32[1,6,6,5]{3,2,1,0} parameter(0)
  %w = s4[3,3,5,7]{3,2,1,0} parameter(1)
  %s = f32[7]{0} parameter(2)
  %b = f32[7]{0} parameter(3)
  ROOT %y = f32[1,6,6,7]{3,2,1,0} fusion(f32[1,6,6,5]{3,2,1,0} %x, s4[3,3,5,7]{3,2,1,0} %w, f32[7]{0} %s, f32[7]{0} %b), kind=kOutput, calls=%fused_y
}

`,
		},
		{
			name: "an f8 filter's convert joins, the f8 input's convert stays a kernel",
			before: `HloModule f8conv
ENTRY %f8conv (x: f8e4m3fn[1,6,6,5], w: f8e4m3fn[3,3,5,7]) -> f32[1,6,6,7] {
  %x = f8e4m3fn[1,6,6,5] parameter(0)
  %w = f8e4m3fn[3,3,5,7] parameter(1)
  ROOT %c = f32[1,6,6,7] convolution(%x, %w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
`,
			after: `HloModule f8conv, entry_computation_layout={(f8e4m3fn[1,6,6,5]{3,2,1,0}, f8e4m3fn[3,3,5,7]{3,2,1,0})->f32[1,6,6,7]{3,2,1,0}}

%fused_c (param_w: f8e4m3fn[3,3,5,7], param_c.convert: f32[1,6,6,5]) -> f32[1,6,6,7] {
  %param_w = f8e4m3fn[3,3,5,7]{3,2,1,0} parameter(0)
  %param_c.convert = f32[1,6,6,5]{3,2,1,0} parameter(1)
  %c.convert.1.1 = f32[3,3,5,7]{3,2,1,0} convert(f8e4m3fn[3,3,5,7]{3,2,1,0} %param_w)
  ROOT %c.1 = f32[1,6,6,7]{3,2,1,0} convolution(f32[1,6,6,5]{3,2,1,0} %param_c.convert, f32[3,3,5,7]{3,2,1,0} %c.convert.1.1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}

ENTRY %f8conv (x: f8e4m3fn[1,6,6,5], w: f8e4m3fn[3,3,5,7]) -> f32[1,6,6,7] {
  %x = f8e4m3fn[1,6,6,5]{3,2,1,0} parameter(0)
  %w = f8e4m3fn[3,3,5,7]{3,2,1,0} parameter(1)
  %c.convert = f32[1,6,6,5]{3,2,1,0} convert(f8e4m3fn[1,6,6,5]{3,2,1,0} %x)
  ROOT %c = f32[1,6,6,7]{3,2,1,0} fusion(f8e4m3fn[3,3,5,7]{3,2,1,0} %w, f32[1,6,6,5]{3,2,1,0} %c.convert), kind=kOutput, calls=%fused_c
}

`,
		},
	})
}
