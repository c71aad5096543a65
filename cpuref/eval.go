// Package cpuref is vkxla's CPU reference interpreter: the executable specification
// of every op's numerics. Every GPU result is tested against it.
//
// Evaluation is straightforward: each computation is run instruction by instruction
// in its (topological) order, keeping each value in a map, with one kernel per
// opcode (kernels.go lists them). Kernels favour clarity over speed but avoid
// quadratic work; the scalar computations that reduce, scatter, sort and friends
// call once per element are compiled into a small register program (scalarfn.go).
// docs/cpuref.md states the numerics of every op.
//
// Eval and EvalComputation are safe for concurrent use: each call has its own
// evaluator state, and modules and input literals are only read.
package cpuref

import (
	"errors"
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// Eval runs the module's entry computation on the inputs, one per entry parameter,
// and returns the root's value: an array literal, or a tuple literal for a tuple
// root (as XLA returns it). Inputs are checked against the parameter shapes. The
// result shares no memory with the inputs or the module's constants.
func Eval(m *hlo.Module, inputs ...*hlo.Literal) (*hlo.Literal, error) {
	if m == nil || m.Entry == nil {
		return nil, errors.New("cpuref: module has no entry computation")
	}
	return EvalComputation(m.Entry, inputs...)
}

// EvalComputation runs one computation on its arguments, as Eval does the entry.
func EvalComputation(c *hlo.Computation, args ...*hlo.Literal) (*hlo.Literal, error) {
	if c == nil {
		return nil, errors.New("cpuref: nil computation")
	}
	ev := newEvaluator()
	out, err := ev.evalComputation(c, args)
	if err != nil {
		return nil, err
	}
	return out.Clone(), nil
}

// kernel evaluates one instruction from its operands' values. Kernels never modify
// their operands: values are shared freely between instructions.
type kernel func(ev *evaluator, in *hlo.Instruction, operands []*hlo.Literal) (*hlo.Literal, error)

// evaluator holds what lives across computations of one evaluation: the arguments
// of the computation being run and the compiled scalar computations.
type evaluator struct {
	args    []*hlo.Literal
	scalars map[*hlo.Computation]*scalarFn
}

func newEvaluator() *evaluator {
	return &evaluator{scalars: map[*hlo.Computation]*scalarFn{}}
}

// evalComputation evaluates c's instructions in order and returns the root value.
func (ev *evaluator) evalComputation(c *hlo.Computation, args []*hlo.Literal) (*hlo.Literal, error) {
	if err := checkArgs(c, args); err != nil {
		return nil, err
	}
	if c.Root == nil {
		return nil, fmt.Errorf("cpuref: computation %q has no root", c.Name)
	}
	saved := ev.args
	ev.args = args
	defer func() { ev.args = saved }()

	values := make(map[*hlo.Instruction]*hlo.Literal, len(c.Instructions))
	for _, in := range c.Instructions {
		operands := make([]*hlo.Literal, len(in.Operands))
		for i, o := range in.Operands {
			v, ok := values[o]
			if !ok {
				return nil, fmt.Errorf("cpuref: computation %q: %%%s uses %%%s before it is defined",
					c.Name, in.Name, o.Name)
			}
			operands[i] = v
		}
		v, err := ev.evalInstruction(in, operands)
		if err != nil {
			return nil, fmt.Errorf("cpuref: computation %q: %%%s = %v: %w", c.Name, in.Name, in.Op, err)
		}
		values[in] = v
	}
	root, ok := values[c.Root]
	if !ok {
		return nil, fmt.Errorf("cpuref: computation %q: root %%%s is not among its instructions", c.Name, c.Root.Name)
	}
	return root, nil
}

// checkArgs matches arguments with the computation's parameters by count and shape.
func checkArgs(c *hlo.Computation, args []*hlo.Literal) error {
	if len(args) != len(c.Params) {
		return fmt.Errorf("cpuref: computation %q takes %d arguments, got %d", c.Name, len(c.Params), len(args))
	}
	for i, p := range c.Params {
		if args[i] == nil {
			return fmt.Errorf("cpuref: computation %q: argument %d (%%%s) is nil", c.Name, i, p.Name)
		}
		if !args[i].Shape().Equal(p.Shape) {
			return fmt.Errorf("cpuref: computation %q: parameter %d (%%%s): expected %v, got %v",
				c.Name, i, p.Name, p.Shape, args[i].Shape())
		}
	}
	return nil
}

// evalInstruction runs the opcode's kernel and checks the result against the
// declared shape. A kernel panic (malformed IR that slipped past its checks) is
// returned as an error rather than crashing the caller.
func (ev *evaluator) evalInstruction(in *hlo.Instruction, operands []*hlo.Literal) (out *hlo.Literal, err error) {
	k := kernels[in.Op]
	if k == nil {
		return nil, fmt.Errorf("no kernel for opcode %v", in.Op)
	}
	if arity := in.Info().Arity; arity != hlo.Variadic && arity != len(operands) {
		return nil, fmt.Errorf("takes %d operands, got %d", arity, len(operands))
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("internal error (malformed instruction?): %v", r)
		}
	}()
	out, err = k(ev, in, operands)
	if err != nil {
		return nil, err
	}
	if !out.Shape().Equal(in.Shape) {
		return nil, fmt.Errorf("result shape %v differs from the declared shape %v", out.Shape(), in.Shape)
	}
	return out, nil
}

// callComputation evaluates a called computation on full literals.
func (ev *evaluator) callComputation(c *hlo.Computation, args ...*hlo.Literal) (*hlo.Literal, error) {
	if c == nil {
		return nil, errors.New("missing called computation")
	}
	return ev.evalComputation(c, args)
}

// called returns the i-th called computation or an error naming its role.
func called(in *hlo.Instruction, i int) (*hlo.Computation, error) {
	if i >= len(in.Called) || in.Called[i] == nil {
		role := "computation"
		if roles := in.Info().Called; i < len(roles) {
			role = roles[i]
		}
		return nil, fmt.Errorf("missing %s", role)
	}
	return in.Called[i], nil
}
