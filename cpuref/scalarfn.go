package cpuref

import (
	"fmt"
	"slices"

	"github.com/vkxla/vkxla/hlo"
)

// scalarFn is a called computation whose parameters are scalars and whose result is
// a scalar or a tuple of scalars: reduce's and scatter's to_apply, sort's
// comparator, select-and-scatter's select and scatter. Kernels call it once per
// element pair, on element bits, so it must be cheap: a computation made only of
// scalar elementwise ops is compiled into a register program; any other runs
// through the general evaluator on scalar literals (slower, same result).
type scalarFn struct {
	comp    *hlo.Computation
	params  []hlo.Shape
	results int
	prog    *scalarProgram
	ev      *evaluator
}

// scalarFunc returns c as a scalarFn, compiling it on first use.
func (ev *evaluator) scalarFunc(c *hlo.Computation) (*scalarFn, error) {
	if f, ok := ev.scalars[c]; ok {
		return f, nil
	}
	f := &scalarFn{comp: c, params: c.ParamShapes(), ev: ev}
	for i, p := range f.params {
		if !p.IsScalar() {
			return nil, fmt.Errorf("computation %q parameter %d is %v, not a scalar", c.Name, i, p)
		}
	}
	if c.Root == nil {
		return nil, fmt.Errorf("computation %q has no root", c.Name)
	}
	results, err := scalarResultCount(c.Root.Shape)
	if err != nil {
		return nil, fmt.Errorf("computation %q: %w", c.Name, err)
	}
	f.results = results
	if f.prog, err = compileScalar(c); err != nil {
		return nil, fmt.Errorf("computation %q: %w", c.Name, err)
	}
	ev.scalars[c] = f
	return f, nil
}

func scalarResultCount(s hlo.Shape) (int, error) {
	if s.IsScalar() {
		return 1, nil
	}
	if !s.IsTuple() {
		return 0, fmt.Errorf("returns %v, not a scalar or a tuple of scalars", s)
	}
	for _, e := range s.Elems {
		if !e.IsScalar() {
			return 0, fmt.Errorf("returns %v, not a scalar or a tuple of scalars", s)
		}
	}
	return len(s.Elems), nil
}

// expect checks the parameter and result counts a kernel relies on.
func (f *scalarFn) expect(params, results int) error {
	if len(f.params) != params || f.results != results {
		return fmt.Errorf("computation %q takes %d parameters and returns %d values; expected %d and %d",
			f.comp.Name, len(f.params), f.results, params, results)
	}
	return nil
}

// call evaluates the computation on argument bits and writes the result bits. It
// fails once the evaluation is cancelled, which stops every kernel that calls a
// scalar computation per element (reduce, reduce-window, select-and-scatter,
// scatter, sort) within one call.
func (f *scalarFn) call(args, results []uint64) error {
	if err := f.ev.cancelled(); err != nil {
		return err
	}
	if f.prog != nil {
		f.prog.run(args, results)
		return nil
	}
	lits := make([]*hlo.Literal, len(args))
	for i, a := range args {
		lits[i] = hlo.NewLiteral(f.params[i])
		lits[i].SetBits(0, a)
	}
	out, err := f.ev.callComputation(f.comp, lits...)
	if err != nil {
		return err
	}
	if !out.Shape().IsTuple() {
		results[0] = out.Bits(0)
		return nil
	}
	for i, e := range out.Elems() {
		results[i] = e.Bits(0)
	}
	return nil
}

// scalarProgram is a compiled scalar computation: one register per instruction,
// parameters in registers 0..n-1, constants preloaded, one step per instruction.
type scalarProgram struct {
	regs  []uint64
	steps []func(r []uint64)
	outs  []int
}

// clone is a copy with registers of its own (constants included), for another
// goroutine: the steps hold no state, they read and write the registers given.
func (p *scalarProgram) clone() *scalarProgram {
	return &scalarProgram{regs: slices.Clone(p.regs), steps: p.steps, outs: p.outs}
}

func (p *scalarProgram) run(args, results []uint64) {
	copy(p.regs, args)
	for _, s := range p.steps {
		s(p.regs)
	}
	for i, o := range p.outs {
		results[i] = p.regs[o]
	}
}

