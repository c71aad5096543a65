package hlo

import "fmt"

// Alone wraps one instruction as a computation of its own: a parameter per operand
// (named <instruction>.p<i>), and a copy of the instruction over them as the root,
// sharing its attributes and called computations. The planner lowers every kernel
// from it; `vkxla run -check` runs each kernel alone through it.
func Alone(in *Instruction) *Computation {
	c := &Computation{Name: in.Name}
	for i, op := range in.Operands {
		p := &Instruction{
			Name:  fmt.Sprintf("%s.p%d", in.Name, i),
			Op:    OpParameter,
			Shape: op.Shape,
			Attrs: Attributes{ParameterNumber: int64(i)},
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
