package passes

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/randgraph"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// splitOnlyTarget is lavapipe's 128 MiB bindings without buffer device
// addresses: a larger tensor is split across bindings.
func splitOnlyTarget() codegen.Target {
	t := codegen.LavapipeTarget()
	t.BufferDeviceAddress = false
	return t
}

const scalarAdd = `%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
`

func TestFusion(t *testing.T) {
	runPassCases(t, []passCase{
		{
			name: "saxpy becomes one loop fusion",
			before: `HloModule saxpy
ENTRY %saxpy (a: f32[], x: f32[1024], y: f32[1024]) -> f32[1024] {
  %a = f32[] parameter(0)
  %x = f32[1024] parameter(1)
  %y = f32[1024] parameter(2)
  %ab = f32[1024] broadcast(%a), dimensions={}
  %ax = f32[1024] multiply(%ab, %x)
  ROOT %out = f32[1024] add(%ax, %y)
}
`,
			after: `HloModule saxpy, entry_computation_layout={(f32[], f32[1024]{0}, f32[1024]{0})->f32[1024]{0}}

%fused_out (param_a: f32[], param_x: f32[1024], param_y: f32[1024]) -> f32[1024] {
  %param_a = f32[] parameter(0)
  %param_x = f32[1024]{0} parameter(1)
  %param_y = f32[1024]{0} parameter(2)
  %ab.1 = f32[1024]{0} broadcast(f32[] %param_a), dimensions={}
  %ax.1 = f32[1024]{0} multiply(f32[1024]{0} %ab.1, f32[1024]{0} %param_x)
  ROOT %out.1 = f32[1024]{0} add(f32[1024]{0} %ax.1, f32[1024]{0} %param_y)
}

ENTRY %saxpy (a: f32[], x: f32[1024], y: f32[1024]) -> f32[1024] {
  %a = f32[] parameter(0)
  %x = f32[1024]{0} parameter(1)
  %y = f32[1024]{0} parameter(2)
  ROOT %out = f32[1024]{0} fusion(f32[] %a, f32[1024]{0} %x, f32[1024]{0} %y), kind=kLoop, calls=%fused_out
}
`,
		},
		{
			name:     "an expensive producer with two users is computed once",
			disabled: []string{"sibling-fusion"},
			before: `HloModule twice
ENTRY %twice (x: f32[8,16]) -> (f32[8,16], f32[8,16]) {
  %x = f32[8,16] parameter(0)
  %e = f32[8,16] exponential(%x)
  %n = f32[8,16] negate(%e)
  %a = f32[8,16] abs(%e)
  ROOT %t = (f32[8,16], f32[8,16]) tuple(%n, %a)
}
`,
			after: `HloModule twice, entry_computation_layout={(f32[8,16]{1,0})->(f32[8,16]{1,0}, f32[8,16]{1,0})}

ENTRY %twice (x: f32[8,16]) -> (f32[8,16], f32[8,16]) {
  %x = f32[8,16]{1,0} parameter(0)
  %e = f32[8,16]{1,0} exponential(f32[8,16]{1,0} %x)
  %n = f32[8,16]{1,0} negate(f32[8,16]{1,0} %e)
  %a = f32[8,16]{1,0} abs(f32[8,16]{1,0} %e)
  ROOT %t = (f32[8,16]{1,0}, f32[8,16]{1,0}) tuple(f32[8,16]{1,0} %n, f32[8,16]{1,0} %a)
}
`,
		},
		{
			name:     "a cheap producer is copied into every consumer",
			disabled: []string{"sibling-fusion"},
			before: `HloModule dup
ENTRY %dup (x: f32[64], y: f32[64]) -> (f32[64], f32[64]) {
  %x = f32[64] parameter(0)
  %y = f32[64] parameter(1)
  %n = f32[64] negate(%x)
  %a = f32[64] add(%n, %y)
  %m = f32[64] multiply(%n, %y)
  ROOT %t = (f32[64], f32[64]) tuple(%a, %m)
}
`,
			after: `HloModule dup, entry_computation_layout={(f32[64]{0}, f32[64]{0})->(f32[64]{0}, f32[64]{0})}

%fused_m (param_x: f32[64], param_y: f32[64]) -> f32[64] {
  %param_x = f32[64]{0} parameter(0)
  %param_y = f32[64]{0} parameter(1)
  %n.1 = f32[64]{0} negate(f32[64]{0} %param_x)
  ROOT %m.1 = f32[64]{0} multiply(f32[64]{0} %n.1, f32[64]{0} %param_y)
}

%fused_a (param_x.1: f32[64], param_y.1: f32[64]) -> f32[64] {
  %param_x.1 = f32[64]{0} parameter(0)
  %param_y.1 = f32[64]{0} parameter(1)
  %n.2 = f32[64]{0} negate(f32[64]{0} %param_x.1)
  ROOT %a.1 = f32[64]{0} add(f32[64]{0} %n.2, f32[64]{0} %param_y.1)
}

ENTRY %dup (x: f32[64], y: f32[64]) -> (f32[64], f32[64]) {
  %x = f32[64]{0} parameter(0)
  %y = f32[64]{0} parameter(1)
  %a = f32[64]{0} fusion(f32[64]{0} %x, f32[64]{0} %y), kind=kLoop, calls=%fused_a
  %m = f32[64]{0} fusion(f32[64]{0} %x, f32[64]{0} %y), kind=kLoop, calls=%fused_m
  ROOT %t = (f32[64]{0}, f32[64]{0}) tuple(f32[64]{0} %a, f32[64]{0} %m)
}
`,
		},
		{
			name: "values the root or a non-consumer needs stay materialised",
			before: `HloModule keep
ENTRY %keep (x: f32[16,16], y: f32[16,16]) -> (f32[16,16], f32[16,16]) {
  %x = f32[16,16] parameter(0)
  %y = f32[16,16] parameter(1)
  %n = f32[16,16] negate(%x)
  %d = f32[16,16] dot(%n, %y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r = f32[16,16] maximum(%d, %y)
  ROOT %t = (f32[16,16], f32[16,16]) tuple(%n, %r)
}
`,
			after: `HloModule keep, entry_computation_layout={(f32[16,16]{1,0}, f32[16,16]{1,0})->(f32[16,16]{1,0}, f32[16,16]{1,0})}

%fused_r (param_y: f32[16,16], param_n: f32[16,16]) -> f32[16,16] {
  %param_y = f32[16,16]{1,0} parameter(0)
  %param_n = f32[16,16]{1,0} parameter(1)
  %d.1 = f32[16,16]{1,0} dot(f32[16,16]{1,0} %param_n, f32[16,16]{1,0} %param_y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %r.1 = f32[16,16]{1,0} maximum(f32[16,16]{1,0} %d.1, f32[16,16]{1,0} %param_y)
}

ENTRY %keep (x: f32[16,16], y: f32[16,16]) -> (f32[16,16], f32[16,16]) {
  %x = f32[16,16]{1,0} parameter(0)
  %y = f32[16,16]{1,0} parameter(1)
  %n = f32[16,16]{1,0} negate(f32[16,16]{1,0} %x)
  %r = f32[16,16]{1,0} fusion(f32[16,16]{1,0} %y, f32[16,16]{1,0} %n), kind=kOutput, calls=%fused_r
  ROOT %t = (f32[16,16]{1,0}, f32[16,16]{1,0}) tuple(f32[16,16]{1,0} %n, f32[16,16]{1,0} %r)
}
`,
		},
		{
			name: "constants: splats and small arrays fuse, a large array stays a buffer",
			before: `HloModule consts
ENTRY %consts (x: f32[20]) -> f32[20] {
  %x = f32[20] parameter(0)
  %big = f32[20] constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
  %c2 = f32[] constant(2)
  %two = f32[20] broadcast(%c2), dimensions={}
  %small = f32[4] constant({1, 2, 3, 4})
  %c0 = f32[] constant(0)
  %pad = f32[20] pad(%small, %c0), padding=0_16
  %a = f32[20] add(%x, %big)
  %b = f32[20] multiply(%a, %two)
  ROOT %c = f32[20] add(%b, %pad)
}
`,
			after: `HloModule consts, entry_computation_layout={(f32[20]{0})->f32[20]{0}}

%fused_c (param_x: f32[20], param_big: f32[20]) -> f32[20] {
  %param_x = f32[20]{0} parameter(0)
  %param_big = f32[20]{0} parameter(1)
  %c2.1 = f32[] constant(2)
  %c0.1 = f32[] constant(0)
  %small.1 = f32[4]{0} constant({1, 2, 3, 4})
  %two.1 = f32[20]{0} broadcast(f32[] %c2.1), dimensions={}
  %a.1 = f32[20]{0} add(f32[20]{0} %param_x, f32[20]{0} %param_big)
  %pad.1 = f32[20]{0} pad(f32[4]{0} %small.1, f32[] %c0.1), padding=0_16
  %b.1 = f32[20]{0} multiply(f32[20]{0} %a.1, f32[20]{0} %two.1)
  ROOT %c.1 = f32[20]{0} add(f32[20]{0} %b.1, f32[20]{0} %pad.1)
}

ENTRY %consts (x: f32[20]) -> f32[20] {
  %x = f32[20]{0} parameter(0)
  %big = f32[20]{0} constant({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
  ROOT %c = f32[20]{0} fusion(f32[20]{0} %x, f32[20]{0} %big), kind=kLoop, calls=%fused_c
}
`,
		},
		{
			name: "loop bodies fuse; reducers are left alone",
			before: `HloModule loop
` + scalarAdd + `
%cond (s: (s32[], f32[8])) -> pred[] {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s = (s32[], f32[8]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v = f32[8] get-tuple-element(%s), index=1
  %half = f32[] constant(0.5)
  %h = f32[8] broadcast(%half), dimensions={}
  %w = f32[8] multiply(%v, %h)
  %v1 = f32[8] add(%w, %v)
  ROOT %t = (s32[], f32[8]) tuple(%i1, %v1)
}
ENTRY %loop (x: f32[8]) -> f32[] {
  %x = f32[8] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]) tuple(%zero, %x)
  %w = (s32[], f32[8]) while(%init), condition=%cond, body=%body
  %v = f32[8] get-tuple-element(%w), index=1
  %a = f32[8] abs(%v)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%a, %z), dimensions={0}, to_apply=%add
}
`,
			after: `HloModule loop, entry_computation_layout={(f32[8]{0})->f32[]}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

%fused_lt (param_i: s32[]) -> pred[] {
  %param_i = s32[] parameter(0)
  %n.1 = s32[] constant(3)
  ROOT %lt.1 = pred[] compare(s32[] %param_i, s32[] %n.1), direction=LT
}

%cond (s.1: (s32[], f32[8])) -> pred[] {
  %s.1 = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[8]{0}) %s.1), index=0
  ROOT %lt = pred[] fusion(s32[] %i), kind=kLoop, calls=%fused_lt
}

%fused_v1 (param_v: f32[8]) -> f32[8] {
  %param_v = f32[8]{0} parameter(0)
  %half.1 = f32[] constant(0.5)
  %h.1 = f32[8]{0} broadcast(f32[] %half.1), dimensions={}
  %w.2 = f32[8]{0} multiply(f32[8]{0} %param_v, f32[8]{0} %h.1)
  ROOT %v1.1 = f32[8]{0} add(f32[8]{0} %w.2, f32[8]{0} %param_v)
}

%fused_i1 (param_i.1: s32[]) -> s32[] {
  %param_i.1 = s32[] parameter(0)
  %one.1 = s32[] constant(1)
  ROOT %i1.1 = s32[] add(s32[] %param_i.1, s32[] %one.1)
}

%body (s.2: (s32[], f32[8])) -> (s32[], f32[8]) {
  %s.2 = (s32[], f32[8]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element((s32[], f32[8]{0}) %s.2), index=0
  %i1 = s32[] fusion(s32[] %i.1), kind=kLoop, calls=%fused_i1
  %v = f32[8]{0} get-tuple-element((s32[], f32[8]{0}) %s.2), index=1
  %v1 = f32[8]{0} fusion(f32[8]{0} %v), kind=kLoop, calls=%fused_v1
  ROOT %t = (s32[], f32[8]{0}) tuple(s32[] %i1, f32[8]{0} %v1)
}

%fused_r (param_v.1: f32[8]) -> f32[] {
  %param_v.1 = f32[8]{0} parameter(0)
  %z.1 = f32[] constant(0)
  %a.1.1 = f32[8]{0} abs(f32[8]{0} %param_v.1)
  ROOT %r.1 = f32[] reduce(f32[8]{0} %a.1.1, f32[] %z.1), dimensions={0}, to_apply=%add
}

ENTRY %loop (x: f32[8]) -> f32[] {
  %x = f32[8]{0} parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(s32[] %zero, f32[8]{0} %x)
  %w.1 = (s32[], f32[8]{0}) while((s32[], f32[8]{0}) %init), condition=%cond, body=%body
  %v.1 = f32[8]{0} get-tuple-element((s32[], f32[8]{0}) %w.1), index=1
  ROOT %r = f32[] fusion(f32[8]{0} %v.1), kind=kInput, calls=%fused_r
}
`,
		},
		{
			name: "the parameter bound stops fusion",
			cfg:  Config{MaxFusionParams: 2},
			before: `HloModule wide
ENTRY %wide (x: f32[4], y: f32[4], z: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %z = f32[4] parameter(2)
  %a = f32[4] add(%x, %y)
  ROOT %b = f32[4] multiply(%a, %z)
}
`,
			after: `HloModule wide, entry_computation_layout={(f32[4]{0}, f32[4]{0}, f32[4]{0})->f32[4]{0}}

ENTRY %wide (x: f32[4], y: f32[4], z: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %z = f32[4]{0} parameter(2)
  %a = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %y)
  ROOT %b = f32[4]{0} multiply(f32[4]{0} %a, f32[4]{0} %z)
}
`,
		},
		{
			// 192 MiB operands split across 128 MiB bindings take two each: the
			// three parameters of x+y*z would be six bindings, over the bound of 4
			// that they meet counted one each.
			name: "split operands count one binding per piece",
			cfg:  Config{MaxFusionParams: 4, Bindings: splitOnlyTarget().Bindings},
			before: `HloModule wide_big
ENTRY %wide_big (x: f32[48,1048576], y: f32[48,1048576], z: f32[48,1048576]) -> f32[48,1048576] {
  %x = f32[48,1048576] parameter(0)
  %y = f32[48,1048576] parameter(1)
  %z = f32[48,1048576] parameter(2)
  %a = f32[48,1048576] add(%x, %y)
  ROOT %b = f32[48,1048576] multiply(%a, %z)
}
`,
			after: `HloModule wide_big, entry_computation_layout={(f32[48,1048576]{1,0}, f32[48,1048576]{1,0}, f32[48,1048576]{1,0})->f32[48,1048576]{1,0}}

ENTRY %wide_big (x: f32[48,1048576], y: f32[48,1048576], z: f32[48,1048576]) -> f32[48,1048576] {
  %x = f32[48,1048576]{1,0} parameter(0)
  %y = f32[48,1048576]{1,0} parameter(1)
  %z = f32[48,1048576]{1,0} parameter(2)
  %a = f32[48,1048576]{1,0} add(f32[48,1048576]{1,0} %x, f32[48,1048576]{1,0} %y)
  ROOT %b = f32[48,1048576]{1,0} multiply(f32[48,1048576]{1,0} %a, f32[48,1048576]{1,0} %z)
}
`,
		},
		{
			name: "the instruction bound splits a chain into kernels",
			cfg:  Config{MaxFusedInstructions: 2},
			before: `HloModule chain
ENTRY %chain (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %a = f32[4] negate(%x)
  %b = f32[4] abs(%a)
  %c = f32[4] negate(%b)
  %d = f32[4] abs(%c)
  ROOT %e = f32[4] negate(%d)
}
`,
			after: `HloModule chain, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%fused_e (param_c: f32[4]) -> f32[4] {
  %param_c = f32[4]{0} parameter(0)
  %d.1 = f32[4]{0} abs(f32[4]{0} %param_c)
  ROOT %e.1 = f32[4]{0} negate(f32[4]{0} %d.1)
}

%fused_c (param_a: f32[4]) -> f32[4] {
  %param_a = f32[4]{0} parameter(0)
  %b.1 = f32[4]{0} abs(f32[4]{0} %param_a)
  ROOT %c.1 = f32[4]{0} negate(f32[4]{0} %b.1)
}

ENTRY %chain (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %a = f32[4]{0} negate(f32[4]{0} %x)
  %c = f32[4]{0} fusion(f32[4]{0} %a), kind=kLoop, calls=%fused_c
  ROOT %e = f32[4]{0} fusion(f32[4]{0} %c), kind=kLoop, calls=%fused_e
}
`,
		},
		{
			// Philox rounds in miniature: a is read by lo and, through hi, by t;
			// fused from the root back, a is copied in (its users are all
			// consumers) before hi is, so hi must read that copy. Were a
			// fused a second time, the kernel would reach the bound of 9
			// with c16 still outside it, materialised.
			name: "a value two fused producers share is fused once",
			cfg:  Config{MaxFusedInstructions: 9},
			before: `HloModule philox
ENTRY %philox (x: u32[8]) -> u32[8] {
  %x = u32[8] parameter(0)
  %c16 = u32[] constant(16)
  %s = u32[8] broadcast(%c16), dimensions={}
  %cm = u32[] constant(65535)
  %m = u32[8] broadcast(%cm), dimensions={}
  %a = u32[8] multiply(%x, %x)
  %hi = u32[8] shift-right-logical(%a, %s)
  %lo = u32[8] and(%a, %m)
  %t = u32[8] add(%hi, %m)
  ROOT %r = u32[8] xor(%lo, %t)
}
`,
			after: `HloModule philox, entry_computation_layout={(u32[8]{0})->u32[8]{0}}

%fused_r (param_x: u32[8]) -> u32[8] {
  %param_x = u32[8]{0} parameter(0)
  %c16.1 = u32[] constant(16)
  %s.1 = u32[8]{0} broadcast(u32[] %c16.1), dimensions={}
  %cm.1 = u32[] constant(65535)
  %a.1 = u32[8]{0} multiply(u32[8]{0} %param_x, u32[8]{0} %param_x)
  %hi.1 = u32[8]{0} shift-right-logical(u32[8]{0} %a.1, u32[8]{0} %s.1)
  %m.1 = u32[8]{0} broadcast(u32[] %cm.1), dimensions={}
  %t.1 = u32[8]{0} add(u32[8]{0} %hi.1, u32[8]{0} %m.1)
  %lo.1 = u32[8]{0} and(u32[8]{0} %a.1, u32[8]{0} %m.1)
  ROOT %r.1 = u32[8]{0} xor(u32[8]{0} %lo.1, u32[8]{0} %t.1)
}

ENTRY %philox (x: u32[8]) -> u32[8] {
  %x = u32[8]{0} parameter(0)
  ROOT %r = u32[8]{0} fusion(u32[8]{0} %x), kind=kLoop, calls=%fused_r
}
`,
		},
		{
			name:     "disabled",
			disabled: []string{"fusion"},
			before: `HloModule off
ENTRY %off (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %n = f32[4] negate(%x)
  ROOT %a = f32[4] abs(%n)
}
`,
		},
	})
}

