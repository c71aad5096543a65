package vkxla

import (
	"errors"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// Devices whose plans order their collectives differently, or name two
// collectives alike, would meet at the wrong collective: CompileReplicated
// refuses them.
func TestCheckSameCollectives(t *testing.T) {
	a := &hlo.Instruction{Name: "a", Op: hlo.OpAllReduce}
	b := &hlo.Instruction{Name: "b", Op: hlo.OpAllGather}
	step := func(in *hlo.Instruction) plan.Step {
		return plan.Step{Kind: plan.StepCollective, Name: in.Name, Instr: in}
	}
	exe := func(steps ...plan.Step) *Executable {
		return &Executable{c: &compiled{main: &plan.Block{Steps: steps}}}
	}
	loop := func(steps ...plan.Step) plan.Step {
		return plan.Step{Kind: plan.StepWhile, Cond: &plan.Block{}, Body: &plan.Block{Steps: steps}}
	}

	same := &Replicated{exes: []*Executable{exe(step(a), loop(step(b))), exe(step(a), loop(step(b)))}}
	if err := same.checkSameCollectives(); err != nil {
		t.Fatal(err)
	}
	swapped := &Replicated{exes: []*Executable{exe(step(a), loop(step(b))), exe(loop(step(b)), step(a))}}
	if err := swapped.checkSameCollectives(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("swapped collectives: %v", err)
	}
	twin := &hlo.Instruction{Name: "a", Op: hlo.OpAllReduce}
	named := &Replicated{exes: []*Executable{exe(step(a), step(twin))}}
	if err := named.checkSameCollectives(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("two collectives named a: %v", err)
	}
}
