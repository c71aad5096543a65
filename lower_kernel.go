package vkxla

import (
	"crypto/sha256"
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/spirv/codegen"
)

// kernelRef is a generated kernel, created on the device when the executable is
// built; identical kernels (same SPIR-V and interface) are shared.
type kernelRef struct {
	kernel *codegen.Kernel
}

// kernelSet de-duplicates generated kernels within one executable.
type kernelSet struct {
	byKey map[[32]byte]*kernelRef
	all   []*kernelRef
}

func newKernelSet() *kernelSet { return &kernelSet{byKey: map[[32]byte]*kernelRef{}} }

func (s *kernelSet) add(k *codegen.Kernel) *kernelRef {
	h := sha256.New()
	h.Write(k.SPIRV)
	fmt.Fprintf(h, "|%s|%d|%d", k.EntryPoint, k.Bindings, k.PushConstantSize)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	if r, ok := s.byKey[key]; ok {
		return r
	}
	r := &kernelRef{kernel: k}
	s.byKey[key] = r
	s.all = append(s.all, r)
	return r
}

// kernelComputation wraps one instruction as a kernel computation: a parameter per
// operand, the instruction (sharing its attributes and called computations) as root.
func kernelComputation(in *hlo.Instruction) *hlo.Computation {
	c := &hlo.Computation{Name: in.Name}
	for i, op := range in.Operands {
		p := &hlo.Instruction{
			Name:  fmt.Sprintf("%s.p%d", in.Name, i),
			Op:    hlo.OpParameter,
			Shape: op.Shape,
			Attrs: hlo.Attributes{ParameterNumber: int64(i)},
		}
		c.Params = append(c.Params, p)
		c.Instructions = append(c.Instructions, p)
	}
	root := *in
	root.Operands = c.Params
	c.Instructions = append(c.Instructions, &root)
	c.Root = &root
	c.Renumber()
	return c
}

// fusedKernel is a fusion's called computation named after the fusion instruction,
// so that kernels, profiles and dumps carry the name the user sees.
func fusedKernel(in *hlo.Instruction) *hlo.Computation {
	kc := *in.Called[0]
	kc.Name = in.Name
	return &kc
}

// lowerKernel generates the kernels of one instruction and appends their dispatches.
func (l *lowering) lowerKernel(b *block, in *hlo.Instruction, ops []value) (value, error) {
	for _, op := range ops {
		if op.shape.IsTuple() {
			return value{}, fmt.Errorf("%w: %s takes a tuple operand %v", ErrUnsupported, in.Op, op.shape)
		}
	}
	kc := kernelComputation(in)
	if in.Op == hlo.OpFusion {
		kc = fusedKernel(in)
	}
	prog, err := codegen.Lower(kc, l.target)
	if err != nil {
		return value{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if l.stop != nil {
		if err := l.stop(); err != nil {
			return value{}, err
		}
	}
	l.noteLowered(kc, prog)
	out := l.newValue(in.Name, in.Shape, rangeTemp)
	scratch := make([]int, len(prog.Scratch))
	for i, size := range prog.Scratch {
		scratch[i] = l.newRange(fmt.Sprintf("%s.scratch%d", in.Name, i), size, rangeTemp)
	}
	if out.shape.ByteSize() == 0 && !in.Shape.IsTuple() {
		return out, nil // nothing to compute
	}
	for _, d := range prog.Dispatches {
		st := step{kind: stepDispatch, name: in.Name, kernel: l.kernels.add(d.Kernel), groups: d.Groups, push: d.Push}
		if d.CopiesInPlaceInput {
			st.copies, st.src, st.dst = true, ops[slices.Index(prog.InPlace, true)].leaves[0], out.leaves[0]
		}
		for _, a := range d.Args {
			st.args = append(st.args, argRange(a, ops, out, scratch))
		}
		b.steps = append(b.steps, st)
	}
	l.noteInPlace(b, prog, ops, out)
	return out, nil
}

func argRange(a codegen.Arg, ops []value, out value, scratch []int) int {
	switch a.Kind {
	case codegen.ArgInput:
		return ops[a.Index].leaves[0]
	case codegen.ArgOutput:
		return out.leaves[a.Index]
	}
	return scratch[a.Index]
}

// noteLowered records a kernel computation and its dispatches for VKXLA_DUMP.
func (l *lowering) noteLowered(c *hlo.Computation, p *codegen.Program) {
	if !l.dumping {
		return
	}
	l.lowered.WriteString(c.String())
	for _, d := range p.Dispatches {
		fmt.Fprintf(&l.lowered, "  // dispatch %s: local size %v, groups %v, args %v\n", d.Kernel.Name, d.Kernel.LocalSize, d.Groups, d.Args)
	}
	if len(p.Scratch) > 0 {
		fmt.Fprintf(&l.lowered, "  // scratch bytes %v\n", p.Scratch)
	}
	l.lowered.WriteString("\n")
}
