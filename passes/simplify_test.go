package passes

import "testing"

// noLater keeps the other passes out of simplify's before/after tests (dce still
// runs: simplified-away instructions are left for it).
var noLater = []string{"cse", "fusion", "sibling-fusion", "schedule"}

func TestSimplifyMovementChains(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "reshape and transpose chains collapse; identities vanish",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[2,3,4]) -> (f32[24], f32[4,2,3], f32[2,3,4]) {
  %x = f32[2,3,4] parameter(0)
  %r1 = f32[6,4] reshape(%x)
  %r2 = f32[24] reshape(%r1)
  %t1 = f32[3,4,2] transpose(%x), dimensions={1,2,0}
  %t2 = f32[4,2,3] transpose(%t1), dimensions={1,2,0}
  %t3 = f32[3,2,4] transpose(%x), dimensions={1,0,2}
  %t4 = f32[2,3,4] transpose(%t3), dimensions={1,0,2}
  ROOT %out = (f32[24], f32[4,2,3], f32[2,3,4]) tuple(%r2, %t2, %t4)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[2,3,4]) -> (f32[24], f32[4,2,3], f32[2,3,4]) {
  %x = f32[2,3,4] parameter(0)
  %r2 = f32[24] reshape(%x)
  %t2 = f32[4,2,3] transpose(%x), dimensions={2,0,1}
  ROOT %out = (f32[24], f32[4,2,3], f32[2,3,4]) tuple(%r2, %t2, %x)
}
`,
	}, {
		name:     "broadcast of broadcast composes its dimensions",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[3]) -> f32[2,3,5] {
  %x = f32[3] parameter(0)
  %b1 = f32[3,5] broadcast(%x), dimensions={0}
  ROOT %b2 = f32[2,3,5] broadcast(%b1), dimensions={1,2}
}
`,
		after: `HloModule m
ENTRY %e (x: f32[3]) -> f32[2,3,5] {
  %x = f32[3] parameter(0)
  ROOT %b2 = f32[2,3,5] broadcast(%x), dimensions={1}
}
`,
	}, {
		name:     "moves that move nothing",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[4,3], i: s32[]) -> f32[4,3] {
  %x = f32[4,3] parameter(0)
  %i = s32[] parameter(1)
  %s = f32[4,3] slice(%x), slice={[0:4], [0:3]}
  %zero = f32[] constant(0)
  %p = f32[4,3] pad(%s, %zero), padding=0_0x0_0
  %c = f32[4,3] copy(%p)
  %k = f32[4,3] concatenate(%c), dimensions={0}
  %d = f32[4,3] dynamic-slice(%k, %i, %i), dynamic_slice_sizes={4,3}
  %r1 = f32[4,3] reverse(%d), dimensions={0,1}
  %r2 = f32[4,3] reverse(%r1), dimensions={1,0}
  %b = f32[4,3] broadcast(%r2), dimensions={0,1}
  ROOT %t = f32[4,3] transpose(%b), dimensions={0,1}
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4,3], i: s32[]) -> f32[4,3] {
  ROOT %x = f32[4,3] parameter(0)
  %i = s32[] parameter(1)
}
`,
	}, {
		name:     "moves that move something stay",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[4,3]) -> (f32[2,3], f32[4,3], f32[3,4], f32[4,3,2]) {
  %x = f32[4,3] parameter(0)
  %s = f32[2,3] slice(%x), slice={[0:4:2], [0:3]}
  %r1 = f32[4,3] reverse(%x), dimensions={0}
  %r2 = f32[4,3] reverse(%r1), dimensions={1}
  %t = f32[3,4] transpose(%x), dimensions={1,0}
  %b = f32[4,3,2] broadcast(%x), dimensions={0,1}
  ROOT %out = (f32[2,3], f32[4,3], f32[3,4], f32[4,3,2]) tuple(%s, %r2, %t, %b)
}
`,
	}})
}

