package hlo

import (
	"errors"
	"fmt"
)

// Verify checks every invariant a module must hold, the ones the op table and the
// shape rules imply and the structural ones passes rely on:
//
//   - the module has computations, the entry is one of them and the last;
//     computation names are non-empty and unique;
//   - the call graph has no cycle (no recursion) and lists callees before callers;
//     every called computation belongs to the module;
//   - each computation has a root among its instructions; every instruction is in
//     exactly one computation, has a non-empty module-wide unique name, and comes
//     after its operands, which belong to the same computation;
//   - Params lists exactly the computation's parameter instructions, numbered
//     0…n-1 in order;
//   - a fusion's called computation is flat, as XLA requires: it contains no while,
//     conditional, call or fusion, and its parameters are numbered 0…n-1 without
//     gaps or repeats (checked before the computations themselves, so that the
//     error names the fusion);
//   - every instruction passes CheckShape: operand count (the op table's arity),
//     called-computation count and signatures, operand types and shapes, attributes
//     in range (permutations, slice bounds, window fields ≥ 1, …), and a declared
//     shape equal to the inferred one.
//
// Shapes are held to the size limits: no array over MaxShapeElements elements, no
// tuple whose byte size overflows int64 (ErrShapeTooLarge, wrapped).
//
// Errors wrap ErrVerify and name the computation, the instruction and what is wrong.
// Verify never panics on a malformed module (nil pointers included), since the parser
// calls it on arbitrary input.
func Verify(m *Module) error {
	if m == nil {
		return fmt.Errorf("%w: nil module", ErrVerify)
	}
	if err := verifyModuleStructure(m); err != nil {
		return fmt.Errorf("%w module %q: %w", ErrVerify, m.Name, err)
	}
	if err := verifyFusions(m); err != nil {
		return fmt.Errorf("%w module %q: %w", ErrVerify, m.Name, err)
	}
	owners := map[*Instruction]*Computation{}
	names := map[string]*Computation{}
	for _, c := range m.Computations {
		if err := verifyComputation(c, owners, names); err != nil {
			return fmt.Errorf("%w module %q: computation %q: %w", ErrVerify, m.Name, c.Name, err)
		}
	}
	if _, err := ResolveAliases(m); err != nil {
		return fmt.Errorf("%w module %q: %w", ErrVerify, m.Name, err)
	}
	return nil
}

// ErrVerify is wrapped by every error of Verify: the module breaks an invariant. Its
// text, "verify", begins the messages.
var ErrVerify = errors.New("verify")

// verifyModuleStructure checks the computation list, the entry and the call graph.
func verifyModuleStructure(m *Module) error {
	n := len(m.Computations)
	if n == 0 || m.Entry == nil {
		return errors.New("has no entry computation")
	}
	if m.Computations[n-1] != m.Entry {
		return fmt.Errorf("entry computation %q is not the module's last computation", m.Entry.Name)
	}
	pos := make(map[*Computation]int, n)
	for i, c := range m.Computations {
		if c == nil {
			return fmt.Errorf("computation %d is nil", i)
		}
		if c.Name == "" {
			return fmt.Errorf("computation %d has no name", i)
		}
		if _, dup := pos[c]; dup {
			return fmt.Errorf("computation %q is listed twice", c.Name)
		}
		pos[c] = i
	}
	if err := uniqueComputationNames(m.Computations); err != nil {
		return err
	}
	return verifyCallGraph(m.Computations, pos)
}

