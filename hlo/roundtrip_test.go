package hlo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reducers and comparators the samples call.
const (
	addF32 = `
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT sum = f32[] add(x, y)
}
`
	geF32 = `
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT cmp = pred[] compare(a, b), direction=GE
}
`
)

// textSamples holds, for every opcode that is not unary or binary elementwise, a small
// module using it, written as XLA's hand-written tests write HLO (bare names, no
// operand shapes). Unary and binary elementwise samples are generated from the op
// table by elementwiseTextSample.
var textSamples = map[Opcode]string{
	OpParameter: `HloModule parameter
ENTRY e {
  ROOT p = f32[2,3] parameter(0)
}`,
	OpConstant: `HloModule constant
ENTRY e {
  c = f32[2,2] constant({{1, -2.5}, {inf, -inf}})
  n = f64[3] constant({nan, 1e-300, -0})
  h = bf16[2] constant({1.5, -3})
  s = s8[] constant(-128)
  u = u64[2] constant({0, 18446744073709551615})
  b = pred[3] constant({true, false, true})
  z = f32[0,3] constant({})
  ROOT t = (f32[2,2], f64[3], bf16[2], s8[], u64[2], pred[3], f32[0,3]) tuple(c, n, h, s, u, b, z)
}`,
	OpComplex: `HloModule complex
ENTRY e {
  re = f64[2,3] parameter(0)
  im = f64[2,3] parameter(1)
  ROOT c = c128[2,3] complex(re, im)
}`,
	OpFft: `HloModule fft
ENTRY e {
  x = f32[4,8] parameter(0)
  r = c64[4,5] fft(x), fft_type=RFFT, fft_length={8}
  f = c64[4,5] fft(r), fft_type=FFT, fft_length={4,5}
  i = c64[4,5] fft(f), fft_type=IFFT, fft_length={5}
  ROOT b = f32[4,8] fft(i), fft_type=IRFFT, fft_length={4,8}
}`,
	OpIota: `HloModule iota
ENTRY e {
  ROOT i = s32[4,3] iota(), iota_dimension=1
}`,
	OpCompare: `HloModule compare
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  lt = pred[4] compare(a, b), direction=LT
  total = pred[4] compare(a, b), direction=NE, type=TOTALORDER
  ROOT both = pred[4] and(lt, total)
}`,
	OpSelect: `HloModule select
ENTRY e {
  p = pred[4] parameter(0)
  a = f32[4] parameter(1)
  b = f32[4] parameter(2)
  ROOT s = f32[4] select(p, a, b)
}`,
	OpClamp: `HloModule clamp
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[4] parameter(1)
  hi = f32[] parameter(2)
  ROOT c = f32[4] clamp(lo, x, hi)
}`,
	OpConvert: `HloModule convert
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = s32[4] convert(x)
}`,
	OpBitcastConvert: `HloModule bitcast_convert
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = u8[4,4] bitcast-convert(x)
}`,
	OpBroadcast: `HloModule broadcast
ENTRY e {
  x = f32[3] parameter(0)
  ROOT b = f32[2,3] broadcast(x), dimensions={1}
}`,
	OpReshape: `HloModule reshape
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT r = f32[6] reshape(x)
}`,
	OpTranspose: `HloModule transpose
ENTRY e {
  x = f32[2,3,4] parameter(0)
  ROOT t = f32[4,2,3] transpose(x), dimensions={2,0,1}
}`,
	OpSlice: `HloModule slice
ENTRY e {
  x = f32[8,6] parameter(0)
  ROOT s = f32[4,3] slice(x), slice={[0:8:2], [1:4]}
}`,
	OpConcatenate: `HloModule concatenate
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,3] parameter(1)
  ROOT c = f32[6,3] concatenate(a, b), dimensions={0}
}`,
	OpPad: `HloModule pad
ENTRY e {
  x = f32[2,3] parameter(0)
  zero = f32[] constant(0)
  interior = f32[3,7] pad(x, zero), padding=1_0_0x0_2_1
  ROOT edge = f32[3,5] pad(x, zero), padding=0_1x-1_3
}`,
	OpReverse: `HloModule reverse
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reverse(x), dimensions={0,1}
}`,
	OpCopy: `HloModule copy
ENTRY e {
  x = f32[2,3] parameter(0)
  ROOT c = f32[2,3] copy(x)
}`,
	OpDynamicSlice: `HloModule dynamic_slice
ENTRY e {
  x = f32[8,6] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT s = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
}`,
	OpDynamicUpdateSlice: `HloModule dynamic_update_slice
ENTRY e {
  x = f32[8,6] parameter(0)
  u = f32[2,3] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT s = f32[8,6] dynamic-update-slice(x, u, i, j)
}`,
	OpGather: `HloModule gather
ENTRY e {
  x = f32[5,4] parameter(0)
  idx = s32[3,1] parameter(1)
  ROOT g = f32[3,4] gather(x, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true
}`,
	OpScatter: `HloModule scatter
` + addF32 + `
ENTRY e {
  x = f32[5,4] parameter(0)
  idx = s32[3,1] parameter(1)
  upd = f32[3,4] parameter(2)
  ROOT s = f32[5,4] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, unique_indices=true, to_apply=add
}`,
	OpReduce: `HloModule reduce
` + addF32 + `
ENTRY e {
  x = f32[2,3,4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[3] reduce(x, zero), dimensions={0,2}, to_apply=add
}`,
	OpReduceWindow: `HloModule reduce_window
` + addF32 + `
ENTRY e {
  x = f32[4,6] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[2,2] reduce-window(x, zero), window={size=2x3 stride=2x3 pad=0_0x1_1}, to_apply=add
}`,
	OpSelectAndScatter: `HloModule select_and_scatter
` + addF32 + geF32 + `
ENTRY e {
  x = f32[4,6] parameter(0)
  src = f32[2,2] parameter(1)
  zero = f32[] constant(0)
  ROOT s = f32[4,6] select-and-scatter(x, src, zero), window={size=2x3 stride=2x3}, select=ge, scatter=add
}`,
	OpDot: `HloModule dot
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  m = f32[3,4] parameter(2)
  v = f32[4] parameter(3)
  batched = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  mv = f32[3] dot(m, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,3,5], f32[3]) tuple(batched, mv)
}`,
	OpConvolution: `HloModule convolution
ENTRY e {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,4,8] parameter(1)
  dw = f32[3,3,1,4] parameter(2)
  same = f32[1,5,5,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  strided = f32[1,3,3,8] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f
  depthwise = f32[1,3,3,4] convolution(x, dw), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
  ROOT t = (f32[1,5,5,8], f32[1,3,3,8], f32[1,3,3,4]) tuple(same, strided, depthwise)
}`,
	OpSort: `HloModule sort
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT s = (f32[8], s32[8]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
}`,
	OpTuple: `HloModule tuple
ENTRY e {
  a = f32[2] parameter(0)
  b = s32[] parameter(1)
  ROOT t = (f32[2], s32[], ()) tuple(a, b, empty)
  empty = () tuple()
}`,
	OpGetTupleElement: `HloModule get_tuple_element
ENTRY e {
  t = (f32[2], (s32[], pred[])) parameter(0)
  inner = (s32[], pred[]) get-tuple-element(t), index=1
  ROOT p = pred[] get-tuple-element(inner), index=1
}`,
	OpWhile: `HloModule while
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  twice = f32[4] add(x, x)
  ROOT out = (s32[], f32[4]) tuple(next, twice)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(loop), index=1
}`,
	OpConditional: `HloModule conditional
neg {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
id {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(later)
  later = f32[4] negate(x)
}
ENTRY e {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[4] parameter(2)
  two = f32[4] conditional(p, x, x), true_computation=neg, false_computation=id
  ROOT three = f32[4] conditional(i, x, two, x), branch_computations={neg, id, neg}
}`,
	OpCall: `HloModule call
` + addF32 + `
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] call(a, b), to_apply=add
}`,
	// As XLA dumps a fused module: signatures, layouts and operand shapes, a loop
	// fusion, an input fusion with a reduce root and a multi-output (tuple root) fusion.
	OpFusion: `HloModule fusion
` + addF32 + `
%fused_loop (p0: f32[4], p1: f32[4]) -> f32[4] {
  %p0 = f32[4]{0} parameter(0)
  %p1 = f32[4]{0} parameter(1)
  %s = f32[4]{0} add(f32[4]{0} %p0, f32[4]{0} %p1)
  ROOT %m = f32[4]{0} multiply(f32[4]{0} %s, f32[4]{0} %p0)
}
%fused_reduce (p0: f32[4,3], p1: f32[]) -> f32[4] {
  %p0 = f32[4,3]{1,0} parameter(0)
  %p1 = f32[] parameter(1)
  %e = f32[4,3]{1,0} exponential(f32[4,3]{1,0} %p0)
  ROOT %r = f32[4]{0} reduce(f32[4,3]{1,0} %e, f32[] %p1), dimensions={1}, to_apply=%add
}
%fused_pair (p0: f32[4], p1: f32[4]) -> (f32[4], f32[4]) {
  %p1 = f32[4]{0} parameter(1)
  %p0 = f32[4]{0} parameter(0)
  %sum = f32[4]{0} add(f32[4]{0} %p0, f32[4]{0} %p1)
  %neg = f32[4]{0} negate(f32[4]{0} %p1)
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(f32[4]{0} %sum, f32[4]{0} %neg)
}
ENTRY %e (a: f32[4], b: f32[4], xs: f32[4,3]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  %xs = f32[4,3]{1,0} parameter(2)
  %zero = f32[] constant(0)
  %f = f32[4]{0} fusion(f32[4]{0} %a, f32[4]{0} %b), kind=kLoop, calls=%fused_loop
  %rows = f32[4]{0} fusion(f32[4,3]{1,0} %xs, f32[] %zero), kind=kInput, calls=%fused_reduce
  %pair = (f32[4]{0}, f32[4]{0}) fusion(%f, %rows), kind=kLoop, calls=%fused_pair, metadata={op_name="jit(f)/add"}
  %g0 = f32[4]{0} get-tuple-element(%pair), index=0
  %g1 = f32[4]{0} get-tuple-element(%pair), index=1
  ROOT %out = f32[4]{0} subtract(%g0, %g1)
}`,
}