func TestSimplifyArithmetic(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "exact identities go: x*1, 1*x, x/1, x+(-0), x-(+0), negate twice, widening round trips",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[4], h: bf16[4], k: s8[4]) -> (f32[4], bf16[4], s8[4]) {
  %x = f32[4] parameter(0)
  %h = bf16[4] parameter(1)
  %k = s8[4] parameter(2)
  %one = f32[] constant(1)
  %ones = f32[4] broadcast(%one), dimensions={}
  %m1 = f32[4] multiply(%x, %ones)
  %m2 = f32[4] multiply(%ones, %m1)
  %d = f32[4] divide(%m2, %ones)
  %nz = f32[4] constant({-0, -0, -0, -0})
  %a = f32[4] add(%nz, %d)
  %pz = f32[] constant(0)
  %pzs = f32[4] broadcast(%pz), dimensions={}
  %s = f32[4] subtract(%a, %pzs)
  %n1 = f32[4] negate(%s)
  %n2 = f32[4] negate(%n1)
  %c = f32[4] convert(%n2)
  %w = f32[4] convert(%h)
  %hb = bf16[4] convert(%w)
  %kw = s32[4] convert(%k)
  %kb = s8[4] convert(%kw)
  ROOT %out = (f32[4], bf16[4], s8[4]) tuple(%c, %hb, %kb)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[4], h: bf16[4], k: s8[4]) -> (f32[4], bf16[4], s8[4]) {
  %x = f32[4] parameter(0)
  %h = bf16[4] parameter(1)
  %k = s8[4] parameter(2)
  ROOT %out = (f32[4], bf16[4], s8[4]) tuple(%x, %h, %k)
}
`,
	}, {
		name:     "inexact identities stay: x+(+0), x-(-0), x*0, narrowing round trips, 1/x",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[4], k: s32[4]) -> (f32[4], f32[4], f32[4], f32[4], f32[4], s32[4], s32[4]) {
  %x = f32[4] parameter(0)
  %k = s32[4] parameter(1)
  %pz = f32[4] constant({0, 0, 0, 0})
  %nz = f32[4] constant({-0, -0, -0, -0})
  %one = f32[4] constant({1, 1, 1, 1})
  %a = f32[4] add(%x, %pz)
  %s = f32[4] subtract(%x, %nz)
  %m = f32[4] multiply(%x, %pz)
  %d = f32[4] divide(%one, %x)
  %n = bf16[4] convert(%x)
  %w = f32[4] convert(%n)
  %f = f32[4] convert(%k)
  %kb = s32[4] convert(%f)
  %u = u32[4] convert(%k)
  %ub = s32[4] convert(%u)
  ROOT %out = (f32[4], f32[4], f32[4], f32[4], f32[4], s32[4], s32[4]) tuple(%a, %s, %m, %d, %w, %kb, %ub)
}
`,
	}})
}

// An element of a tuple instruction is read from its operand; the tuple and the
// element nobody reads then go (rng-bit-generator's unused new state, say).
func TestSimplifyTupleElements(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "get-tuple-element of a tuple",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[3], y: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  %y = f32[3] parameter(1)
  %n = f32[3] negate(%x)
  %t = (f32[3], f32[3]) tuple(%n, %y)
  ROOT %g = f32[3] get-tuple-element(%t), index=1
}
`,
		after: `HloModule m