// chainModule is x, y: f32[8] and a chain of n elementwise ops (negate, add y,
// multiply by y, repeated): fusion has nothing to stop it but the bounds.
func chainModule(t *testing.T, n int) *hlo.Module {
	t.Helper()
	b := hlo.NewBuilder("chain")
	s := hlo.MakeShape(hlo.F32, 8)
	v, y := b.Parameter(s, "x"), b.Parameter(s, "y")
	for i := range n {
		switch i % 3 {
		case 0:
			v = b.Negate(v)
		case 1:
			v = b.Add(v, y)
		default:
			v = b.Mul(v, y)
		}
	}
	m, err := b.Build(v)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFusionBoundSplitsLongChain: a chain of 1000 ops is fused into kernels of
// DefaultMaxFusedInstructions ops from the root back (256, 256, 256, then the 232
// left), not into one kernel, and computes the same bits.
func TestFusionBoundSplitsLongChain(t *testing.T) {
	const n = 1000
	m := chainModule(t, n)
	opt := m.Clone()
	if err := Run(opt, Config{}); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, in := range opt.Entry.Instructions {
		switch in.Op {
		case hlo.OpParameter:
		case hlo.OpFusion:
			sizes = append(sizes, len(in.Called[0].Instructions)-len(in.Called[0].Params))
		default:
			t.Fatalf("%s (%v) left unfused", in.Name, in.Op)
		}
	}
	if want := []int{232, 256, 256, 256}; !slices.Equal(sizes, want) {
		t.Fatalf("fused kernels of %v instructions, want %v", sizes, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := randgraph.Input(rng, m.Entry.Params[0].Shape), randgraph.Input(rng, m.Entry.Params[1].Shape)
	want, err := cpuref.Eval(m, x, y)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cpuref.Eval(opt, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if err := literalBitsEqual(got, want); err != nil {
		t.Fatal(err)
	}
}
