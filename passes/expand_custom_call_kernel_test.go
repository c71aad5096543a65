package passes

import (
	"errors"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// A kernel target's calls stay for code generation (a decomposition target's next
// to it is expanded); cpuref computes them with the target's Reference, whose
// result must have the call's shape.
func TestKernelTargetCallsStay(t *testing.T) {
	header := []uint32{0x07230203, 0x00010300, 0, 1, 0}
	negate := func(call *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
		out := hlo.NewLiteral(call.Shape)
		for i := range out.NumElements() {
			out.SetFloat64(i, -ops[0].Float64(i))
		}
		return out, nil
	}
	wrong := func(*hlo.Instruction, []*hlo.Literal) (*hlo.Literal, error) {
		return hlo.NewLiteral(hlo.MakeShape(hlo.F32, 1)), nil
	}
	groups := func(*hlo.Instruction) ([3]uint32, error) { return [3]uint32{1, 1, 1}, nil }
	for name, ref := range map[string]hlo.CustomCallReference{"passes.kneg": negate, "passes.kwrong": wrong} {
		if err := hlo.RegisterCustomCall(hlo.CustomCallTarget{Name: name, Reference: ref,
			Kernel: &hlo.SPIRVKernel{Words: header, EntryPoint: "main", Groups: groups}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := hlo.ParseModule(`HloModule k
ENTRY e {
  x = f32[3] parameter(0)
  s = f32[3] custom-call(x), custom_call_target="Sharding"
  ROOT k = f32[3] custom-call(s), custom_call_target="passes.kneg"
}`)
	if err != nil {
		t.Fatal(err)
	}
	x := hlo.MustFromSlice([]int64{3}, []float32{1, -2, 0.5})
	out, err := cpuref.Eval(m, x)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := hlo.Values[float32](out); got[0] != -1 || got[1] != 2 || got[2] != -0.5 {
		t.Errorf("cpuref gave %v, want the reference's -x", got)
	}
	if _, err := ExpandCustomCalls(m, Config{}); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, in := range m.Entry.Instructions {
		ops = append(ops, in.Op.String())
	}
	if got := strings.Join(ops, " "); got != "parameter custom-call" {
		t.Errorf("after the expander: %s; want the Sharding call expanded and the kernel call kept", got)
	}

	m.Entry.Root.Attrs.CustomCall.Target = "passes.kwrong"
	if _, err := cpuref.Eval(m, x); err == nil || !strings.Contains(err.Error(), `(target "passes.kwrong"): the reference returned f32[1], the call declares f32[3]`) {
		t.Errorf("got %v", err)
	}
	if _, err := hlo.ExpandCustomCall(m.Entry.Root); err == nil || !strings.Contains(err.Error(), "without an HLO decomposition") {
		t.Errorf("got %v", err)
	}
}

// Registration names what a kernel target lacks.
func TestRegisterKernelTargetChecks(t *testing.T) {
	header := []uint32{0x07230203, 0x00010300, 0, 1, 0}
	groups := func(*hlo.Instruction) ([3]uint32, error) { return [3]uint32{1, 1, 1}, nil }
	ref := func(*hlo.Instruction, []*hlo.Literal) (*hlo.Literal, error) { return nil, errors.New("unused") }
	for want, k := range map[string]hlo.CustomCallTarget{
		"needs a Reference function or an Expand": {Name: "p.a", Kernel: &hlo.SPIRVKernel{Words: header, EntryPoint: "main", Groups: groups}},
		"Words is not a SPIR-V module":            {Name: "p.b", Reference: ref, Kernel: &hlo.SPIRVKernel{Words: []uint32{1, 2, 3, 4, 5}, EntryPoint: "main", Groups: groups}},
		"names no entry point":                    {Name: "p.c", Reference: ref, Kernel: &hlo.SPIRVKernel{Words: header, Groups: groups}},
		"has no Groups function":                  {Name: "p.d", Reference: ref, Kernel: &hlo.SPIRVKernel{Words: header, EntryPoint: "main"}},
		"needs an Expand function or a Kernel":    {Name: "p.e"},
	} {
		err := hlo.RegisterCustomCall(k)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), k.Name) {
			t.Errorf("%s: got %v, want %q", k.Name, err, want)
		}
	}
}
