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
// evaluator state, and modules and input literals are only read. EvalReplicas
// runs one evaluator per device of a multi-device program, concurrently, meeting
// at its collectives (docs/replicas.md).
package cpuref

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/internal/collective"
)

// ErrInvalidInput is wrapped by the errors about what the caller passed: a nil
// module, a module the verifier rejects (the error wraps hlo.ErrVerify too), a nil
// context, or inputs that are nil or differ from the entry parameters in number or
// shape.
var ErrInvalidInput = errors.New("invalid input")

// ErrTooLarge is wrapped by the errors of an evaluation that would go over its memory
// limits (Limits): the value is not allocated.
var ErrTooLarge = errors.New("over the memory limit")

// The default memory limits of an evaluation (docs/limits.md).
const (
	// DefaultMaxValueBytes bounds one value (one instruction's result, one tuple
	// element): 2 GiB.
	DefaultMaxValueBytes = int64(2) << 30
	// DefaultMaxTotalBytes bounds the values held at once: 8 GiB.
	DefaultMaxTotalBytes = int64(8) << 30
)

// Limits bounds the memory of an evaluation. Each instruction's result is checked
// against them before its kernel allocates it; a zero field means its default. The
// bytes counted are those of the values cpuref computes, at their dense size, while
// they are held (a value until its last user has run; tuples and their elements
// until the computation returns), plus the scratch space of
// the kernels that need much (scratchBytes) while they run; the caller's inputs and
// the values that only share others' memory (parameter, tuple, get-tuple-element)
// are not counted.
//
// Progress, when set, is called after each instruction of the evaluated (entry)
// computation with the instructions done, their total and the time since the
// evaluation began, from the evaluating goroutine: long checks show it on a
// terminal (cmd/vkxla). It is no limit, but travels with them as the evaluation's
// options.
type Limits struct {
	MaxValueBytes int64 // 0: DefaultMaxValueBytes
	MaxTotalBytes int64 // 0: DefaultMaxTotalBytes
	Progress      func(done, total int, elapsed time.Duration)
}

// Eval runs the module's entry computation on the inputs, one per entry parameter,
// and returns the root's value: an array literal, or a tuple literal for a tuple
// root (as XLA returns it). It is EvalContext with context.Background().
func Eval(m *hlo.Module, inputs ...*hlo.Literal) (*hlo.Literal, error) {
	return EvalContext(context.Background(), m, inputs...)
}

// EvalContext is Eval within the default Limits, stopping when ctx is done.
func EvalContext(ctx context.Context, m *hlo.Module, inputs ...*hlo.Literal) (*hlo.Literal, error) {
	return Limits{}.EvalContext(ctx, m, inputs...)
}

// EvalContext runs the module as Eval does, within these limits. It verifies the
// module first (an invalid one is ErrInvalidInput) and checks the inputs against the
// entry parameters. Cancelling ctx stops the evaluation promptly: it is checked
// before every instruction, on every while iteration, and inside the kernels whose
// work grows faster than their result (contractions, and every kernel that calls a
// scalar computation); the error then wraps ctx.Err(). The result shares no memory
// with the inputs or the module's constants.
func (l Limits) EvalContext(ctx context.Context, m *hlo.Module, inputs ...*hlo.Literal) (*hlo.Literal, error) {
	if ctx == nil {
		return nil, fmt.Errorf("cpuref: %w: nil context", ErrInvalidInput)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, fmt.Errorf("cpuref: %w: %w", ErrInvalidInput, err)
	}
	return l.evalComputation(ctx, m.Entry, inputs)
}

// EvalComputation runs one computation on its arguments, as Eval does the entry,
// within the default Limits. It does not verify the computation (hlo.Verify takes a
// module), but malformed IR is an error, never a panic.
func EvalComputation(c *hlo.Computation, args ...*hlo.Literal) (*hlo.Literal, error) {
	if c == nil {
		return nil, fmt.Errorf("cpuref: %w: nil computation", ErrInvalidInput)
	}
	return Limits{}.evalComputation(context.Background(), c, args)
}

