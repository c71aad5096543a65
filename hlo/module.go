package hlo

// Computation is a function: parameters, instructions in a valid (topological) order,
// and a root whose value it returns.
type Computation struct {
	Name string
	// Params are the parameter instructions in parameter-number order.
	Params []*Instruction
	// Instructions are all instructions (parameters included), operands before users.
	Instructions []*Instruction
	Root         *Instruction
}

// Renumber sets every instruction's ID to its index in Instructions.
func (c *Computation) Renumber() {
	for i, in := range c.Instructions {
		in.ID = i
	}
}

// Outputs is the values c returns: its root tuple's elements, or its root. The
// slice is the root's own operands when the root is a tuple: do not modify it.
func (c *Computation) Outputs() []*Instruction {
	if c.Root.Op == OpTuple {
		return c.Root.Operands
	}
	return []*Instruction{c.Root}
}

// ParamShapes returns the parameter shapes in order.
func (c *Computation) ParamShapes() []Shape {
	shapes := make([]Shape, len(c.Params))
	for i, p := range c.Params {
		shapes[i] = p.Shape
	}
	return shapes
}

// Users returns, for each instruction ID, the instructions that use it as an operand
// (each user listed once). Call Renumber first if IDs may be stale.
func (c *Computation) Users() [][]*Instruction {
	users := make([][]*Instruction, len(c.Instructions))
	for _, in := range c.Instructions {
		seen := map[*Instruction]bool{}
		for _, op := range in.Operands {
			if !seen[op] {
				seen[op] = true
				users[op.ID] = append(users[op.ID], in)
			}
		}
	}
	return users
}

// Module is a compilation unit: an entry computation and the computations it calls.
type Module struct {
	Name string
	// Computations lists every computation, callees before callers; the entry is last.
	Computations []*Computation
	Entry        *Computation
	// InputOutputAlias is the header's input_output_alias: entry outputs written
	// over parameters' storage (alias.go).
	InputOutputAlias []InputOutputAlias
}

// Computation returns the computation with the given name, or nil.
func (m *Module) Computation(name string) *Computation {
	for _, c := range m.Computations {
		if c.Name == name {
			return c
		}
	}
	return nil
}