// elementwiseTextSample builds a module applying a unary or binary elementwise op to
// parameters of a type its type class allows.
func elementwiseTextSample(op Opcode) (string, bool) {
	info := op.Info()
	if info.Kind != KindUnary && info.Kind != KindBinary {
		return "", false
	}
	dt := F32
	if !info.Types.Allows(dt) {
		dt = S32
	}
	result := dt
	if op == OpIsFinite {
		result = Pred
	}
	params := []string{fmt.Sprintf("  a = %v[2,3] parameter(0)\n", dt)}
	operands := "a"
	if info.Kind == KindBinary {
		params = append(params, fmt.Sprintf("  b = %v[2,3] parameter(1)\n", dt))
		operands = "a, b"
	}
	return fmt.Sprintf("HloModule %s\nENTRY e {\n%s  ROOT r = %v[2,3] %v(%s)\n}\n",
		strings.ReplaceAll(op.String(), "-", "_"), strings.Join(params, ""), result, op, operands), true
}

// textSampleFor returns the sample module of an opcode.
func textSampleFor(op Opcode) (string, bool) {
	if text, ok := textSamples[op]; ok {
		return text, true
	}
	return elementwiseTextSample(op)
}

// assertTextRoundTrip checks that parse → print → parse → print is the identity on the
// printed text, and returns the first parsed module.
func assertTextRoundTrip(t *testing.T, text string) *Module {
	t.Helper()
	m1, err := ParseModule(text)
	require.NoError(t, err)
	printed := Print(m1)
	m2, err := ParseModule(printed)
	require.NoError(t, err, "reparsing the printed text:\n%s", printed)
	assert.Equal(t, printed, Print(m2))
	return m1
}

// TestRoundTripEveryOpcode extends the op-table coverage rule to the text form: every
// op row has a sample that parses, verifies, prints and parses back identically.
func TestRoundTripEveryOpcode(t *testing.T) {
	for _, op := range AllOpcodes() {
		t.Run(op.String(), func(t *testing.T) {
			text, ok := textSampleFor(op)
			require.True(t, ok, "opcode %v has no HLO text sample in textSamples", op)
			m := assertTextRoundTrip(t, text)
			assert.True(t, moduleUsesOpcode(m, op), "the sample of %v does not use it", op)
		})
	}
}

func moduleUsesOpcode(m *Module, op Opcode) bool {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in.Op == op {
				return true
			}
		}
	}
	return false
}
