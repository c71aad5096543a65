package autodiff

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Residual is one value the forward pass keeps for the backward pass of a
// checkpointed region or a while loop (JAX's print_saved_residuals lists the same).
type Residual struct {
	Shape hlo.Shape
	Bytes int64
	// Producer is the forward instruction whose value is kept, as the original
	// module names it; Op is its opcode (a kept CheckpointName is the custom-call).
	Producer string
	Op       hlo.Opcode
	// Argument: the value is a parameter of the module (JAX: "from the argument").
	Argument bool
	// Stacked: a while loop keeps it once per iteration (its [n, …] stack).
	Stacked bool
	// OnHost: the value is kept in host memory (save_and_offload_only_these_names'
	// offload names): MoveToHost in the forward pass, MoveToDevice in the backward.
	OnHost bool
	// Of is what keeps it: a checkpointed region's computation (named as the
	// function JAX names) or a while loop.
	Of string
}

// String is the residual as print_saved_residuals writes one.
func (r Residual) String() string {
	from := fmt.Sprintf("output of %v %s", r.Op, r.Producer)
	switch {
	case r.Argument:
		from = "from the argument " + r.Producer
	case r.Stacked:
		from = "stack of " + r.Producer
	}
	where := ""
	if r.OnHost {
		where = ", in host memory"
	}
	return fmt.Sprintf("%v %s (%s, %d bytes%s)", r.Shape, from, r.Of, r.Bytes, where)
}

// residualLog collects residuals, each value once.
type residualLog struct {
	list []Residual
	seen map[*hlo.Instruction]bool
}

func (l *residualLog) add(x *hlo.Instruction, r Residual) {
	if l.seen[x] {
		return
	}
	l.seen[x] = true
	r.Shape, r.Bytes = x.Shape, x.Shape.ByteSize()
	l.list = append(l.list, r)
}

// SavedResiduals lists the values the forward pass of m's reverse-mode derivative
// (with respect to every floating-point array parameter) keeps for the backward
// pass in checkpointed regions and while loops: a region's arguments and the values
// its policy saves that the backward pass reads, and the states a loop stacks.
// Values outside any region or loop are kept as the VJP rules read them and are not
// listed. A value two regions read is listed once.
func SavedResiduals(m *hlo.Module) ([]Residual, error) {
	if m == nil || m.Entry == nil {
		return nil, fmt.Errorf("autodiff: SavedResiduals: nil module or module without entry: %w", ErrInvalidArgument)
	}
	var wrt []int
	for i, p := range m.Entry.Params {
		if p.Shape.IsArray() && p.Shape.DType.IsFloat() {
			wrt = append(wrt, i)
		}
	}
	log := &residualLog{seen: map[*hlo.Instruction]bool{}}
	if len(wrt) == 0 {
		return nil, nil // nothing is differentiated: nothing is kept
	}
	if _, err := transform(m, wrt, nil, modeVJP, log); err != nil {
		return nil, err
	}
	return log.list, nil
}

// regionResiduals records the inputs a region's backward computation reads (reads
// over its arguments, then its saved values; the cotangent last is not one).
func (e *engine) regionResiduals(r *region, args []*hlo.Instruction, reads []bool) {
	if e.residuals == nil {
		return
	}
	for i, x := range args {
		if reads[i] {
			e.residuals.add(x, Residual{Producer: x.Name, Op: x.Op, Argument: x.Op == hlo.OpParameter, Of: r.body.Name})
		}
	}
	for j, x := range r.saved {
		if reads[len(args)+j] {
			orig := r.origs[j]
			e.residuals.add(x, Residual{Producer: orig.Name, Op: orig.Op, Of: r.body.Name, OnHost: r.hosted[j]})
		}
	}
}

// loopResiduals records what a forward loop keeps: per state leaf its stack, or
// the leaf itself where the body passes it through, and the stack of each body
// value it keeps (a checkpointed step's saved values, random draws).
func (e *engine) loopResiduals(in *hlo.Instruction, lt *loopTape) {
	if e.residuals == nil {
		return
	}
	for l, x := range lt.saved {
		if !lt.stacked[l] {
			v := throughTuples(x)
			e.residuals.add(x, Residual{Producer: v.Name, Op: v.Op, Argument: v.Op == hlo.OpParameter, Of: in.Name})
			continue
		}
		e.residuals.add(x, Residual{Producer: fmt.Sprintf("%s state leaf %d", in.Name, l), Op: in.Op, Stacked: true, Of: in.Name})
	}
	for j, x := range lt.kept {
		k := lt.keeps.order[j]
		e.residuals.add(x, Residual{Producer: k.Name, Op: k.Op, Stacked: true, OnHost: lt.keeps.offload[k], Of: in.Name})
	}
}

// throughTuples follows get-tuple-element of a tuple to the element's value (a
// loop-invariant state leaf is the init tuple's operand, often a parameter).
func throughTuples(x *hlo.Instruction) *hlo.Instruction {
	for x.Op == hlo.OpGetTupleElement && x.Operands[0].Op == hlo.OpTuple {
		x = x.Operands[0].Operands[x.Attrs.TupleIndex]
	}
	return x
}