// compileScalar compiles c, or returns nil (no error) when c uses something the
// register program does not cover, so the general evaluator runs it instead.
func compileScalar(c *hlo.Computation) (*scalarProgram, error) {
	p := &scalarProgram{regs: make([]uint64, len(c.Params))}
	reg := map[*hlo.Instruction]int{}
	for _, in := range c.Instructions {
		if in == c.Root && in.Op == hlo.OpTuple {
			for _, o := range in.Operands {
				p.outs = append(p.outs, reg[o])
			}
			continue
		}
		if !in.Shape.IsScalar() {
			return nil, nil
		}
		r, ok, err := p.compileStep(in, reg)
		if !ok || err != nil {
			return nil, err
		}
		reg[in] = r
	}
	if c.Root.Op != hlo.OpTuple {
		r, ok := reg[c.Root]
		if !ok {
			return nil, nil
		}
		p.outs = []int{r}
	}
	return p, nil
}

// compileStep adds the step for one scalar instruction and returns its register.
func (p *scalarProgram) compileStep(in *hlo.Instruction, reg map[*hlo.Instruction]int) (int, bool, error) {
	if in.Op == hlo.OpParameter {
		n := int(in.Attrs.ParameterNumber)
		return n, n >= 0 && n < len(p.regs), nil
	}
	ops := make([]int, len(in.Operands))
	for i, o := range in.Operands {
		r, ok := reg[o]
		if !ok || !o.Shape.IsScalar() {
			return 0, false, nil
		}
		ops[i] = r
	}
	if in.Op == hlo.OpConstant {
		if in.Attrs.Literal == nil || !in.Attrs.Literal.Shape().Equal(in.Shape) {
			return 0, false, nil
		}
		p.regs = append(p.regs, in.Attrs.Literal.Bits(0))
		return len(p.regs) - 1, true, nil
	}
	step, ok, err := scalarStep(in, ops)
	if !ok || err != nil {
		return 0, ok, err
	}
	out := len(p.regs)
	p.regs = append(p.regs, 0)
	p.steps = append(p.steps, func(r []uint64) { r[out] = step(r) })
	return out, true, nil
}

// scalarStep builds the element function of one elementwise instruction over the
// registers holding its operands. ok is false for ops the program does not cover.
func scalarStep(in *hlo.Instruction, ops []int) (func(r []uint64) uint64, bool, error) {
	dt := func(i int) hlo.DType { return in.Operands[i].Shape.DType }
	switch in.Info().Kind {
	case hlo.KindUnary:
		f, err := unaryFor(in.Op, dt(0))
		a := ops[0]
		return func(r []uint64) uint64 { return f(r[a]) }, true, err
	case hlo.KindBinary:
		f, err := binaryFor(in.Op, dt(0))
		a, b := ops[0], ops[1]
		return func(r []uint64) uint64 { return f(r[a], r[b]) }, true, err
	}
	switch in.Op {
	case hlo.OpCompare:
		f, err := compareFor(in.Attrs.Direction, in.Attrs.CompareType, dt(0))
		a, b := ops[0], ops[1]
		return func(r []uint64) uint64 { return f(r[a], r[b]) }, true, err
	case hlo.OpConvert:
		f, err := convertFor(dt(0), in.Shape.DType)
		a := ops[0]
		return func(r []uint64) uint64 { return f(r[a]) }, true, err
	case hlo.OpBitcastConvert: // scalar to scalar: same width, same bits
		a, toPred := ops[0], in.Shape.DType == hlo.Pred
		if in.Shape.DType.Bits() != dt(0).Bits() {
			return nil, false, nil
		}
		return func(r []uint64) uint64 {
			if toPred {
				return boolBits(r[a] != 0)
			}
			return r[a]
		}, true, nil
	case hlo.OpSelect:
		p, a, b := ops[0], ops[1], ops[2]
		return func(r []uint64) uint64 {
			if r[p] != 0 {
				return r[a]
			}
			return r[b]
		}, true, nil
	case hlo.OpClamp:
		f, err := clampFunc(dt(1))
		lo, x, hi := ops[0], ops[1], ops[2]
		return func(r []uint64) uint64 { return f(r[lo], r[x], r[hi]) }, true, err
	}
	return nil, false, nil
}

// clampFunc is clamp(lo, x, hi) = min(max(x, lo), hi) with the element type's
// maximum and minimum, so a NaN in any operand gives NaN.
func clampFunc(dt hlo.DType) (func(lo, x, hi uint64) uint64, error) {
	maxF, err := binaryFor(hlo.OpMaximum, dt)
	if err != nil {
		return nil, err
	}
	minF, err := binaryFor(hlo.OpMinimum, dt)
	if err != nil {
		return nil, err
	}
	return func(lo, x, hi uint64) uint64 { return minF(maxF(x, lo), hi) }, nil
}
