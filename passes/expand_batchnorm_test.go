package passes

import (
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

func TestExpandBatchNormInferenceText(t *testing.T) {
	runPassCases(t, []passCase{{
		name:     "(x - mean) * (rsqrt(var + eps) * scale) + offset",
		disabled: OptionalNames(),
		before: `HloModule m
ENTRY %e (x: f32[2,3], s: f32[3], o: f32[3], m: f32[3], v: f32[3]) -> f32[2,3] {
  %x = f32[2,3] parameter(0)
  %s = f32[3] parameter(1)
  %o = f32[3] parameter(2)
  %m = f32[3] parameter(3)
  %v = f32[3] parameter(4)
  ROOT %bn = f32[2,3] batch-norm-inference(%x, %s, %o, %m, %v), epsilon=0.25, feature_index=1
}
`,
		after: `HloModule m
ENTRY %e (x: f32[2,3], s: f32[3], o: f32[3], m: f32[3], v: f32[3]) -> f32[2,3] {
  %x = f32[2,3] parameter(0)
  %s = f32[3] parameter(1)
  %o = f32[3] parameter(2)
  %m = f32[3] parameter(3)
  %v = f32[3] parameter(4)
  %bn.broadcast = f32[2,3] broadcast(%m), dimensions={1}
  %bn.subtract = f32[2,3] subtract(%x, %bn.broadcast)
  %bn.constant = f32[] constant(0.25)
  %bn.broadcast.1 = f32[3] broadcast(%bn.constant), dimensions={}
  %bn.add = f32[3] add(%v, %bn.broadcast.1)
  %bn.rsqrt = f32[3] rsqrt(%bn.add)
  %bn.multiply = f32[3] multiply(%bn.rsqrt, %s)
  %bn.broadcast.2 = f32[2,3] broadcast(%bn.multiply), dimensions={1}
  %bn.multiply.1 = f32[2,3] multiply(%bn.subtract, %bn.broadcast.2)
  %bn.broadcast.3 = f32[2,3] broadcast(%o), dimensions={1}
  ROOT %bn.add.1 = f32[2,3] add(%bn.multiply.1, %bn.broadcast.3)
}
`,
	}})
}

// expandedMatchesCPU checks that the module after the whole pipeline computes, in
// cpuref, what cpuref's own definition of the original computes: exactly, or
// within rel where rel > 0 (the expansion computes in the operand's type, cpuref's
// definition in float64).
func expandedMatchesCPU(t *testing.T, text string, rel float64, inputs ...*hlo.Literal) {
	t.Helper()
	m, err := hlo.ParseModule(text)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cpuref.Eval(m, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(m, Config{}); err != nil {
		t.Fatal(err)
	}
	for _, in := range m.Entry.Instructions {
		if in.Info().ExpandedBy != "" {
			t.Fatalf("%s survived the pipeline", in.Name)
		}
	}
	got, err := cpuref.Eval(m, inputs...)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := want.Leaves(), got.Leaves()
	for i := range wl {
		if rel > 0 {
			err = hlo.LiteralsClose(gl[i], wl[i], rel, rel)
		} else {
			err = hlo.LiteralsEqual(gl[i], wl[i])
		}
		if err != nil {
			t.Errorf("output %d: %v\nafter the pipeline:\n%s", i, err, hlo.Print(m))
		}
	}
}

// ramp is a literal of the given shape holding a deterministic spread of values.
func ramp(dt hlo.DType, dims ...int64) *hlo.Literal {
	l := hlo.NewLiteral(hlo.MakeShape(dt, dims...))
	for i := range l.NumElements() {
		l.SetFloat64(i, float64((i*7)%11)-4.5+float64(i%3)*0.25)
	}
	return l
}

func TestExpandBatchNormMatchesDefinition(t *testing.T) {
	x, c := ramp(hlo.F32, 4, 3, 5), ramp(hlo.F32, 3)
	positive := hlo.MustFromSlice([]int64{3}, []float32{0.5, 2, 1.25})
	expandedMatchesCPU(t, `HloModule train
ENTRY e {
  x = f32[4,3,5] parameter(0)
  s = f32[3] parameter(1)
  ROOT t = (f32[4,3,5], f32[3], f32[3]) batch-norm-training(x, s, s), epsilon=0.001, feature_index=1
}`, 1e-5, x, c)
	expandedMatchesCPU(t, `HloModule infer
ENTRY e {
  x = f32[4,3,5] parameter(0)
  s = f32[3] parameter(1)
  v = f32[3] parameter(2)
  ROOT y = f32[4,3,5] batch-norm-inference(x, s, s, s, v), epsilon=0.01, feature_index=1
}`, 1e-5, x, c, positive)
	expandedMatchesCPU(t, `HloModule grad
ENTRY e {
  x = f32[4,3,5] parameter(0)
  s = f32[3] parameter(1)
  v = f32[3] parameter(2)
  dy = f32[4,3,5] parameter(3)
  ROOT g = (f32[4,3,5], f32[3], f32[3]) batch-norm-grad(x, s, s, v, dy), epsilon=0.01, feature_index=1
}`, 1e-4, x, c, positive, ramp(hlo.F32, 4, 3, 5))
	expandedMatchesCPU(t, `HloModule last
ENTRY e {
  x = f32[6,2] parameter(0)
  s = f32[2] parameter(1)
  ROOT t = (f32[6,2], f32[2], f32[2]) batch-norm-training(x, s, s), epsilon=0, feature_index=1
}`, 1e-5, ramp(hlo.F32, 6, 2), ramp(hlo.F32, 2))
}