// EvalWithRngState runs the module as EvalContext does, its RNG state (read and
// advanced by rng and rng-get-and-update-state, in evaluation order) starting at
// state, a 128-bit counter {low, high}. It returns the root's value and the state
// after the run. EvalContext starts the state at zero.
func (l Limits) EvalWithRngState(ctx context.Context, m *hlo.Module, state [2]uint64, inputs ...*hlo.Literal) (*hlo.Literal, [2]uint64, error) {
	if ctx == nil {
		return nil, state, fmt.Errorf("cpuref: %w: nil context", ErrInvalidInput)
	}
	if err := hlo.Verify(m); err != nil {
		return nil, state, fmt.Errorf("cpuref: %w: %w", ErrInvalidInput, err)
	}
	ev := newEvaluator(ctx, l)
	ev.rng = state
	out, err := ev.run(m.Entry, inputs)
	return out, ev.rng, err
}

func (l Limits) evalComputation(ctx context.Context, c *hlo.Computation, args []*hlo.Literal) (*hlo.Literal, error) {
	return newEvaluator(ctx, l).run(c, args)
}

// run evaluates c on args and returns a copy of the root's value.
func (ev *evaluator) run(c *hlo.Computation, args []*hlo.Literal) (*hlo.Literal, error) {
	if err := ev.ctx.Err(); err != nil {
		return nil, fmt.Errorf("cpuref: %w", err)
	}
	defer context.AfterFunc(ev.ctx, func() { ev.stop.Store(true) })()
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
// of the computation being run, the compiled scalar computations, the bytes held
// against the limits, and the cancellation flag that kernels poll.
type evaluator struct {
	args    []*hlo.Literal
	scalars map[*hlo.Computation]*scalarFn
	ctx     context.Context
	limits  Limits
	held    int64             // bytes of the values held, as Limits counts them
	depth   int               // computations being evaluated (1: the entry)
	start   time.Time         // when the evaluation began (Limits.Progress)
	stop    atomic.Bool       // set when ctx is done
	rng     [2]uint64         // the RNG state {low, high} (EvalWithRngState)
	dev     collective.Device // the device evaluated (EvalReplicas), by default the only one
}

func newEvaluator(ctx context.Context, l Limits) *evaluator {
	ev := &evaluator{scalars: map[*hlo.Computation]*scalarFn{}, ctx: ctx, limits: l.withDefaults(), start: time.Now()}
	ev.dev = collective.OneDevice(ev.reducer)
	return ev
}

// cancelled returns the context's error once the evaluation is to stop.
func (ev *evaluator) cancelled() error {
	if !ev.stop.Load() {
		return nil
	}
	if err := ev.ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// evalComputation evaluates c's instructions in order and returns the root value.
// The values it holds count against the limits until it returns.
func (ev *evaluator) evalComputation(c *hlo.Computation, args []*hlo.Literal) (*hlo.Literal, error) {
	if err := checkArgs(c, args); err != nil {
		return nil, err
	}
	if c.Root == nil {
		return nil, fmt.Errorf("cpuref: computation %q has no root", c.Name)
	}
	saved := ev.args
	ev.args = args
	ev.depth++
	defer func() { ev.args = saved; ev.depth-- }()
	progress := ev.limits.Progress
	if ev.depth > 1 {
		progress = nil
	}

	var held int64
	defer func() { ev.held -= held }()
	values := make(map[*hlo.Instruction]*hlo.Literal, len(c.Instructions))
	sizes := make(map[*hlo.Instruction]int64, len(c.Instructions))
	release := releasePoints(c)
	for i, in := range c.Instructions {
		if in == nil {
			return nil, fmt.Errorf("cpuref: computation %q: instruction %d is nil", c.Name, i)
		}
		if err := ev.cancelled(); err != nil {
			return nil, fmt.Errorf("cpuref: computation %q: at %%%s: %w", c.Name, in.Name, err)
		}
		operands, err := operandValues(in, values)
		if err != nil {
			return nil, fmt.Errorf("cpuref: computation %q: %w", c.Name, err)
		}
		size, err := ev.reserve(in, operands)
		if err != nil {
			return nil, fmt.Errorf("cpuref: computation %q: %%%s = %v: %w", c.Name, in.Name, in.Op, err)
		}
		held += size
		v, err := ev.evalInstruction(in, operands)
		if err != nil {
			return nil, fmt.Errorf("cpuref: computation %q: %%%s = %v: %w", c.Name, in.Name, in.Op, err)
		}
		values[in], sizes[in] = v, size
		for _, done := range release[i] {
			delete(values, done)
			ev.held -= sizes[done]
			held -= sizes[done]
		}
		if progress != nil {
			progress(i+1, len(c.Instructions), time.Since(ev.start))
		}
	}
	root, ok := values[c.Root]
	if !ok {
		return nil, fmt.Errorf("cpuref: computation %q: root %%%s is not among its instructions", c.Name, c.Root.Name)
	}
	return root, nil
}

// releasePoints lists, per instruction index, the values no instruction after it
// reads: they are dropped once it has run, so the values held (and the memory) are
// those still needed, not every value of the computation. Values that may live on
// inside another (a tuple's elements, a get-tuple-element's tuple), parameters and
// the root are kept to the end.
func releasePoints(c *hlo.Computation) map[int][]*hlo.Instruction {
	last := map[*hlo.Instruction]int{}
	keep := map[*hlo.Instruction]bool{c.Root: true}
	for i, in := range c.Instructions {
		if in == nil {
			continue
		}
		switch in.Op {
		case hlo.OpParameter, hlo.OpTuple, hlo.OpGetTupleElement:
			keep[in] = true
		}
		for _, o := range in.Operands {
			if o == nil {
				continue // operandValues reports it
			}
			last[o] = i
			if in.Op == hlo.OpTuple || in.Op == hlo.OpGetTupleElement {
				keep[o] = true
			}
		}
	}
	points := map[int][]*hlo.Instruction{}
	for o, i := range last {
		if !keep[o] && o.Shape.IsArray() {
			points[i] = append(points[i], o)
		}
	}
	return points
}

// operandValues returns the values of in's operands, which must come before it.
func operandValues(in *hlo.Instruction, values map[*hlo.Instruction]*hlo.Literal) ([]*hlo.Literal, error) {
	operands := make([]*hlo.Literal, len(in.Operands))
	for i, o := range in.Operands {
		if o == nil {
			return nil, fmt.Errorf("%%%s: operand %d is nil", in.Name, i)
		}
		v, ok := values[o]
		if !ok {
			return nil, fmt.Errorf("%%%s uses %%%s before it is defined", in.Name, o.Name)
		}
		operands[i] = v
	}
	return operands, nil
}

// reserve checks in's result, and its kernel's scratch space, against the limits
// before it is computed and counts the result as held; it returns the bytes
// counted. Results that share their operands' memory count nothing.
func (ev *evaluator) reserve(in *hlo.Instruction, operands []*hlo.Literal) (int64, error) {
	switch in.Op {
	case hlo.OpParameter, hlo.OpTuple, hlo.OpGetTupleElement:
		return 0, nil
	}
	size, err := ev.limits.check(ev.held, in.Shape)
	if err != nil {
		return 0, err
	}
	if scratch := scratchBytes(in, operands); scratch > ev.limits.MaxTotalBytes-ev.held-size {
		return 0, fmt.Errorf("%w: the kernel's %d bytes of scratch space and its %d-byte result with the %d bytes held exceed the total of %d bytes (cpuref.Limits.MaxTotalBytes)",
			ErrTooLarge, scratch, size, ev.held, ev.limits.MaxTotalBytes)
	}
	ev.held += size
	return size, nil
}

// scratchBytes is the transient memory of in's kernel beyond its result: the kernels
// that run a scalar computation per element keep one uint64 per result element, and
// contractions decode the lhs into their accumulation type and pack the rhs into
// panels (contract.go).
func scratchBytes(in *hlo.Instruction, operands []*hlo.Literal) int64 {
	switch in.Op {
	case hlo.OpReduce, hlo.OpReduceWindow, hlo.OpSelectAndScatter, hlo.OpScatter, hlo.OpSort:
		var n int64
		for _, leaf := range in.Shape.Leaves() {
			n += leaf.NumElements()
		}
		return 8 * n
	case hlo.OpFft: // the complex128 working copy, and IRFFT's or RFFT's second one
		var n int64
		for _, o := range operands {
			n += int64(o.NumElements())
		}
		return 16 * (n + in.Shape.NumElements())
	case hlo.OpDot, hlo.OpConvolution:
		width := int64(8)
		if len(operands) == 2 && in.Shape.DType.IsComplex() { // both decoded to complex128
			return 16 * int64(operands[0].NumElements()+operands[1].NumElements())
		}
		if dt := in.Shape.DType; dt.IsFloat() && dt != hlo.F64 {
			width = 4
		}
		if len(operands) != 2 {
			return 0
		}
		return width * (int64(operands[0].NumElements()) + packedRhsLen(in, operands[1].Shape()))
	}
	return 0
}

// CheckShapes reports whether values of these shapes, held together, fit in the
// limits: an error wrapping ErrTooLarge if not. Callers that make inputs (the CLI
// draws random ones) use it before allocating them.
func (l Limits) CheckShapes(shapes ...hlo.Shape) error {
	_, err := l.withDefaults().check(0, shapes...)
	return err
}

func (l Limits) withDefaults() Limits {
	if l.MaxValueBytes == 0 {
		l.MaxValueBytes = DefaultMaxValueBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return l
}

// check returns the bytes of the shapes, or an error if an array among them is over
// MaxValueBytes or they and the bytes already held are over MaxTotalBytes.
func (l Limits) check(held int64, shapes ...hlo.Shape) (int64, error) {
	var total int64
	for _, s := range shapes {
		size, err := s.ByteSizeChecked()
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
		for _, leaf := range s.Leaves() {
			if b := leaf.ByteSize(); b > l.MaxValueBytes {
				return 0, fmt.Errorf("%w: %v is %d bytes, over the limit of %d bytes per value (cpuref.Limits.MaxValueBytes)",
					ErrTooLarge, leaf, b, l.MaxValueBytes)
			}
		}
		if total += size; total > l.MaxTotalBytes-held {
			return 0, fmt.Errorf("%w: %d bytes more with the %d bytes held exceed the total of %d bytes (cpuref.Limits.MaxTotalBytes)",
				ErrTooLarge, total, held, l.MaxTotalBytes)
		}
	}
	return total, nil
}

// checkArgs matches arguments with the computation's parameters by count and shape.
func checkArgs(c *hlo.Computation, args []*hlo.Literal) error {
	if len(args) != len(c.Params) {
		return fmt.Errorf("cpuref: %w: computation %q takes %d arguments, got %d", ErrInvalidInput, c.Name, len(c.Params), len(args))
	}
	for i, p := range c.Params {
		if p == nil {
			return fmt.Errorf("cpuref: %w: computation %q: parameter %d is nil", ErrInvalidInput, c.Name, i)
		}
		if err := checkLiteral(args[i]); err != nil {
			return fmt.Errorf("cpuref: %w: computation %q: argument %d (%%%s) %v", ErrInvalidInput, c.Name, i, p.Name, err)
		}
		if !args[i].Shape().Equal(p.Shape) {
			return fmt.Errorf("cpuref: %w: computation %q: parameter %d (%%%s): expected %v, got %v",
				ErrInvalidInput, c.Name, i, p.Name, p.Shape, args[i].Shape())
		}
	}
	return nil
}

// checkLiteral rejects a nil literal or a tuple literal with a nil element.
func checkLiteral(l *hlo.Literal) error {
	if l == nil {
		return errors.New("is nil")
	}
	for i, e := range l.Elems() {
		if err := checkLiteral(e); err != nil {
			return fmt.Errorf("element %d %w", i, err)
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
	if stop := ev.cancelled(); stop != nil {
		return nil, stop // the kernel may have stopped early: its result is not whole
	}
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