ENTRY %e (x: f32[3], y: f32[3]) -> f32[3] {
  %x = f32[3] parameter(0)
  ROOT %y = f32[3] parameter(1)
}
`,
	}})
}

func TestSimplifyFoldsKernelReverse(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "a reverse of the kernel's spatial dims becomes window reversal; of a feature dim it stays",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (x: f32[1,5,5,4], k: f32[3,3,1,4]) -> (f32[1,5,5,4], f32[1,5,5,4], f32[1,5,5,4]) {
  %x = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,1,4] parameter(1)
  %r = f32[3,3,1,4] reverse(%k), dimensions={0,1}
  %c = f32[1,5,5,4] convolution(%x, %r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  %r0 = f32[3,3,1,4] reverse(%k), dimensions={0}
  %c0 = f32[1,5,5,4] convolution(%x, %r0), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, feature_group_count=4
  %rf = f32[3,3,1,4] reverse(%k), dimensions={3}
  %cf = f32[1,5,5,4] convolution(%x, %rf), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  ROOT %out = (f32[1,5,5,4], f32[1,5,5,4], f32[1,5,5,4]) tuple(%c, %c0, %cf)
}
`,
		after: `HloModule m
ENTRY %e (x: f32[1,5,5,4], k: f32[3,3,1,4]) -> (f32[1,5,5,4], f32[1,5,5,4], f32[1,5,5,4]) {
  %x = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,1,4] parameter(1)
  %c = f32[1,5,5,4] convolution(%x, %k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  %c0 = f32[1,5,5,4] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  %rf = f32[3,3,1,4] reverse(%k), dimensions={3}
  %cf = f32[1,5,5,4] convolution(%x, %rf), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  ROOT %out = (f32[1,5,5,4], f32[1,5,5,4], f32[1,5,5,4]) tuple(%c, %c0, %cf)
}
`,
	}})
}

func TestSimplifyDepthwiseInputGradientKernel(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "a transpose that moves only unit dims is a reshape; the convolution reads the kernel from under it and the reverse",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (dy: f32[1,5,5,4], k: f32[3,3,1,4]) -> f32[1,5,5,4] {
  %dy = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,1,4] parameter(1)
  %r5 = f32[3,3,1,4,1] reshape(%k)
  %t6 = f32[3,3,4,1,1] transpose(%r5), dimensions={0,1,3,2,4}
  %r7 = f32[3,3,4,1] reshape(%t6)
  %rev = f32[3,3,4,1] reverse(%r7), dimensions={0,1}
  ROOT %c = f32[1,5,5,4] convolution(%dy, %rev), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01oi->b01f, feature_group_count=4
}
`,
		after: `HloModule m
ENTRY %e (dy: f32[1,5,5,4], k: f32[3,3,1,4]) -> f32[1,5,5,4] {
  %dy = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,1,4] parameter(1)
  ROOT %c = f32[1,5,5,4] convolution(%dy, %k), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=4
}
`,
	}, {
		name:     "a transpose that moves a larger dim stays; a reshape that changes the kernel's rank stays",
		disabled: noLater,
		before: `HloModule m
ENTRY %e (dy: f32[1,5,5,4], k: f32[3,3,4], w: f32[3,3,1,4]) -> (f32[3,3,4,1], f32[1,5,5,4]) {
  %dy = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,4] parameter(1)
  %w = f32[3,3,1,4] parameter(2)
  %t = f32[3,3,4,1] transpose(%w), dimensions={1,0,3,2}
  %r = f32[3,3,1,4] reshape(%k)
  %c = f32[1,5,5,4] convolution(%dy, %r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  ROOT %out = (f32[3,3,4,1], f32[1,5,5,4]) tuple(%t, %c)
}
`,
		after: `HloModule m
ENTRY %e (dy: f32[1,5,5,4], k: f32[3,3,4], w: f32[3,3,1,4]) -> (f32[3,3,4,1], f32[1,5,5,4]) {
  %dy = f32[1,5,5,4] parameter(0)
  %k = f32[3,3,4] parameter(1)
  %w = f32[3,3,1,4] parameter(2)
  %t = f32[3,3,4,1] transpose(%w), dimensions={1,0,3,2}
  %r = f32[3,3,1,4] reshape(%k)
  %c = f32[1,5,5,4] convolution(%dy, %r), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
  ROOT %out = (f32[3,3,4,1], f32[1,5,5,4]) tuple(%t, %c)
}
`,
	}})
}
