package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/vkxla/vkxla"
	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// checker finds the first kernel whose GPU output differs from cpuref's beyond
// its tolerance (vkxla run -check), as XLA's hlo-bisect and IREE's dispatch
// tracing do. Every kernel runs alone on cpuref's values of its operands, not on
// the GPU's, so an error upstream cannot spread into the kernels after it; a
// fusion that differs is then run instruction by instruction, unfused, to name
// the instruction inside it.
type checker struct {
	ctx    context.Context
	out    io.Writer
	rt     *vkxla.Runtime
	limits cpuref.Limits
	values map[*hlo.Instruction]*hlo.Literal // cpuref's value of every instruction walked so far
	// onDevice runs a one-kernel module (runOnDevice; tests wrap it to break a kernel).
	onDevice func(k *checker, km *hlo.Module, args []*hlo.Literal) ([]*hlo.Literal, error)
}

func newChecker(ctx context.Context, out io.Writer, rt *vkxla.Runtime, limits cpuref.Limits) *checker {
	return &checker{ctx: ctx, out: out, rt: rt, limits: limits, values: map[*hlo.Instruction]*hlo.Literal{}, onDevice: runOnDevice}
}

// runOnDevice compiles the module afresh and runs it once.
func runOnDevice(k *checker, km *hlo.Module, args []*hlo.Literal) (_ []*hlo.Literal, err error) {
	exe, err := k.rt.Compile(k.ctx, km, vkxla.WithoutCache())
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, exe.Close()) }()
	return exe.Run(k.ctx, args...)
}

// errFoundMismatch marks a check that named the kernel that differs.
var errFoundMismatch = errors.New("a kernel differs from cpuref")

// kernels walks the optimised entry computation in order.
func (k *checker) kernels(opt *hlo.Module, inputs []*hlo.Literal) error {
	fmt.Fprintf(k.out, "\ncheck: %d instructions of the optimised module, each alone on cpuref's inputs\n", len(opt.Entry.Instructions))
	bad, err := k.walk(opt.Entry, inputs, true)
	if err != nil || bad == nil {
		if err == nil {
			fmt.Fprintln(k.out, "check: every kernel agrees with cpuref on cpuref's inputs")
		}
		return err
	}
	if bad.Op != hlo.OpFusion {
		return fmt.Errorf("%w: %s", errFoundMismatch, bad.Name)
	}
	fmt.Fprintf(k.out, "check: running fusion %s unfused, instruction by instruction\n", bad.Name)
	inner, err := k.walk(bad.Called[0], k.argsOf(bad), false)
	if err != nil {
		return err
	}
	if inner == nil {
		fmt.Fprintf(k.out, "check: every instruction of %s agrees alone: the difference comes from fusing them (evaluation order or contraction)\n", bad.Name)
		return fmt.Errorf("%w: %s (only when fused)", errFoundMismatch, bad.Name)
	}
	return fmt.Errorf("%w: %s, inside fusion %s", errFoundMismatch, inner.Name, bad.Name)
}

func (k *checker) argsOf(in *hlo.Instruction) []*hlo.Literal {
	args := make([]*hlo.Literal, len(in.Operands))
	for i, op := range in.Operands {
		args[i] = k.values[op]
	}
	return args
}

// walk evaluates c's instructions one at a time on cpuref and runs each kernel
// on the GPU; it returns the first instruction that differs (nil: none).
func (k *checker) walk(c *hlo.Computation, params []*hlo.Literal, entry bool) (*hlo.Instruction, error) {
	for _, in := range c.Instructions {
		if in.Op == hlo.OpParameter {
			k.values[in] = params[in.Attrs.ParameterNumber]
			continue
		}
		km, err := kernelModule(in)
		if err != nil {
			return nil, err
		}
		args := k.argsOf(in)
		want, err := k.limits.EvalContext(k.ctx, km, args...)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", in.Name, err)
		}
		k.values[in] = want
		if !runsOnDevice(in) {
			continue
		}
		differs, err := k.compare(in, km, args, want)
		if err != nil || differs {
			return in, err
		}
	}
	return nil, nil
}

// runsOnDevice: parameters, constants and tuple plumbing are no kernels.
func runsOnDevice(in *hlo.Instruction) bool {
	switch in.Op {
	case hlo.OpConstant, hlo.OpTuple, hlo.OpGetTupleElement:
		return false
	}
	return true
}

// compare runs the one-kernel module on the GPU and reports whether any output
// leaf is outside the kernel's tolerance, printing the first difference.
func (k *checker) compare(in *hlo.Instruction, km *hlo.Module, args []*hlo.Literal, want *hlo.Literal) (bool, error) {
	got, err := k.onDevice(k, km, args)
	if err != nil {
		return false, fmt.Errorf("check %s: %w", in.Name, err)
	}
	for i, w := range want.Leaves() {
		spec := vkxla.ProgramTolerance(km, w.DType())
		err := hlo.LiteralsClose(got[i], w, spec.Abs, spec.Rel)
		if spec.Exact() {
			err = hlo.LiteralsEqual(got[i], w)
		}
		if err != nil {
			fmt.Fprintf(k.out, "check: %s = %s differs from cpuref (output %d, tolerance |d| <= %.2g + %.2g·|cpuref|): %v\n  gpu:    %s\n  cpuref: %s\n",
				in.Name, in.Op, i, spec.Abs, spec.Rel, err, clip(hlo.FormatLiteralValues(got[i])), clip(hlo.FormatLiteralValues(w)))
			return true, nil
		}
	}
	return false, nil
}

// kernelModule is the module of one instruction: a parameter per operand
// position, the instruction over them (hlo.Alone), and the computations it calls.
func kernelModule(in *hlo.Instruction) (*hlo.Module, error) {
	entry := hlo.Alone(in)
	entry.Name = in.Name + ".alone"
	m := &hlo.Module{Name: "check_" + in.Name, Computations: append(calledClosure(in.Called, map[*hlo.Computation]bool{}), entry), Entry: entry}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("check %s: its one-instruction module: %w", in.Name, err)
	}
	return m, nil
}

// calledClosure lists the computations cs call, transitively, callees first.
func calledClosure(cs []*hlo.Computation, seen map[*hlo.Computation]bool) []*hlo.Computation {
	var list []*hlo.Computation
	for _, c := range cs {
		if seen[c] {
			continue
		}
		seen[c] = true
		for _, in := range c.Instructions {
			list = append(list, calledClosure(in.Called, seen)...)
		}
		list = append(list, c)
	}
	return list
}
