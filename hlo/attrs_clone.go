package hlo

// Clone deep-copies the attributes (the literal is immutable by convention and
// shared), for passes that copy an instruction into another computation.
func (a Attributes) Clone() Attributes { return cloneAttributes(a) }

// CloneComputation deep-copies c: instructions and attributes, with the
// computations it calls shared. rename gives each copy's name (the computation's
// and every instruction's), so the copy can live in the same module.
func CloneComputation(c *Computation, rename func(string) string) *Computation {
	callees := map[*Computation]*Computation{}
	for _, in := range c.Instructions {
		for _, k := range in.Called {
			callees[k] = k
		}
	}
	nc := cloneComputation(c, callees)
	nc.Name = rename(c.Name)
	for _, in := range nc.Instructions {
		in.Name = rename(in.Name)
	}
	return nc
}