func uniqueComputationNames(comps []*Computation) error {
	seen := map[string]bool{}
	for _, c := range comps {
		if seen[c.Name] {
			return fmt.Errorf("two computations are named %q", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// verifyCallGraph checks that called computations belong to the module, that no
// computation reaches itself, and that callees come before callers.
func verifyCallGraph(comps []*Computation, pos map[*Computation]int) error {
	for _, c := range comps {
		if _, err := calleesFirst(c); err != nil {
			return err
		}
	}
	for i, c := range comps {
		for _, in := range c.Instructions {
			if in == nil {
				continue // reported by verifyComputation
			}
			for _, callee := range in.Called {
				p, ok := pos[callee]
				switch {
				case !ok:
					return fmt.Errorf("instruction %s of computation %q calls a computation outside the module", in.Name, c.Name)
				case p >= i:
					return fmt.Errorf("computation %q is listed after its caller %q (callees must come first)", callee.Name, c.Name)
				}
			}
		}
	}
	return nil
}

// verifyComputation checks one computation; owners and names accumulate over the
// module to catch shared instructions and duplicate names.
func verifyComputation(c *Computation, owners map[*Instruction]*Computation, names map[string]*Computation) error {
	index := make(map[*Instruction]int, len(c.Instructions))
	for i, in := range c.Instructions {
		if err := verifyPlacement(c, i, in, owners, names, index); err != nil {
			return err
		}
	}
	if c.Root == nil {
		return errors.New("has no root")
	}
	if _, ok := index[c.Root]; !ok {
		return fmt.Errorf("root %s is not one of its instructions", c.Root.Name)
	}
	if err := verifyParams(c, index); err != nil {
		return err
	}
	for _, in := range c.Instructions {
		if err := verifyInstructionShape(in); err != nil {
			return fmt.Errorf("instruction %s: %w", in.Name, err)
		}
	}
	return nil
}

// verifyPlacement checks instruction i's name and ownership and that its operands
// are earlier instructions of the same computation; it records i in index.
func verifyPlacement(c *Computation, i int, in *Instruction, owners map[*Instruction]*Computation,
	names map[string]*Computation, index map[*Instruction]int) error {
	if in == nil {
		return fmt.Errorf("instruction %d is nil", i)
	}
	if in.Name == "" {
		return fmt.Errorf("instruction %d (%v) has no name", i, in.Op)
	}
	if other, dup := owners[in]; dup {
		return fmt.Errorf("instruction %s also belongs to computation %q", in.Name, other.Name)
	}
	if other, dup := names[in.Name]; dup {
		return fmt.Errorf("instruction name %s is used twice (also in computation %q)", in.Name, other.Name)
	}
	names[in.Name], owners[in] = c, c
	for j, op := range in.Operands {
		if err := verifyOperand(c, in, j, op, owners, index); err != nil {
			return err
		}
	}
	index[in] = i
	return nil
}

func verifyOperand(c *Computation, in *Instruction, j int, op *Instruction,
	owners map[*Instruction]*Computation, index map[*Instruction]int) error {
	if op == nil {
		return fmt.Errorf("instruction %s: operand %d is nil", in.Name, j)
	}
	if _, ok := index[op]; ok {
		return nil
	}
	if owner, ok := owners[op]; ok && owner != c {
		return fmt.Errorf("instruction %s: operand %d (%s) belongs to computation %q", in.Name, j, op.Name, owner.Name)
	}
	for _, later := range c.Instructions {
		if later == op {
			return fmt.Errorf("instruction %s: operand %d (%s) comes after its user (not in topological order)", in.Name, j, op.Name)
		}
	}
	return fmt.Errorf("instruction %s: operand %d (%s) is not an instruction of this computation", in.Name, j, op.Name)
}

// verifyParams checks that Params are the parameter instructions, numbered densely
// in order.
func verifyParams(c *Computation, index map[*Instruction]int) error {
	count := 0
	for _, in := range c.Instructions {
		if in.Op == OpParameter {
			count++
		}
	}
	if count != len(c.Params) {
		return fmt.Errorf("has %d parameter instructions but %d Params", count, len(c.Params))
	}
	for i, p := range c.Params {
		if p == nil {
			return fmt.Errorf("Params[%d] is nil", i)
		}
		if _, ok := index[p]; !ok || p.Op != OpParameter {
			return fmt.Errorf("Params[%d] (%s) is not a parameter instruction of this computation", i, p.Name)
		}
		if p.Attrs.ParameterNumber != int64(i) {
			return fmt.Errorf("parameter %s has number %d at position %d (numbers must be 0…n-1 in order)",
				p.Name, p.Attrs.ParameterNumber, i)
		}
	}
	return nil
}

// verifyInstructionShape checks the instruction against the op table and its shape
// rule.
func verifyInstructionShape(in *Instruction) error {
	shapes := make([]Shape, len(in.Operands))
	for i, op := range in.Operands {
		shapes[i] = op.Shape
	}
	return CheckShape(in.Op, shapes, &in.Attrs, in.Called, in.Shape)
}

// verifyFusions checks that every fusion instruction calls a flat computation. It
// runs after verifyModuleStructure, so every called computation is a non-nil member
// of the module; nil instructions are left to verifyComputation.
func verifyFusions(m *Module) error {
	for _, c := range m.Computations {
		for _, in := range c.Instructions {
			if in == nil || in.Op != OpFusion || len(in.Called) == 0 {
				continue
			}
			if err := verifyFusedComputation(in.Called[0]); err != nil {
				return fmt.Errorf("computation %q: fusion instruction %s: %w", c.Name, in.Name, err)
			}
		}
	}
	return nil
}

// verifyFusedComputation checks that a fused computation has no control flow and no
// nested fusion, and that its parameter numbers are 0…n-1 without gaps or repeats.
func verifyFusedComputation(fused *Computation) error {
	var params []*Instruction
	for _, in := range fused.Instructions {
		if in == nil {
			continue
		}
		switch in.Op {
		case OpWhile, OpConditional, OpCall, OpFusion:
			return fmt.Errorf("fused computation %q contains %v instruction %s (a fused computation must be flat: no while, conditional, call or fusion)",
				fused.Name, in.Op, in.Name)
		case OpParameter:
			params = append(params, in)
		}
	}
	byNumber := make(map[int64]*Instruction, len(params))
	for _, p := range params {
		n := p.Attrs.ParameterNumber
		if n < 0 || n >= int64(len(params)) {
			return fmt.Errorf("fused computation %q: parameter %s has number %d, but there are %d parameters (numbers must be 0…%d without gaps)",
				fused.Name, p.Name, n, len(params), len(params)-1)
		}
		if other, dup := byNumber[n]; dup {
			return fmt.Errorf("fused computation %q: parameters %s and %s both have number %d", fused.Name, other.Name, p.Name, n)
		}
		byNumber[n] = p
	}
	return nil
}
