package hlo

import (
	"strings"
	"testing"
)

// dot and convolution accept a declared result type wider than their operands'
// (XLA's preferred_element_type) and refuse a narrower or unrelated one, naming
// the instruction and both types.
func TestPreferredElementType(t *testing.T) {
	dot := func(in, out string) string {
		return `HloModule m
ENTRY e {
  x = ` + in + `[2,3] parameter(0)
  y = ` + in + `[3,4] parameter(1)
  ROOT d = ` + out + `[2,4] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}`
	}
	conv := func(in, out string) string {
		return `HloModule m
ENTRY e {
  x = ` + in + `[1,5,2] parameter(0)
  k = ` + in + `[3,2,4] parameter(1)
  ROOT c = ` + out + `[1,3,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
}`
	}
	for _, ok := range [][2]string{{"s8", "s32"}, {"u8", "s32"}, {"u8", "u32"}, {"bf16", "f32"}, {"f16", "f32"},
		{"f32", "f64"}, {"s16", "s64"}, {"f32", "f32"}} {
		for _, text := range []string{dot(ok[0], ok[1]), conv(ok[0], ok[1])} {
			m, err := ParseModule(text)
			if err != nil {
				t.Errorf("%s→%s: %v", ok[0], ok[1], err)
				continue
			}
			if got := m.Entry.Root.Shape.DType.String(); got != ok[1] {
				t.Errorf("%s→%s: result type %s", ok[0], ok[1], got)
			}
			if err := Verify(m); err != nil {
				t.Errorf("%s→%s: %v", ok[0], ok[1], err)
			}
		}
	}
	for _, bad := range [][2]string{{"s32", "s8"}, {"f32", "f16"}, {"s8", "f32"}, {"s32", "u64"}, {"bf16", "f16"}, {"f32", "s32"}} {
		for _, text := range []string{dot(bad[0], bad[1]), conv(bad[0], bad[1])} {
			_, err := ParseModule(text)
			if err == nil || !strings.Contains(err.Error(), "result type "+bad[1]+" is not a widening of the operand type "+bad[0]) {
				t.Errorf("%s→%s: got %v, want a refusal naming both types", bad[0], bad[1], err)
			}
		}
	}
	b := NewBuilder("m")
	x := b.Parameter(MakeShape(BF16, 2, 3), "x")
	d := b.DotAs(x, x, DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, F32)
	if _, err := b.Build(d); err != nil || !d.Shape.Equal(MakeShape(F32, 2, 2)) {
		t.Fatalf("DotAs: %v, %v", d, err)
	}
}
