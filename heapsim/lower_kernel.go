package heapsim

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// KernelRef is a generated kernel, created on the device when the executable is
// built; identical kernels (same SPIR-V and interface) are shared.
type KernelRef struct {
	Kernel *codegen.Kernel
}

// kernelSet de-duplicates generated kernels within one executable.
type kernelSet struct {
	byKey map[[32]byte]*KernelRef
	all   []*KernelRef
}

func newKernelSet() *kernelSet { return &kernelSet{byKey: map[[32]byte]*KernelRef{}} }

func (s *kernelSet) add(k *codegen.Kernel) *KernelRef {
	h := sha256.New()
	h.Write(k.SPIRV)
	fmt.Fprintf(h, "|%s|%d|%d", k.EntryPoint, k.Bindings, k.PushConstantSize)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	if r, ok := s.byKey[key]; ok {
		return r
	}
	r := &KernelRef{Kernel: k}
	s.byKey[key] = r
	s.all = append(s.all, r)
	return r
}

// fusedKernel is a fusion's called computation named after the fusion instruction,
// so that kernels, profiles and dumps carry the name the user sees.
func fusedKernel(in *hlo.Instruction) *hlo.Computation {
	kc := *in.Called[0]
	kc.Name = in.Name
	return &kc
}

// lowerKernel generates the kernels of one instruction and appends their dispatches.
func (l *lowering) lowerKernel(b *Block, in *hlo.Instruction, ops []Value) (Value, error) {
	for _, op := range ops {
		if op.Shape.IsTuple() {
			return Value{}, fmt.Errorf("%w: %s takes a tuple operand %v", ErrUnsupported, in.Op, op.Shape)
		}
	}
	kc := hlo.Alone(in)
	if in.Op == hlo.OpFusion {
		kc = fusedKernel(in)
	}
	prog, err := l.kernelsOf(kc)
	if err != nil {
		return Value{}, err
	}
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	scratch := make([]int, len(prog.Scratch))
	for i, size := range prog.Scratch {
		scratch[i] = l.newRange(fmt.Sprintf("%s.scratch%d", in.Name, i), size, rangeTemp)
	}
	if out.Shape.ByteSize() == 0 && !in.Shape.IsTuple() {
		return out, nil // nothing to compute
	}
	for _, d := range prog.Dispatches {
		st := Step{Kind: StepDispatch, Name: in.Name, Kernel: l.kernels.add(d.Kernel), Groups: d.Groups, Push: d.Push}
		if d.CopiesInPlaceInput {
			st.Copies, st.Src, st.Dst = true, ops[slices.Index(prog.InPlace, true)].Leaves[0], out.Leaves[0]
		}
		for _, a := range d.Args {
			st.Args = append(st.Args, argRange(a, ops, out, scratch))
		}
		b.Steps = append(b.Steps, st)
	}
	l.noteInPlace(b, prog, ops, out)
	return out, nil
}

func argRange(a codegen.Arg, ops []Value, out Value, scratch []int) int {
	switch a.Kind {
	case codegen.ArgInput:
		return ops[a.Index].Leaves[0]
	case codegen.ArgOutput:
		return out.Leaves[a.Index]
	}
	return scratch[a.Index]
}
