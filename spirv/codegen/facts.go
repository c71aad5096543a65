package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Facts is what the memory model needs of Lower(c, t), decided by the same
// rules without emitting SPIR-V: the inputs and outputs, the scratch buffers'
// sizes, the InPlace inputs and, per dispatch, the arguments it binds and
// whether it only copies the in-place input. Each dispatch's Kernel has a name
// and no code, and Groups and Push are left zero (they do not affect memory).
// Lower and Facts share the strategy choice and every sizing decision
// (strategy, treeSizes, sortSizes, operandInPlace, inPlaceInputs);
// TestFactsAgreeWithLower checks the rest for every op and program. Facts
// refuses what Lower refuses for the target's types and limits.
func Facts(c *hlo.Computation, t Target) (*Program, error) {
	if c == nil || c.Root == nil {
		return nil, fmt.Errorf("codegen: computation has no root")
	}
	l, err := newLowering(c, t)
	if err != nil {
		return nil, fmt.Errorf("codegen: %s: %w", c.Name, err)
	}
	if err := l.facts(); err != nil {
		return nil, fmt.Errorf("codegen: %s: %w", c.Name, err)
	}
	return l.p, nil
}

// facts fills the program's facts by the root's strategy.
func (l *lowering) facts() error {
	switch l.strategy() {
	case byUserKernel:
		return l.lowerUserKernel() // one dispatch, no scratch: its facts are its lowering
	case byScatter:
		return l.scatterFacts()
	case bySort:
		return l.sortFacts()
	case byFFT:
		return l.fftFacts()
	case byDynamicUpdateSlice:
		l.p.InPlace = operandInPlace(l.c, 1)
		l.copyFacts()
		if l.c.Root.Operands[1].Shape.NumElements() > 0 {
			l.dispatchFact("dus_window", l.outputArgs())
		}
		return nil
	case byTreeReduce:
		return l.treeFacts()
	case byGEMM:
		l.p.InPlace = l.epilogueInPlace(gemmDot(l.c))
		l.dispatchFact("gemm", l.outputArgs())
		return nil
	case byGEMV:
		l.gemvFacts()
		return nil
	case byConvGEMM:
		l.convGEMMFacts()
		return nil
	case byDepthwise:
		l.p.InPlace = l.epilogueInPlace(gemmConv(l.c))
		l.dispatchFact("depthwise", l.outputArgs())
		return nil
	case bySplitConv:
		l.splitConvFacts()
		return nil
	case byRows:
		rp, _ := planRows(l.c)
		if l.p.Outputs[0].NumElements() > 0 {
			l.p.InPlace = inPlaceInputs(l.c, len(rp.rowDims))
			l.dispatchFact("", l.outputArgs())
		}
		return nil
	}
	if err := l.checkOutputsShareDims(); err != nil {
		return err
	}
	if l.p.Outputs[0].NumElements() > 0 {
		l.p.InPlace = inPlaceInputs(l.c, -1)
		l.dispatchFact("", l.outputArgs())
	}
	return nil
}

// dispatchFact appends a dispatch binding every input, then args.
func (l *lowering) dispatchFact(suffix string, args ...[]Arg) {
	name := l.c.Name
	if suffix != "" {
		name += "_" + suffix
	}
	d := Dispatch{Kernel: &Kernel{Name: name}}
	for i := range l.p.Inputs {
		d.Args = append(d.Args, Arg{Kind: ArgInput, Index: i})
	}
	for _, a := range args {
		d.Args = append(d.Args, a...)
	}
	l.p.Dispatches = append(l.p.Dispatches, d)
}

func (l *lowering) outputArgs() []Arg {
	args := make([]Arg, len(l.p.Outputs))
	for i := range args {
		args[i] = Arg{Kind: ArgOutput, Index: i}
	}
	return args
}

func scratchArgs(first, n int) []Arg {
	args := make([]Arg, n)
	for i := range args {
		args[i] = Arg{Kind: ArgScratch, Index: first + i}
	}
	return args
}

// partialSumFacts are the facts of a kernel split into parts: a scratch buffer
// of bytes for the partial sums, the partial pass writing it and the sum pass
// reading it into the output.
func (l *lowering) partialSumFacts(partial, sum string, bytes int64) {
	scratch := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, bytes)
	l.dispatchFact(partial, scratchArgs(scratch, 1))
	l.dispatchFact(sum, scratchArgs(scratch, 1), l.outputArgs())
}

// copyFacts is copyOperands' dispatch: skipped when the operand is empty.
func (l *lowering) copyFacts() {
	if l.c.Root.Operands[0].Shape.NumElements() == 0 {
		return
	}
	l.dispatchFact("copy", l.outputArgs())
	l.p.Dispatches[len(l.p.Dispatches)-1].CopiesInPlaceInput = l.p.InPlace != nil
}

func (l *lowering) scatterFacts() error {
	root := l.c.Root
	n, err := scatterOperands(root)
	if err != nil {
		return err
	}
	l.p.InPlace = operandInPlace(l.c, n)
	l.copyFacts()
	if root.Operands[n+1].Shape.NumElements() > 0 {
		l.dispatchFact("scatter", l.outputArgs()) // updates, by window or serial: one dispatch
	}
	return nil
}

func (l *lowering) sortFacts() error {
	s, total, err := l.sortSizes()
	if err != nil || total == 0 {
		return err
	}
	perm := l.p.scratchIndex()
	l.p.Scratch = append(l.p.Scratch, s.rows*s.p*int64(s.permDT.Size()))
	l.dispatchFact("sort_init", scratchArgs(perm, 1))
	for size := int64(2); size <= s.p; size *= 2 {
		for stride := size / 2; stride >= 1; stride /= 2 {
			l.dispatchFact("sort_step", scratchArgs(perm, 1))
		}
	}
	l.dispatchFact("sort_gather", scratchArgs(perm, 1), l.outputArgs())
	return nil
}

func (l *lowering) treeFacts() error {
	ts := l.treeSizes()
	n := product(ts.outDims)
	if ts.parts == 1 {
		if n > 0 {
			l.dispatchFact("reduce", l.outputArgs())
		}
		return nil
	}
	first := l.p.scratchIndex()
	for _, dt := range ts.dtypes {
		l.p.Scratch = append(l.p.Scratch, n*ts.parts*int64(dt.Size()))
	}
	if n > 0 {
		l.dispatchFact("reduce_partial", scratchArgs(first, len(ts.dtypes)))
		l.dispatchFact("reduce", scratchArgs(first, len(ts.dtypes)), l.outputArgs())
	}
	return nil
}
